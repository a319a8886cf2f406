import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { createKey, tenant, type Tenant } from './support/factories.js';
import { PG_BIN, startReplicaPair, type ReplicaPair } from './support/replica.js';
import { until } from './support/wait.js';

// A private primary and a streaming replica cloned from it by pg_basebackup; the app reads from the
// replica (DATABASE_READ_URL) where its caller's own writes are already replayed. Required on CI.
const MAX_LAG_S = 4;
const METRICS = 'replica_metrics_token_0123456789';
let pair: ReplicaPair | undefined;
let app: TestApp;
beforeAll(async () => {
  if (!PG_BIN) return;
  pair = await startReplicaPair();
  app = await startTestApp({
    databaseUrl: pair.primaryUrl,
    databaseDirectUrl: pair.primaryUrl,
    databaseReadUrl: pair.replicaUrl,
    replicaMaxLagSeconds: MAX_LAG_S,
    metricsToken: METRICS,
  });
}, 180_000);
afterAll(async () => {
  await app?.close();
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
async function reader(t: Tenant): Promise<string> {
  return (await createKey(app, t.member.id, { permissions: ['memory.read'], workspaceId: t.workspace.id })).key;
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
  }, 60_000);

  it('sends nothing that writes to the replica: a GET that also writes (a note read touches accessedAt) answers 200', async () => {
    const t = await tenant(app);
    expect((await put(t.key, 'x')).status).toBe(200);
    const other = await reader(t);
    await until(async () => (await paths(other)).includes('x'), 'the replica to replay the note', 10_000, 50);
    await new Promise((r) => setTimeout(r, 1100)); // past accessedAt's 1-second resolution, so the read writes
    const read = await app.api('GET', `${W}/memory/note?path=x`, { key: other });
    expect(read.status).toBe(200);
    expect(read.body.path).toBe('x');
  });
});
