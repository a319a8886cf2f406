import { createConnection, createServer, type AddressInfo, type Socket } from 'node:net';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthChangeListener, KeyCache, LISTENER_APPLICATION_NAME } from '../src/auth/keyCache.js';
import type { KeyRow } from '../src/auth/principal.js';
import { pgClientConfig } from '../src/db/orm.js';
import { startTestApp, type TestApp } from './support/app.js';
import { tenant } from './support/factories.js';
import { spawnService, type ServiceProcess } from './support/processes.js';

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

/** Milliseconds until `probe` returns `want` (polled every 10 ms, at most 5 s). */
async function until(probe: () => Promise<unknown>, want: unknown): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (JSON.stringify(await probe()) === JSON.stringify(want)) return Date.now() - started;
    if (Date.now() - started > 5000) throw new Error(`still not ${JSON.stringify(want)} after 5 s`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe.skipIf(!multiProcess)('key cache across processes (PostgreSQL)', () => {
  it('stops honouring a key revoked through another process within moments', async () => {
    const t = await tenant(app);
    expect(await call(other.url, t.key)).toEqual({ status: 200, code: undefined });
    expect(await call(other.url, t.key)).toEqual({ status: 200, code: undefined }); // now from the other process's cache
    await app.gql('mutation($id: ID!) { revokeAgentKey(id: $id) { id } }', { id: t.keyId });
    const ms = await until(() => call(other.url, t.key), { status: 401, code: 'unauthorized' });
    console.log(`key cache: a revocation reached the other process after ${ms} ms`);
    expect(ms).toBeLessThan(1000);
  });

  it('applies an organization change to keys another process has cached', async () => {
    const t = await tenant(app, { role: 'owner' });
    expect((await call(other.url, t.key)).status).toBe(200);
    await app.gql('mutation($id: ID!) { updateOrganization(id: $id, input: { requireTwoFactor: true }) { id } }', { id: t.org.id });
    expect(await until(() => call(other.url, t.key), { status: 403, code: 'two_factor_required' })).toBeLessThan(1000);
  });

  it('uses no cached key while it cannot hear changes, and caches again once it can', async () => {
    const t = await tenant(app);
    const db = app.server.orm.em.fork().getConnection();
    expect((await call(other.url, t.key)).status).toBe(200);
    // Cut every process's listening connection, then revoke behind the service's back (no notification).
    const cut = await db.execute(
      `select pg_terminate_backend(pid) from pg_stat_activity where application_name = ? and pid <> pg_backend_pid()`,
      [LISTENER_APPLICATION_NAME],
    );
    expect(cut.length).toBeGreaterThanOrEqual(2);
    await new Promise((r) => setTimeout(r, 200));
    await db.execute('update agent_keys set revoked_at = now() where id = ?', [t.keyId]);
    expect(await call(other.url, t.key)).toEqual({ status: 401, code: 'unauthorized' });
    // The listeners come back by themselves (after about a second) and announce nothing missed.
    await until(
      async () =>
        (await db.execute('select count(*)::int as n from pg_stat_activity where application_name = ?', [LISTENER_APPLICATION_NAME]))[0]
          .n >= 2,
      true,
    );
    const fresh = await tenant(app);
    expect((await call(other.url, fresh.key)).status).toBe(200);
    await app.gql('mutation($id: ID!) { revokeAgentKey(id: $id) { id } }', { id: fresh.keyId });
    expect(await until(() => call(other.url, fresh.key), { status: 401, code: 'unauthorized' })).toBeLessThan(1000);
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
    const relay = await blackholeRelay(new URL(process.env.DATABASE_URL!));
    const cache = new KeyCache(false);
    const listener = new AuthChangeListener(pgClientConfig({ clientUrl: relay.url }), cache, pino({ level: 'silent' }));
    try {
      await listener.start();
      const row = { id: 'k' } as KeyRow;
      cache.set('digest', row, cache.stamp);
      expect(cache.get('digest')).toBe(row); // listening: the cache is on
      relay.blackhole(); // no error, no close: only silence
      const started = Date.now();
      while (cache.get('digest') && Date.now() - started < 15_000) await new Promise((r) => setTimeout(r, 100));
      const ms = Date.now() - started;
      console.log(`key cache: a silently dead listener was noticed after ${ms} ms`);
      expect(cache.get('digest')).toBeUndefined();
      expect(ms).toBeLessThan(7000); // heartbeat every 3 s, answered within 1.5 s
    } finally {
      await listener.close();
      relay.close();
      cache.close();
    }
  }, 30_000);
});
