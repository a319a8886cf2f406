import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { createKey, tenant, type Tenant } from './support/factories.js';
import { PG_BIN, startReplicaPair, type ReplicaPair } from './support/replica.js';
import { queryOnce } from './support/ownDatabase.js';
import { personGql, signIn } from './support/signIn.js';
import { until } from './support/wait.js';

// A private primary and a streaming replica cloned from it by pg_basebackup; the app reads from the
// replica (DATABASE_READ_URL) where its caller's own writes are already replayed. Required on CI.
// Two apps on the pair: one whose lag limit is passed on purpose by the test that needs it, and one
// whose limit no test reaches (so a slow machine cannot turn a replica read into a primary one).
const MAX_LAG_S = 4;
const METRICS = 'replica_metrics_token_0123456789';
let pair: ReplicaPair | undefined;
let app: TestApp;
let strict: TestApp;
beforeAll(async () => {
  if (!PG_BIN) return;
  pair = await startReplicaPair();
  const on = { databaseUrl: pair.primaryUrl, databaseDirectUrl: pair.primaryUrl, databaseReadUrl: pair.replicaUrl, metricsToken: METRICS };
  app = await startTestApp({ ...on, replicaMaxLagSeconds: 300 });
  strict = await startTestApp({ ...on, replicaMaxLagSeconds: MAX_LAG_S });
}, 180_000);
afterAll(async () => {
  await app?.close();
  await strict?.close();
  pair?.stop();
});

const W = '/api/v1/workspaces/-';
const put = (key: string, path: string) =>
  app.api('PUT', `${W}/memory/note`, { key, body: { path, body: `body of ${path}`, kind: 'note', links: [], tags: [] } });
const paths = async (key: string): Promise<string[]> => {
  const res = await app.api('GET', `${W}/memory`, { key });
  expect(res.status).toBe(200);
  return res.body.map((e: { path: string }) => e.path);
};
const routed = () => ({ ...app.server.reads!.routed });

/** A second key of the same workspace that never writes: its reads may lag. */
async function readerKey(t: Tenant): Promise<{ key: string; id: string }> {
  return createKey(app, t.member.id, { permissions: ['memory.read', 'article.read'], workspaceId: t.workspace.id });
}
const reader = async (t: Tenant): Promise<string> => (await readerKey(t)).key;

/** How many write positions are recorded for a caller (0 or 1): a key's id, or `member:<id>`. */
async function recordedWrites(caller: string): Promise<number> {
  const name = caller.includes(':') ? caller : `key:${caller}`;
  const [{ n }] = await queryOnce<{ n: number }>(pair!.primaryUrl, `select count(*)::int as n from caller_writes where caller = '${name}'`);
  return n;
}

/** A GraphQL request over HTTP (POST), with the operation to run named when the document has several. */
async function graphql(key: string, query: string, variables: Record<string, unknown> = {}, operationName?: string) {
  const res = await fetch(`${app.server.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ query, variables, operationName }),
  });
  const json = (await res.json()) as { data?: any; errors?: unknown[] };
  expect(json.errors).toBeUndefined();
  return json.data;
}
// One document, two operations: which one runs (operationName) decides whether the request reads.
const NOTES_DOCUMENT = `
  query Notes { memoryNotes(workspace: "-") { items { path } } }
  mutation Put($input: PutMemoryNoteInput!) { putMemoryNote(workspace: "-", input: $input) { path } }`;
const gqlPaths = async (key: string): Promise<string[]> =>
  (await graphql(key, NOTES_DOCUMENT, {}, 'Notes')).memoryNotes.items.map((e: { path: string }) => e.path);
const gqlPut = (key: string, path: string) =>
  graphql(key, NOTES_DOCUMENT, { input: { path, body: `body of ${path}`, kind: 'note', links: [], tags: [] } }, 'Put');

async function mcpClient(key: string): Promise<Client> {
  const client = new Client({ name: 'replica-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${app.server.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }),
  );
  return client;
}
const mcpPaths = async (client: Client): Promise<string[]> => {
  const list = await client.callTool({ name: 'memory_list_notes', arguments: {} });
  expect(list.isError).toBeFalsy();
  return (list.structuredContent as { items: { path: string }[] }).items.map((e) => e.path);
};

/** Runs `body` with the replica's WAL replay paused (and the router aware of it), then resumes and waits for the replica to catch up. */
async function replayPaused(body: () => Promise<void>): Promise<void> {
  await pair!.onReplica('select pg_wal_replay_pause()');
  try {
    await until(() => app.server.reads!.replayPaused, 'the router to see replay paused', 5_000, 50);
    await body();
  } finally {
    await pair!.onReplica('select pg_wal_replay_resume()');
  }
  await until(() => app.server.reads!.lagSeconds === 0, 'the replica to catch up after resuming', 10_000, 50);
}

describe.skipIf(!PG_BIN && !process.env.CI)('read replica (DATABASE_READ_URL, streaming from a pg_basebackup clone)', () => {
  it('serves reads from the replica, and a writer reads its own writes at once', async () => {
    expect(PG_BIN, 'pg_basebackup and pg_ctl are required on CI').toBeDefined();
    const t = await tenant(app);
    const other = await reader(t);
    await until(() => app.server.reads!.lagSeconds === 0, 'the replica to catch up', 10_000, 50);
    for (let i = 0; i < 5; i++) {
      expect((await put(t.key, `n${i}`)).status).toBe(200);
      // Right after its write, the writer's list has it: the replica had not replayed it, or had.
      expect(await paths(t.key)).toContain(`n${i}`);
    }
    const before = routed();
    await until(async () => (await paths(other)).length === 5, 'the replica to show the notes to another key', 10_000, 50);
    expect(routed().replica).toBeGreaterThan(before.replica);
  });

  it('with replay paused: the writer still reads its writes (from the primary), another key reads the replica until it lags too far', async () => {
    // This test is about the lag limit: the helpers above talk to the app whose limit is MAX_LAG_S.
    const lenient = app;
    app = strict;
    try {
      await readsUntilTheLagLimit();
    } finally {
      app = lenient;
    }
  }, 60_000);

  it('a signed-in person reads their own GraphQL write at once (from the primary) while replay is paused', async () => {
    const t = await tenant(app);
    const [{ email }] = await queryOnce<{ email: string }>(pair!.primaryUrl, `select email from members where id = '${t.member.id}'`);
    const person = await signIn(app.server.url, app.adminToken, email);
    const PUT =
      'mutation($w: String!) { putMemoryNote(workspace: $w, input: { path: "by-a-person", body: "b", kind: "note", links: [], tags: [] }) { path } }';
    const LIST = 'query($w: String!) { memoryNotes(workspace: $w) { items { path } } }';
    await until(() => app.server.reads!.lagSeconds === 0, 'the replica to catch up', 10_000, 50);
    await replayPaused(async () => {
      const before = routed();
      expect((await personGql(app.server.url, person, PUT, { w: t.workspace.id })).errors).toBeUndefined();
      const listed = await personGql(app.server.url, person, LIST, { w: t.workspace.id });
      expect(listed.data.memoryNotes.items.map((e: { path: string }) => e.path)).toEqual(['by-a-person']);
      expect(routed().primary_own_write).toBeGreaterThan(before.primary_own_write);
      // Another caller of the workspace still reads the replica, which has not replayed it.
      expect(await paths(await reader(t))).toEqual([]);
    });
    expect(await recordedWrites(`member:${t.member.id}`)).toBe(1);
  }, 60_000);

  async function readsUntilTheLagLimit(): Promise<void> {
    const t = await tenant(app);
    const other = await reader(t);
    expect((await put(t.key, 'before')).status).toBe(200);
    await until(async () => (await paths(other)).includes('before'), 'the replica to replay the first note', 10_000, 50);
    await pair!.onReplica('select pg_wal_replay_pause()');
    try {
      await until(() => app.server.reads!.replayPaused, 'the router to see replay paused', 5_000, 50);
      const before = routed();
      expect((await put(t.key, 'during')).status).toBe(200);
      expect(await paths(t.key)).toEqual(['before', 'during']);
      expect((await app.api('GET', `${W}/memory/note?path=during`, { key: t.key })).status).toBe(200);
      expect(routed().primary_own_write).toBeGreaterThanOrEqual(before.primary_own_write + 2);
      // Another caller may read the replica's older state while the lag is within REPLICA_MAX_LAG_S...
      expect(await paths(other)).toEqual(['before']);
      expect(routed().replica).toBeGreaterThan(before.replica);
      // ...and the primary's once the replica is further behind than that.
      await until(() => (app.server.reads!.lagSeconds ?? 0) > MAX_LAG_S, 'the lag to pass REPLICA_MAX_LAG_S', 15_000, 100);
      expect(await paths(other)).toEqual(['before', 'during']);
      expect(routed().primary_lag).toBeGreaterThan(before.primary_lag);
      const metrics = await (await fetch(`${app.server.url}/metrics`, { headers: { authorization: `Bearer ${METRICS}` } })).text();
      expect(metrics).toMatch(/^wks_replica_replay_paused 1$/m);
      expect(Number(/^wks_replica_lag_seconds (\S+)$/m.exec(metrics)?.[1])).toBeGreaterThan(MAX_LAG_S);
      for (const target of ['replica', 'primary_own_write', 'primary_lag'])
        expect(Number(new RegExp(`^wks_read_requests_total\\{target="${target}"\\} (\\d+)$`, 'm').exec(metrics)?.[1])).toBeGreaterThan(0);
    } finally {
      await pair!.onReplica('select pg_wal_replay_resume()');
    }
    await until(() => app.server.reads!.lagSeconds === 0, 'the replica to catch up after resuming', 10_000, 50);
    const after = routed();
    expect(await paths(other)).toEqual(['before', 'during']);
    expect(routed().replica).toBe(after.replica + 1);
  }

  it("a note GET is a plain read: with replay paused another key's GET is served by the replica (stale) and counted there, the writer's own fresh", async () => {
    const t = await tenant(app);
    expect((await put(t.key, 'n')).status).toBe(200);
    const other = await reader(t);
    await until(async () => (await paths(other)).includes('n'), 'the replica to replay the note', 10_000, 50);
    await new Promise((r) => setTimeout(r, 1100)); // past accessedAt's 1-second resolution: the reads below are accesses
    await replayPaused(async () => {
      const changed = await app.api('PUT', `${W}/memory/note`, {
        key: t.key,
        body: { path: 'n', body: 'changed', kind: 'note', links: [], tags: [] },
      });
      expect(changed.status).toBe(200);
      const before = routed();
      const stale = await app.api('GET', `${W}/memory/note?path=n`, { key: other });
      expect(stale.status).toBe(200);
      expect([stale.body.version, stale.body.body]).toEqual([1, 'body of n']);
      // Counted where its statements went: the replica, with nothing sent to the primary.
      expect(routed().replica).toBe(before.replica + 1);
      expect(routed().primary_write).toBe(before.primary_write);
      const fresh = await app.api('GET', `${W}/memory/note?path=n`, { key: t.key });
      expect([fresh.body.version, fresh.body.body]).toEqual([2, 'changed']);
      expect(routed().primary_own_write).toBe(before.primary_own_write + 1);
      // The read's access time is written to the primary apart from the read.
      await app.server.flushNoteAccess();
      const [row] = await queryOnce<{ at: string }>(
        pair!.primaryUrl,
        `select a.accessed_at::text as at from memory_note_access a join memory_notes n on n.id = a.note_id where n.workspace_id = '${t.workspace.id}' and n.path = 'n'`,
      );
      expect(Date.parse(row.at)).toBe(Date.parse(fresh.body.accessedAt));
    });
  });

  it("a note-GET-only load from keys that never write is served by the replica (≥ 90 %): the metric and the primary's statement counts agree", async () => {
    const t = await tenant(app);
    const NOTES = 10;
    for (let i = 0; i < NOTES; i++) expect((await put(t.key, `load/${i}`)).status).toBe(200);
    const readers = [await reader(t), await reader(t)];
    await until(async () => (await paths(readers[0])).length === NOTES, 'the replica to replay the notes', 10_000, 50);
    await queryOnce(pair!.primaryUrl, 'create extension if not exists pg_stat_statements');
    await queryOnce(pair!.primaryUrl, 'select pg_stat_statements_reset()');
    const before = routed();
    const GETS = 200;
    for (let i = 0; i < GETS; i += 10) {
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, j) => app.api('GET', `${W}/memory/note?path=load/${(i + j) % NOTES}`, { key: readers[j % 2] })),
      );
      for (const res of answers) expect(res.status).toBe(200);
    }
    const after = routed();
    const delta = Object.fromEntries(Object.keys(after).map((k) => [k, after[k as keyof typeof after] - before[k as keyof typeof before]]));
    expect(Object.values(delta).reduce((a, b) => a + b, 0)).toBe(GETS);
    expect(delta.replica / GETS).toBeGreaterThanOrEqual(0.9);
    // The note's read statement, as the primary counted it: only the GETs the metric says went there.
    const [{ calls }] = await queryOnce<{ calls: number }>(
      pair!.primaryUrl,
      `select coalesce(sum(calls), 0)::int as calls from pg_stat_statements
        where query like 'select % from memory_notes n where n.workspace_id = $1 and n.path = $2'`,
    );
    expect(calls).toBe(GETS - delta.replica);
  });

  it('serves GraphQL queries, MCP read tool calls and the EntityManager reads of a GET from the replica, recording no write for them', async () => {
    const t = await tenant(app);
    const other = await readerKey(t);
    expect((await put(t.key, 'before')).status).toBe(200);
    await until(async () => (await paths(other.key)).includes('before'), 'the replica to replay the first note', 10_000, 50);
    const client = await mcpClient(other.key); // initialize and its notification: reads too
    try {
      await replayPaused(async () => {
        expect((await put(t.key, 'during')).status).toBe(200);
        const created = await app.api('POST', `${W}/sections`, { key: t.key, body: { label: 'During replay pause' } });
        expect(created.status).toBe(201);
        const before = routed();
        // The other key reads the replica, which has not replayed the writer's note and section.
        expect(await gqlPaths(other.key)).toEqual(['before']);
        expect(await mcpPaths(client)).toEqual(['before']);
        // The section list is read through the request's EntityManager (not its statement target).
        const sections = await app.api('GET', `${W}/sections`, { key: other.key });
        expect(sections.status).toBe(200);
        expect(sections.body.map((s: { key: string }) => s.key)).not.toContain(created.body.key);
        expect(routed().replica).toBeGreaterThanOrEqual(before.replica + 3);
        // The writer sees both at once (from the primary).
        expect(await gqlPaths(t.key)).toEqual(['before', 'during']);
        const own = await app.api('GET', `${W}/sections`, { key: t.key });
        expect(own.body.map((s: { key: string }) => s.key)).toContain(created.body.key);
      });
    } finally {
      await client.close();
    }
    expect(await gqlPaths(other.key)).toEqual(['before', 'during']);
    expect(await recordedWrites(other.id)).toBe(0);
  }, 60_000);

  it('with replay paused: a GraphQL mutation, or an MCP write tool, then a read by the same key reads its own write (from the primary)', async () => {
    const t = await tenant(app);
    expect((await put(t.key, 'first')).status).toBe(200);
    await until(() => app.server.reads!.lagSeconds === 0, 'the replica to catch up', 10_000, 50);
    const client = await mcpClient(t.key);
    try {
      // Once its writes are replayed, the writer's reads go to the replica too.
      let before = routed();
      await until(async () => (await gqlPaths(t.key)).length === 1 && routed().replica > before.replica, 'a replica read', 10_000, 50);
      await replayPaused(async () => {
        before = routed();
        await gqlPut(t.key, 'by-graphql');
        expect(await gqlPaths(t.key)).toEqual(['by-graphql', 'first']);
        const written = await client.callTool({
          name: 'memory_put_note',
          arguments: { path: 'by-mcp', body: 'body of by-mcp', kind: 'note', links: [], tags: [] },
        });
        expect(written.isError).toBeFalsy();
        expect(await mcpPaths(client)).toEqual(['by-graphql', 'by-mcp', 'first']);
        expect(routed().primary_own_write).toBeGreaterThanOrEqual(before.primary_own_write + 2);
        expect(routed().replica).toBe(before.replica);
      });
    } finally {
      await client.close();
    }
    expect(await recordedWrites(t.keyId)).toBe(1);
  }, 60_000);
});
