import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { createKey, tenant } from './support/factories.js';
import { spawnService, type ServiceProcess } from './support/processes.js';

// With DATABASE_URL the counter lives in PostgreSQL and the limit must hold across processes.
// A one-hour window keeps a window boundary from falling inside a test.
const multiProcess = Boolean(process.env.DATABASE_URL);
const MAX = 30;

let app: TestApp;
const services: ServiceProcess[] = [];
beforeAll(async () => {
  app = await startTestApp({ embeddingWorker: false, webhookDispatcher: false, rateLimit: { max: MAX, windowSeconds: 3600 } });
  if (multiProcess) {
    const env = { DATABASE_URL: process.env.DATABASE_URL!, ADMIN_TOKEN: app.adminToken, RATE_LIMIT_MAX: String(MAX), RATE_LIMIT_WINDOW_S: '3600', EMBEDDINGS: 'off' };
    services.push(...(await Promise.all([spawnService(env), spawnService(env)])));
  }
}, 120_000);
afterAll(async () => {
  await Promise.all(services.map((s) => s.stop()));
  await app?.close();
});

describe(`rate limit (${multiProcess ? '2 processes on PostgreSQL' : 'embedded, in memory'})`, () => {
  it(`lets exactly RATE_LIMIT_MAX of 2 × ${MAX} concurrent requests through`, async () => {
    const t = await tenant(app);
    const bases = multiProcess ? services.map((s) => s.url) : [app.url, app.url];
    const results = await Promise.all(
      Array.from({ length: 2 * MAX }, (_, i) =>
        fetch(`${bases[i % 2]}/api/v1/workspaces/-/changelog`, { headers: { authorization: `Bearer ${t.key}` } }).then(async (r) => ({ status: r.status, retryAfter: r.headers.get('retry-after'), body: await r.json() })),
      ),
    );
    const ok = results.filter((r) => r.status === 200).length;
    const limited = results.filter((r) => r.status === 429);
    console.log(`rate limit: ${results.length} concurrent requests over ${multiProcess ? 2 : 1} process(es), ${ok} × 200, ${limited.length} × 429`);
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
    const get = (key: string) => fetch(`${app.url}/api/v1/workspaces/-/changelog`, { headers: { authorization: `Bearer ${key}` } });
    expect((await get(other.key)).headers.get('ratelimit')).toMatch(new RegExp(`^"default";r=${MAX - 1};t=\\d+$`));
    expect((await get(other.key)).headers.get('ratelimit')).toMatch(new RegExp(`^"default";r=${MAX - 2};t=\\d+$`));
    await app.gql('mutation($id: ID!) { revokeAgentKey(id: $id) { id } }', { id: other.id });
    for (let i = 0; i < 3; i++) expect((await get(other.key)).status).toBe(401);
    if (multiProcess) {
      // On PostgreSQL the lookup and the count are one statement: the revoked key's counter stays at 2.
      const rows = await app.server.orm.em.fork().getConnection().execute('select count from rate_limit_counters where key = ?', [other.id]);
      expect(rows.map((r: any) => Number(r.count))).toEqual([2]);
    }
  });

  it('counts GraphQL calls with an agent key too', async () => {
    const t = await tenant(app);
    for (let i = 0; i < MAX; i++) await app.gql('{ changelogEntries(workspace: "-") { items { id } } }', {}, t.key);
    const res = await fetch(`${app.url}/graphql`, { method: 'POST', headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ __typename }' }) });
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBeTruthy();
    expect((await res.json()).errors[0].extensions.code).toBe('rate_limited');
  });
});
