import { writeFileSync } from 'node:fs';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { tenant } from './support/factories.js';
import { CLASSES, hashOf, hostileValue, type HostileClass } from './support/hostile.js';
import { introspect, rootFields } from './support/introspect.js';
import { graphqlTargets, mcpTargets, restTargets, type Lane, type Target } from './support/sweepDoors.js';

// A generated sweep over every door, in the manner of Schemathesis: from what the service serves
// (the OpenAPI document, GraphQL introspection, MCP's tools/list) every field of every operation
// gets one value of each hostile class (support/hostile.ts), plus more chosen by the seed, with
// valid values everywhere else. No answer may be a 5xx or an `internal`, every refusal must be a
// well-formed envelope (REST answers are checked against the document too), a refused request may
// write nothing, and the service may log no internal error (support/internalErrors.ts).
// Reproduce a run with SWEEP_SEED=<seed> (printed with every failure and in the summary).

const SEED = Number(process.env.SWEEP_SEED ?? 59_059);
/** Cases per field beyond one of each class. */
const EXTRA = 2;
/** Lanes run side by side, each on a tenant of its own, each sending one request at a time. */
const LANES = 4;

let app: TestApp;
let lanes: Lane[];
beforeAll(async () => {
  app = await startTestApp({ embeddingWorker: false });
  lanes = await Promise.all(Array.from({ length: LANES }, () => newLane(app)));
}, 120_000);
afterAll(async () => app?.close());

const W = '/api/v1/workspaces/-';

/** A tenant holding one object of every kind the operations name, so valid values reach the end of each operation. */
async function newLane(app: TestApp): Promise<Lane> {
  const t = await tenant(app, { plan: 'pro' });
  const call = async (method: string, path: string, body?: unknown, expected = [200, 201, 202]) => {
    const res = await app.api(method, `${W}${path}`, { key: t.key, body });
    expect(expected, `${method} ${path}: ${res.text}`).toContain(res.status);
    return res.body;
  };
  await call('POST', '/sections', { label: 'Docs', key: 'docs' });
  await call('POST', '/articles', { title: 'Shared', section: 'docs', markdown: 'x' });
  await call('PUT', '/memory/note', { path: 'fuzz/note', body: 'B', kind: 'note', links: [], tags: [] });
  const entry = await call('POST', '/changelog', { title: 'T', markdown: 'M', status: 'draft', tags: [], published_at: null });
  const proposal = await call('POST', '/proposals', { article: 'shared', markdown: 'M2', summary: 'S' });
  const spec = {
    openapi: '3.0.3',
    info: { title: 'x', version: '1' },
    paths: { '/ping': { get: { operationId: 'ping', responses: { '200': { description: 'pong' } } } } },
  };
  await call('PUT', '/openapi', { spec });
  const pages = (await call('GET', '/openapi/pages')) as { slug: string }[];
  await call('POST', '/content-gaps', { question: 'How do I rotate the signing key?' });
  await app.server.drainEmbeddings(t.workspace.id);
  const groups = await app.gql('query($w: ID!) { contentGapGroups(workspaceId: $w, includeResolved: true) { id } }', { w: t.workspace.id });
  return {
    key: t.key,
    organizationId: t.org.id,
    workspaceId: t.workspace.id,
    entryId: entry.id,
    proposalId: proposal.id,
    groupId: groups.data.contentGapGroups[0]?.id ?? 1,
    pageSlug: pages[0].slug,
  };
}

/** What a lane's workspace holds (a refused request must leave every count as it was), in one statement. */
const TABLES = [
  'events',
  'changelog_entries',
  'memory_notes',
  'articles',
  'sections',
  'proposals',
  'uploads',
  'content_gap_reports',
  'api_specs',
  'search_log',
];
async function holdings(lane: Lane): Promise<string> {
  const conn = app.server.orm.em.fork().getConnection();
  const columns = TABLES.map((table) => `(select count(*)::int from ${table} where workspace_id = ?) as ${table}`).join(', ');
  const [row] = await conn.execute(
    `select ${columns}`,
    TABLES.map(() => lane.workspaceId),
  );
  return JSON.stringify(row);
}

/** One request of the sweep: a target, a class, the seed that picked the value, and the value. */
interface Case {
  target: Target;
  klass: HostileClass;
  seed: number;
  value: unknown;
}

/** Every field gets one value of each class, and EXTRA more of classes the seed picks; each case's seed derives from the run's. */
function casesOf(targets: Target[]): Case[] {
  const cases: Case[] = [];
  for (const target of targets) {
    const name = `${target.door} ${target.operation} ${target.field}`;
    const extra = fc.sample(fc.constantFrom(...CLASSES), { seed: (SEED ^ hashOf(name)) >>> 0, numRuns: EXTRA });
    [...CLASSES, ...extra].forEach((klass, i) => {
      const seed = (SEED ^ hashOf(`${name} ${klass} ${i}`)) >>> 0;
      cases.push({ target, klass, seed, value: hostileValue(klass, seed) });
    });
  }
  return cases;
}

/** A failure as a reader reproduces it: the seed, the case, the request and the answer. */
function report(c: Case, request: string, status: number, body: unknown, problem: string): string {
  return (
    `SWEEP_SEED=${SEED} ${c.target.door} ${c.target.operation} ${c.target.field} [${c.klass}, case seed ${c.seed}]: ${problem}\n` +
    `    request: ${request.slice(0, 500)}\n    answer: ${status} ${JSON.stringify(body)?.slice(0, 400)}`
  );
}

/** Runs one lane's cases one at a time; a refused call of an operation that writes must leave the workspace as it was. */
async function runLane(lane: Lane, cases: Case[], failures: string[], tally: Map<string, number>): Promise<void> {
  let held = await holdings(lane);
  for (const c of cases) {
    let exchange;
    try {
      exchange = await c.target.send(app, lane, c.value, c.seed);
    } catch (error) {
      failures.push(report(c, `(not sent: ${(error as Error).message.slice(0, 600)})`, 0, null, 'the request or its answer failed'));
      continue;
    }
    const { refused, problem } = c.target.judge(exchange);
    const bucket = `${c.target.door} ${exchange.status}${refused ? '' : ' accepted'}`;
    tally.set(bucket, (tally.get(bucket) ?? 0) + 1);
    if (problem) failures.push(report(c, exchange.request, exchange.status, exchange.body, problem));
    if (!c.target.writes) continue;
    const now = await holdings(lane);
    if (refused && now !== held)
      failures.push(report(c, exchange.request, exchange.status, exchange.body, `a refused request wrote: ${held} → ${now}`));
    held = now;
  }
}

describe('the generated sweep over every door', () => {
  it('answers every hostile value in every field of every REST operation, GraphQL root field and MCP tool without a 5xx, writing nothing when it refuses', async () => {
    const doc = await (await fetch(`${app.url}/api/v1/openapi.json`)).json();
    const schema = await introspect(app, lanes[0].key);
    const listed = await fetch(`${app.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${lanes[0].key}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    const tools = ((await listed.json()) as any).result.tools as {
      name: string;
      inputSchema: any;
      annotations: { readOnlyHint: boolean };
    }[];
    const readOnly = new Set(tools.filter((t) => t.annotations.readOnlyHint).map((t) => t.name));
    const targets = [...restTargets(doc), ...graphqlTargets(schema, app.adminToken), ...mcpTargets(tools, readOnly)];
    const cases = casesOf(targets);
    // Every operation of every door is swept.
    const swept = (door: string) => new Set(cases.filter((c) => c.target.door === door).map((c) => c.target.operation));
    expect(swept('rest').size).toBe(Object.values(doc.paths).flatMap((ops: any) => Object.keys(ops)).length);
    expect([...swept('graphql')].sort()).toEqual(
      rootFields(schema)
        .filter((f) => f.args.length)
        .map((f) => f.name)
        .sort(),
    );
    expect([...swept('mcp')].sort()).toEqual(tools.map((t) => t.name).sort());
    expect(cases.length).toBeGreaterThanOrEqual(5000);

    const failures: string[] = [];
    const started = performance.now();
    const tally = new Map<string, number>();
    await Promise.all(
      lanes.map((lane, i) =>
        runLane(
          lane,
          cases.filter((_, n) => n % LANES === i),
          failures,
          tally,
        ),
      ),
    );
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    const byDoor = ['rest', 'graphql', 'mcp'].map((d) => `${d} ${cases.filter((c) => c.target.door === d).length}`).join(', ');
    console.log(`sweep: ${cases.length} requests (${byDoor}) in ${seconds} s, seed ${SEED}`);
    console.log(
      `sweep answers: ${[...tally]
        .sort()
        .map(([k, n]) => `${k}: ${n}`)
        .join(', ')}`,
    );
    // Every failure, for a long list: SWEEP_REPORT=<file>.
    if (process.env.SWEEP_REPORT) writeFileSync(process.env.SWEEP_REPORT, failures.join('\n'));
    expect(failures.length, `${failures.length} failure(s):\n${failures.slice(0, 15).join('\n')}`).toBe(0);
  }, 600_000);
});
