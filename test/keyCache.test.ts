import { createConnection, createServer, type AddressInfo, type Socket } from 'node:net';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthChangeListener, KeyCache, listenerApplicationName } from '../src/auth/keyCache.js';
import type { KeyRow } from '../src/auth/principal.js';
import { pgClientConfig } from '../src/db/orm.js';
import { startTestApp, type TestApp } from './support/app.js';
import { tenant } from './support/factories.js';
import { spawnService, type ServiceProcess } from './support/processes.js';
import { until } from './support/wait.js';

// Keys are cached per process; on a shared PostgreSQL, changes made through one process must reach
// the others (LISTEN/NOTIFY). In one process (embedded) the auth tests cover the same changes.
const multiProcess = Boolean(process.env.DATABASE_URL);

let app: TestApp;
let other: ServiceProcess;
beforeAll(async () => {
  if (!multiProcess) return;
  app = await startTestApp();
  other = await spawnService({ DATABASE_URL: process.env.DATABASE_URL!, ADMIN_TOKEN: app.adminToken });
}, 120_000);
afterAll(async () => {
  await other?.stop();
  await app?.close();
});

const LIST = '/api/v1/workspaces/-/changelog';
async function call(base: string, key: string): Promise<{ status: number; code?: string }> {
  const res = await fetch(`${base}${LIST}`, { headers: { authorization: `Bearer ${key}` } });
  const body = (await res.json()) as { error?: { code: string } };
  return { status: res.status, code: body.error?.code };
}

/**
 * Milliseconds until `probe` returns `want`. A change must arrive by notification: polled for 10 s
 * at most, a third of the 30 s after which a cached key is re-read anyway.
 */
async function arrives(probe: () => Promise<unknown>, want: unknown): Promise<number> {
  const started = Date.now();
  await until(async () => JSON.stringify(await probe()) === JSON.stringify(want), `the answer ${JSON.stringify(want)}`, 10_000, 10);
  return Date.now() - started;
}

describe.skipIf(!multiProcess)('key cache across processes (PostgreSQL)', () => {
  it('stops honouring a key revoked through another process by notification', async () => {
    const t = await tenant(app);
    expect(await call(other.url, t.key)).toEqual({ status: 200, code: undefined });
    expect(await call(other.url, t.key)).toEqual({ status: 200, code: undefined }); // now from the other process's cache
    await app.gql('mutation($id: ID!) { revokeAgentKey(id: $id) { id } }', { id: t.keyId });
    const ms = await arrives(() => call(other.url, t.key), { status: 401, code: 'unauthorized' });
    console.log(`key cache: a revocation reached the other process after ${ms} ms`);
  });

  it('applies an organization change to keys another process has cached', async () => {
    const t = await tenant(app, { role: 'owner' });
    expect((await call(other.url, t.key)).status).toBe(200);
    await app.gql('mutation($id: ID!) { updateOrganization(id: $id, input: { requireTwoFactor: true }) { id } }', { id: t.org.id });
    await arrives(() => call(other.url, t.key), { status: 403, code: 'two_factor_required' });
  });

  it('uses no cached key while it cannot hear changes, and caches again once it can', async () => {
    const t = await tenant(app);
    const db = app.server.orm.em.fork().getConnection();
    // The listeners of this file's two processes only (other files and databases share the server).
    const ours = [listenerApplicationName(process.pid), listenerApplicationName(other.child.pid)];
    const listening = async () =>
      (await db.execute('select count(*)::int as n from pg_stat_activity where application_name in (?, ?)', ours))[0].n as number;
    await until(async () => (await listening()) === 2, 'both listeners');
    expect((await call(other.url, t.key)).status).toBe(200);
    // Cut both listening connections, then revoke behind the service's back (no notification).
    const mark = other.outputMark();
    const cut = await db.execute(`select pg_terminate_backend(pid) from pg_stat_activity where application_name in (?, ?)`, ours);
    expect(cut).toHaveLength(2);
    await other.waitForOutput(/auth change listener lost its connection/, mark);
    await db.execute('update agent_keys set revoked_at = now() where id = ?', [t.keyId]);
    expect(await call(other.url, t.key)).toEqual({ status: 401, code: 'unauthorized' });
    // The listeners come back by themselves (after about a second) and announce nothing missed.
    await until(async () => (await listening()) === 2, 'both listeners back');
    const fresh = await tenant(app);
    expect((await call(other.url, fresh.key)).status).toBe(200);
    await app.gql('mutation($id: ID!) { revokeAgentKey(id: $id) { id } }', { id: fresh.keyId });
    await arrives(() => call(other.url, fresh.key), { status: 401, code: 'unauthorized' });
  });
});

/** A TCP relay to the PostgreSQL server that can stop passing bytes without closing anything (a dead network path). */
async function blackholeRelay(target: URL) {
  let dead = false;
  const sockets: Socket[] = [];
  const server = createServer((inbound) => {
    const outbound = createConnection({ host: target.hostname, port: Number(target.port || 5432) });
    sockets.push(inbound, outbound);
    inbound.on('data', (chunk) => dead || outbound.write(chunk));
    outbound.on('data', (chunk) => dead || inbound.write(chunk));
    for (const s of [inbound, outbound]) s.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(target);
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as AddressInfo).port);
  return {
    url: url.toString(),
    blackhole: () => (dead = true),
    close: () => {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}

describe.skipIf(!multiProcess)('key cache while the listening connection silently dies (PostgreSQL)', () => {
  it('stops using cached keys within the heartbeat when the connection stops answering without an error', async () => {
    const relay = await blackholeRelay(new URL(process.env.DATABASE_DIRECT_URL || process.env.DATABASE_URL!));
    // Entries never age out here: only the heartbeat noticing the silence can empty the cache.
    const cache = new KeyCache(false, 3_600_000);
    const listener = new AuthChangeListener(pgClientConfig({ clientUrl: relay.url }), cache, pino({ level: 'silent' }));
    try {
      await listener.start();
      const row = { id: 'k' } as KeyRow;
      cache.set('digest', row, cache.stamp);
      expect(cache.get('digest')).toBe(row); // listening: the cache is on
      relay.blackhole(); // no error, no close: only silence
      const started = Date.now();
      await until(() => cache.get('digest') === undefined, 'the heartbeat to switch the cache off', 20_000, 100);
      console.log(`key cache: a silently dead listener was noticed after ${Date.now() - started} ms`);
    } finally {
      await listener.close();
      relay.close();
      cache.close();
    }
  }, 30_000);
});
