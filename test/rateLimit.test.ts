import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PostgresRateLimiter } from '../src/rateLimit.js';
import { startTestApp, type TestApp } from './support/app.js';
import { createKey, tenant } from './support/factories.js';
import { spawnService, type ServiceProcess } from './support/processes.js';
import { until } from './support/wait.js';

// With DATABASE_URL the counter lives in PostgreSQL and the limit must hold across processes.
// A one-hour window keeps a window boundary from falling inside a test.
const multiProcess = Boolean(process.env.DATABASE_URL);
const MAX = 30;

let app: TestApp;
const services: ServiceProcess[] = [];
beforeAll(async () => {
  app = await startTestApp({ embeddingWorker: false, webhookDispatcher: false, rateLimit: { max: MAX, windowSeconds: 3600 } });
  if (multiProcess) {
    const env = {
      DATABASE_URL: process.env.DATABASE_URL!,
      ADMIN_TOKEN: app.adminToken,
      RATE_LIMIT_MAX: String(MAX),
      RATE_LIMIT_WINDOW_S: '3600',
      EMBEDDINGS: 'off',
    };
    services.push(...(await Promise.all([spawnService(env), spawnService(env)])));
  }
}, 120_000);
// Windows are aligned to the clock: a test that counts exactly must not straddle the hour.
beforeEach(async () => {
  const toEdge = 3600_000 - (Date.now() % 3600_000);
  if (toEdge < 20_000) await new Promise((r) => setTimeout(r, toEdge + 100));
}, 30_000);
afterAll(async () => {
  await Promise.all(services.map((s) => s.stop()));
  await app?.close();
});

/** GET the changelog list (any key may read it) from a service at `base`. */
const listChangelog = (base: string, key: string) =>
  fetch(`${base}/api/v1/workspaces/-/changelog`, { headers: { authorization: `Bearer ${key}` } });

/** The stored counts of a key's rate-limit windows. */
const counts = async (keyId: string) =>
  (await app.server.orm.em.fork().getConnection().execute('select count from rate_limit_counters where key = ?', [keyId])).map((r: any) =>
    Number(r.count),
  );

describe(`rate limit (${multiProcess ? '2 processes on PostgreSQL' : 'embedded, in memory'})`, () => {
  it(`lets exactly RATE_LIMIT_MAX of 2 × ${MAX} concurrent requests through`, async () => {
    const t = await tenant(app);
    const bases = multiProcess ? services.map((s) => s.url) : [app.url, app.url];
    const results = await Promise.all(
      Array.from({ length: 2 * MAX }, (_, i) =>
        listChangelog(bases[i % 2], t.key).then(async (r) => ({
          status: r.status,
          retryAfter: r.headers.get('retry-after'),
          body: await r.json(),
        })),
      ),
    );
    const ok = results.filter((r) => r.status === 200).length;
    const limited = results.filter((r) => r.status === 429);
    console.log(
      `rate limit: ${results.length} concurrent requests over ${multiProcess ? 2 : 1} process(es), ${ok} × 200, ${limited.length} × 429`,
    );
    expect(ok).toBe(MAX);
    expect(limited).toHaveLength(MAX);
    for (const r of limited) {
      expect(Number(r.retryAfter)).toBeGreaterThanOrEqual(1);
      expect(r.body.error).toMatchObject({ code: 'rate_limited', status: 429 });
    }
  }, 60_000);

  it('counts only usable keys: requests with a revoked key are 401 and not counted', async () => {
    const t = await tenant(app);
    const other = await createKey(app, t.member.id, { permissions: ['changelog.read'], workspaceId: t.workspace.id });
    const get = (key: string) => listChangelog(app.url, key);
    expect((await get(other.key)).headers.get('ratelimit')).toMatch(new RegExp(`^"default";r=${MAX - 1};t=\\d+$`));
    expect((await get(other.key)).headers.get('ratelimit')).toMatch(new RegExp(`^"default";r=${MAX - 2};t=\\d+$`));
    await app.gql('mutation($id: ID!) { revokeAgentKey(id: $id) { id } }', { id: other.id });
    for (let i = 0; i < 3; i++) expect((await get(other.key)).status).toBe(401);
    if (multiProcess) {
      // On PostgreSQL the lookup and the count are one statement: the revoked key's counter stays at 2.
      expect(await counts(other.id)).toEqual([2]);
    }
  });

  it('counts GraphQL calls with an agent key too', async () => {
    const t = await tenant(app);
    for (let i = 0; i < MAX; i++) await app.gql('{ changelogEntries(workspace: "-") { items { id } } }', {}, t.key);
    const res = await fetch(`${app.url}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBeTruthy();
    expect((await res.json()).errors[0].extensions.code).toBe('rate_limited');
  });
});

// With a larger limit each process takes several requests at a time from the shared window (a
// lease) and answers from it without a round trip; the limit must hold exactly all the same.
describe.skipIf(!multiProcess)('rate-limit leases (2 processes on PostgreSQL)', () => {
  const LIMIT = 240;
  const leased: ServiceProcess[] = [];
  beforeAll(async () => {
    const env = {
      DATABASE_URL: process.env.DATABASE_URL!,
      ADMIN_TOKEN: app.adminToken,
      RATE_LIMIT_MAX: String(LIMIT),
      RATE_LIMIT_WINDOW_S: '3600',
      EMBEDDINGS: 'off',
    };
    leased.push(...(await Promise.all([spawnService(env), spawnService(env)])));
  }, 120_000);
  afterAll(async () => {
    await Promise.all(leased.map((s) => s.stop()));
  });

  it('never lets more than the limit through, and every request of it is usable in the end', async () => {
    const t = await tenant(app);
    const get = (i: number) => listChangelog(leased[i % 2].url, t.key).then((r) => r.status);
    const counted = async () => (await counts(t.keyId))[0];
    // A burst well over the limit, in waves of 40 concurrent requests.
    let ok = 0;
    for (let i = 0; i < 400; i += 40)
      ok += (await Promise.all(Array.from({ length: 40 }, (_, j) => get(i + j)))).filter((s) => s === 200).length;
    expect(ok).toBeLessThanOrEqual(LIMIT);
    expect(await counted()).toBeLessThanOrEqual(LIMIT);
    const inBurst = ok;
    // Requests a process took but did not use go back to the window after a second of idleness;
    // keep asking both processes (pausing when both refuse) until nothing more is granted.
    for (let idleRounds = 0; idleRounds < 2;) {
      const statuses = await Promise.all([get(0), get(1)]);
      const granted = statuses.filter((s) => s === 200).length;
      ok += granted;
      if (granted) idleRounds = 0;
      else {
        idleRounds++;
        await new Promise((r) => setTimeout(r, 1300));
      }
    }
    console.log(`rate-limit leases: ${inBurst} granted in the burst of 400, ${ok} of ${LIMIT} in the end, over 2 processes`);
    expect(ok).toBe(LIMIT);
    expect(await counted()).toBe(LIMIT);
  }, 60_000);
});

// A busy key's next lease is asked for while a quarter of the current one is left: its requests
// keep being answered from the lease during that round trip instead of all waiting for it.
describe.skipIf(!multiProcess)('rate-limit lease refill (PostgreSQL)', () => {
  it("asks for a busy key's next lease before the current one runs out", async () => {
    const ROUND_TRIP_MS = 40;
    const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 2 });
    // The real counter, reached through a slow network: every statement takes ROUND_TRIP_MS more.
    const slow = {
      query: async (text: string, values: unknown[]) => {
        await new Promise((r) => setTimeout(r, ROUND_TRIP_MS));
        return pool.query(text, values);
      },
    } as unknown as pg.Pool;
    const limiter = new PostgresRateLimiter(slow, 1_000_000, 3600);
    const key = `refill-${randomUUID()}`;
    const started = performance.now();
    const waits: { at: number; ms: number }[] = [];
    try {
      // 20 clients, each sending its next request 5 ms after the last answer, for 3 s.
      await Promise.all(
        Array.from({ length: 20 }, async () => {
          while (performance.now() - started < 3000) {
            const at = performance.now();
            expect((await limiter.hit(key)).allowed).toBe(true);
            waits.push({ at: at - started, ms: performance.now() - at });
            await new Promise((r) => setTimeout(r, 5));
          }
        }),
      );
    } finally {
      await limiter.close();
      await pool.end();
    }
    // Past the first leases (which grow from one request to about a second of traffic), no request waits for the database.
    const late = waits.filter((w) => w.at > 1500);
    const stalled = late.filter((w) => w.ms >= ROUND_TRIP_MS - 5).length;
    console.log(`rate-limit refill: ${waits.length} requests, ${late.length} after 1.5 s, ${stalled} of them waited for a grant`);
    expect(late.length).toBeGreaterThan(1000);
    expect(stalled).toBe(0);
    // Every request answered was counted in the database (a lease may hold a few more, given back when idle).
    const [counted] = (
      await app.server.orm.em.fork().getConnection().execute('select count from rate_limit_counters where key = ?', [key])
    ).map((r: any) => Number(r.count));
    expect(counted).toBeGreaterThanOrEqual(waits.length);
  }, 30_000);
});

// Old windows are deleted by each process's sweeper. A process configured with a shorter window
// (a rolling change of RATE_LIMIT_WINDOW_S, or another suite on the same database) must delete only
// windows that have ended, never the live row of a longer one.
describe.skipIf(!multiProcess)('rate-limit window cleanup (PostgreSQL)', () => {
  it('deletes ended windows only, by their own end, whatever window length the sweeping process uses', async () => {
    const short = await spawnService({
      DATABASE_URL: process.env.DATABASE_URL!,
      ADMIN_TOKEN: app.adminToken,
      RATE_LIMIT_MAX: '1000',
      RATE_LIMIT_WINDOW_S: '1',
      EMBEDDINGS: 'off',
    });
    try {
      const long = await tenant(app);
      const quick = await tenant(app);
      for (let i = 0; i < 3; i++) expect((await listChangelog(services[0].url, long.key)).status).toBe(200);
      expect((await listChangelog(short.url, quick.key)).status).toBe(200);
      expect(await counts(long.keyId)).toEqual([3]);
      expect(await counts(quick.keyId)).toEqual([1]);
      // The one-second process sweeps twice a second and purges once per (one-second) window: once
      // its pass has deleted the ended short window, the live hour-long one must still be there.
      await until(async () => (await counts(quick.keyId)).length === 0, 'the ended one-second window to be swept');
      expect(await counts(long.keyId)).toEqual([3]);
      expect((await listChangelog(services[1].url, long.key)).headers.get('ratelimit')).toMatch(
        new RegExp(`^"default";r=${MAX - 4};t=\\d+$`),
      );
    } finally {
      await short.stop();
    }
  }, 60_000);
});

describe('rate-limit window rollover', () => {
  it('refuses past the limit until the next window begins, which starts a fresh count', async () => {
    const quick = await startTestApp({ rateLimit: { max: 3, windowSeconds: 2 } });
    try {
      const t = await tenant(quick);
      const get = () => quick.api('GET', '/api/v1/workspaces/-/changelog', { key: t.key });
      // Windows are aligned to the clock: begin in the first half of one, so four requests share it.
      await until(() => Date.now() % 2000 < 500, 'the start of a two-second window', 5_000, 5);
      const statuses = [];
      for (let i = 0; i < 4; i++) statuses.push(await get());
      expect(statuses.map((r) => r.status)).toEqual([200, 200, 200, 429]);
      expect(Number(statuses[3].headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(Number(statuses[3].headers.get('retry-after'))).toBeLessThanOrEqual(2);
      const fresh = await until(async () => {
        const res = await get();
        return res.status === 200 ? res : null;
      }, 'the next window');
      expect(fresh.headers.get('ratelimit')).toMatch(/^"default";r=2;t=[12]$/);
    } finally {
      await quick.close();
    }
  });
});
