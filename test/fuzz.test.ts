import fc from 'fast-check';
import { getNamedType, getNullableType, isListType, isNonNullType, type GraphQLInputType } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROUTES } from '../rest/routes/index.js';
import type { Route } from '../rest/routeDefinition.js';
import { startTestApp, type TestApp } from './support/app.js';
import { tenant, type Tenant } from './support/factories.js';
import { introspect, operationFor, rootFields, sampleValue } from './support/introspect.js';
import { SAMPLE_BODIES } from './support/samples.js';

// Walks every endpoint of the served contract with generated bad requests. Every answer must be a
// 4xx envelope that validates against the document (the test client checks that), never a 5xx,
// and nothing may change: audit trail and row counts stay as they were.
let app: TestApp;
let t: Tenant;
let sent = 0;
beforeAll(async () => {
  app = await startTestApp({ embeddingWorker: false });
  t = await tenant(app, { plan: 'pro' });
  // The objects the fuzzed ids point at must exist, or "changes nothing" is checked against nothing.
  const section = await app.api('POST', '/api/v1/workspaces/-/sections', { key: t.key, body: { label: 'Docs', key: 'docs' } });
  expect(section.status, section.text).toBe(201);
  const article = await app.api('POST', '/api/v1/workspaces/-/articles', {
    key: t.key,
    body: { title: 'Shared', section: 'docs', markdown: 'x' },
  });
  expect(article.status, article.text).toBe(201);
  expect(article.body.slug).toBe('shared');
});
afterAll(async () => {
  console.log(`fuzz: ${sent} bad requests sent`);
  await app?.close();
});

/** Row counts of the fuzzed workspace (other test files may write to a shared database meanwhile). */
async function snapshot(): Promise<string> {
  const conn = app.server.orm.em.fork().getConnection();
  const tables = [
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
  const counts = await Promise.all(
    tables.map(
      async (table) =>
        `${table}=${(await conn.execute(`select count(*)::int as n from ${table} where workspace_id = ?`, [t.workspace.id]))[0].n}`,
    ),
  );
  return counts.join(' ');
}

/** Bad {workspace} path values, sent as written (dot segments, encoded dots, bytes that are no id). */
const BAD_WORKSPACES = ['..', '%2e%2e', '.%2E', 'not-a-uuid', '00000000-0000-0000-0000-000000000000', 'x'.repeat(65), '%00', '%C3%A4'];

const wrongValue = fc.oneof(
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.integer(), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.integer(), { maxKeys: 2 }),
  fc.double(),
);
const deep = (n: number) => '['.repeat(n) + ']'.repeat(n);

type Bad = { path?: string; query?: string; body?: unknown; raw?: string | Uint8Array; contentType?: string };

/** Bad variants for a route; each is invalid by construction. */
function badRequests(route: Route): fc.Arbitrary<Bad> {
  const sample = SAMPLE_BODIES[route.name];
  const schema = route.body?.schema;
  const fields = schema ? Object.keys(schema.properties) : [];
  const required = (schema?.required as string[] | undefined) ?? [];
  const options: fc.Arbitrary<Bad>[] = [
    fc
      .constantFrom('limit=-1', 'limit=abc', 'cursor=%ff%fe', 'unknown_param=1', 'limit=1e9', 'limit=1&limit=2')
      .map((query) => ({ query })),
  ];
  if (schema && sample) {
    const typed = fields.filter((f) => (schema.properties[f] as { type?: unknown }).type !== undefined);
    if (typed.length)
      options.push(
        fc
          .tuple(fc.constantFrom(...typed), wrongValue)
          .filter(([f, v]) => !isValid(schema.properties[f], v))
          .map(([f, v]) => ({ body: { ...sample, [f]: v } })),
      );
    if (required.length)
      options.push(
        fc.constantFrom(...required).map((f) => ({ body: Object.fromEntries(Object.entries(sample).filter(([k]) => k !== f)) })),
      );
    options.push(
      fc
        .string({ minLength: 1, maxLength: 12 })
        .filter((k) => !fields.includes(k))
        .map((k) => ({ body: { ...sample, [k]: 1 } })),
    );
    options.push(
      fc.constantFrom<Bad>(
        { raw: JSON.stringify({ ...sample, [fields[0]]: 'x'.repeat(1024 * 1024 + 1) }) },
        { raw: deep(5000) },
        { raw: new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]) },
        { raw: '{"unterminated": ' },
        { raw: 'null' },
        { raw: '[]' },
        { raw: JSON.stringify(sample), contentType: 'text/plain' },
      ),
    );
  }
  return fc.oneof(...options);
}

/** The route's required query parameters with valid values (`path` and `q` always), so only the bad part is bad. */
function validQuery(route: Route): string {
  return Object.entries(route.query ?? {})
    .filter(([name, def]) => def.required || name === 'path' || name === 'q')
    .map(([name, def]) => {
      const value =
        name === 'path'
          ? 'fuzz/note'
          : name === 'id' && route.name === 'fetch'
            ? 'article:shared' // a document id has a form of its own (`article:<slug>`, …)
            : (def.schema as { type?: string }).type === 'integer'
              ? '1'
              : 'x';
      return `${name}=${value}`;
    })
    .join('&');
}

/** The answer names the workspace: not found, or invalid with `workspace` among the fields. */
function workspaceRefusal(error: { code: string; message: string; details?: unknown }): boolean {
  if (error.code === 'not_found') return error.message === 'Workspace was not found.';
  return error.code === 'invalid_request' && JSON.stringify(error.details ?? []).includes('"field":"workspace"');
}

function isValid(schema: unknown, value: unknown): boolean {
  const type = (schema as { type?: string | string[] }).type;
  const types = Array.isArray(type) ? type : [type];
  if (value === null) return types.includes('null');
  if (Array.isArray(value)) return types.includes('array') && value.length === 0;
  if (typeof value === 'number') return types.includes('integer') ? Number.isInteger(value) : types.includes('number');
  return types.includes(typeof value as string);
}

describe('input fuzzing from the contract', () => {
  /** Sends one bad request for the route and checks its answer (a 4xx envelope, naming the workspace for a bad {workspace}). */
  async function sendBad(route: Route, bad: Bad): Promise<true> {
    const path = route.path
      .replace('{workspace}', bad.path ?? '-')
      .replace('{id}', '1')
      .replace('{version}', '1')
      .replace('{group}', '1')
      .replace('{slug}', 'shared');
    const query = [validQuery(route), bad.query].filter(Boolean).join('&');
    const url = `/api/v1${path}${query ? `?${query}` : ''}`;
    const body = bad.raw !== undefined ? undefined : (bad.body ?? (route.body ? SAMPLE_BODIES[route.name] : undefined));
    const res =
      bad.raw !== undefined
        ? await fetch(`${app.url}${url}`, {
            method: route.method,
            headers: { authorization: `Bearer ${t.key}`, 'content-type': bad.contentType ?? 'application/json' },
            body: bad.raw as BodyInit,
          }).then(async (r) => ({ status: r.status, body: await r.json() }))
        : await app.api(route.method, url, { key: t.key, body, rawPath: true });
    sent++;
    const invalidInput = bad.path || bad.query || bad.body !== undefined || bad.raw !== undefined;
    if (!invalidInput) return true;
    const where = `${route.method} ${url} ${JSON.stringify(bad).slice(0, 200)} → ${JSON.stringify(res.body).slice(0, 300)}`;
    expect(res.status, where).toBeGreaterThanOrEqual(400);
    expect(res.status, where).toBeLessThan(500);
    expect(res.body.error.status).toBe(res.status);
    // A bad {workspace} value reaches the workspace lookup (sent raw, `..` is not resolved away).
    if (bad.path) expect(workspaceRefusal(res.body.error), where).toBe(true);
    expect(JSON.stringify(res.body)).not.toMatch(/\bat .*\.(ts|js):\d+/);
    return true;
  }

  it.each(ROUTES.filter((r) => !r.upload).map((r) => [r.name, r] as const))(
    '%s: bad requests get 4xx envelopes and change nothing',
    async (_name, route) => {
      const before = await snapshot();
      // Every bad workspace value once per route, then generated variants of everything else.
      for (const ws of BAD_WORKSPACES) await sendBad(route, { path: ws });
      await fc.assert(
        fc.asyncProperty(badRequests(route), (bad) => sendBad(route, bad)),
        { numRuns: 12, seed: 4242 },
      );
      expect(await snapshot()).toBe(before);
    },
    120_000,
  );

  it('bad multipart uploads get 4xx and store nothing', async () => {
    const before = await snapshot();
    const bodies: [BodyInit, string][] = [
      ['not multipart', 'text/plain'],
      [
        '--x\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\n\r\nnot an image\r\n--x--\r\n',
        'multipart/form-data; boundary=x',
      ],
      ['--x\r\nbroken', 'multipart/form-data; boundary=x'],
      ['', 'multipart/form-data; boundary=x'],
    ];
    for (const [body, type] of bodies) {
      const res = await fetch(`${app.url}/api/v1/workspaces/-/uploads`, {
        method: 'POST',
        headers: { authorization: `Bearer ${t.key}`, 'content-type': type },
        body,
      });
      sent++;
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
    }
    expect(await snapshot()).toBe(before);
  });
});

const CODES = new Set([
  'invalid_request',
  'unauthorized',
  'permission_denied',
  'plan_required',
  'two_factor_required',
  'not_found',
  'conflict',
  'memory_quota_exceeded',
  'precondition_failed',
  'payload_too_large',
  'rate_limited',
  'GRAPHQL_VALIDATION_FAILED',
  'GRAPHQL_PARSE_FAILED',
  'BAD_USER_INPUT',
]);

/** Values of the wrong type for an input of this type (each is refused by coercion or by the contract). */
function wrongValues(type: GraphQLInputType): unknown[] {
  const named = getNamedType(type).name;
  const out: unknown[] = [{ nested: { deep: [1, 2] } }];
  if (isNonNullType(type)) out.push(null);
  if (isListType(getNullableType(type)))
    out.push(
      'not a list',
      Array.from({ length: 1001 }, () => 'x'),
    );
  else if (['String', 'ID'].includes(named)) out.push(12, 'x'.repeat(300_000));
  else if (named === 'Int') out.push('seven', 2 ** 40, 1.5);
  else if (named === 'Boolean') out.push('yes');
  else if (named === 'DateTime') out.push('yesterday');
  return out;
}

describe('GraphQL fuzzing from introspection', () => {
  it('answers wrong types, nulls, over-long values, unknown arguments and bad workspaces of every root field with a coded 4xx, changing nothing', async () => {
    const schema = await introspect(app, t.key);
    const before = await snapshot();
    const named = { workspace: '-', path: 'fuzz/note', slug: 'shared', q: 'x', section: 'docs', kind: 'note' };
    const post = async (query: string, variables: Record<string, unknown>) => {
      const res = await fetch(`${app.url}/graphql`, {
        method: 'POST',
        headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ query, variables }),
      });
      sent++;
      return { status: res.status, body: (await res.json()) as { errors?: { extensions?: { code?: string } }[] } };
    };
    let checked = 0;
    for (const field of rootFields(schema)) {
      const query = operationFor(schema, field);
      const valid = Object.fromEntries(field.args.map((a) => [a.name, sampleValue(a.name, a.type, named)]));
      const variants: Record<string, unknown>[] = [];
      for (const arg of field.args) {
        for (const wrong of wrongValues(arg.type)) variants.push({ ...valid, [arg.name]: wrong });
        if (arg.name === 'workspace')
          for (const ws of ['..', '%2e%2e', 'not-a-uuid', '00000000-0000-0000-0000-000000000000', 'x'.repeat(65)])
            variants.push({ ...valid, workspace: ws });
      }
      for (const variables of variants) {
        const res = await post(query, variables);
        const where = `${field.name} ${JSON.stringify(variables).slice(0, 200)}`;
        expect(res.status, where).toBeLessThan(500);
        expect(res.body.errors?.length, where).toBeGreaterThan(0);
        expect(CODES.has(String(res.body.errors![0].extensions?.code)), `${where} → ${JSON.stringify(res.body.errors![0])}`).toBe(true);
        checked++;
      }
      const unknownArg = await post(
        query.replace(/\{ r: (\w+)/, '{ r: $1(colour: "red")').replace('(colour: "red")(', '(colour: "red", '),
        valid,
      );
      expect(unknownArg.status, field.name).toBe(400);
    }
    expect(checked).toBeGreaterThan(200);
    expect(await snapshot()).toBe(before);
  }, 180_000);
});

describe('MCP fuzzing from tools/list', () => {
  it('answers wrong types, unknown and missing arguments and bad workspaces of every tool with an envelope error, changing nothing', async () => {
    const post = async (message: unknown) => {
      const res = await fetch(`${app.url}/mcp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify(message),
      });
      sent++;
      return { status: res.status, body: (await res.json()) as any };
    };
    const tools = (await post({ jsonrpc: '2.0', id: 1, method: 'tools/list' })).body.result.tools as {
      name: string;
      inputSchema: { properties: Record<string, { type?: string | string[] }>; required?: string[] };
    }[];
    expect(tools.map((x) => x.name).sort()).toEqual(ROUTES.map((r) => r.name).sort());
    const before = await snapshot();
    for (const tool of tools) {
      const valid: Record<string, unknown> = { ...(SAMPLE_BODIES[tool.name] ?? {}) };
      if (tool.inputSchema.properties.path) valid.path = 'fuzz/note';
      if (tool.inputSchema.properties.q) valid.q = 'x';
      if (tool.inputSchema.properties.slug) valid.slug = 'shared';
      if (tool.inputSchema.properties.id) valid.id = 1;
      const variants: Record<string, unknown>[] = [{ ...valid, colour: 'red' }];
      for (const required of tool.inputSchema.required ?? [])
        variants.push(Object.fromEntries(Object.entries(valid).filter(([k]) => k !== required)));
      for (const [arg, schema] of Object.entries(tool.inputSchema.properties)) {
        const types = [schema.type].flat();
        variants.push({ ...valid, [arg]: types.includes('string') ? { not: 'a string' } : 'not the right type' });
      }
      for (const ws of ['..', 'not-a-uuid', 'x'.repeat(65)]) variants.push({ ...valid, workspace: ws });
      for (const args of variants) {
        const res = await post({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: tool.name, arguments: args } });
        const where = `${tool.name} ${JSON.stringify(args).slice(0, 200)}`;
        expect(res.status, where).toBe(200);
        expect(res.body.result?.isError, `${where} → ${JSON.stringify(res.body).slice(0, 300)}`).toBe(true);
        const envelopeError = res.body.result.structuredContent.error;
        expect(envelopeError.status, where).toBeGreaterThanOrEqual(400);
        expect(envelopeError.status, where).toBeLessThan(500);
      }
    }
    expect(await snapshot()).toBe(before);
  }, 180_000);
});
