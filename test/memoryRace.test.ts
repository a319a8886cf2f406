import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { tenant, type Tenant } from './support/factories.js';
import { spawnService, type ServiceProcess } from './support/processes.js';

// The quota must hold exactly when creates race, from several processes on a real PostgreSQL
// (on the embedded database, which one process owns, the race runs inside that process).
const multiProcess = Boolean(process.env.DATABASE_URL);

let app: TestApp;
const services: ServiceProcess[] = [];
beforeAll(async () => {
  app = await startTestApp();
  if (multiProcess) {
    const env = { DATABASE_URL: process.env.DATABASE_URL!, ADMIN_TOKEN: app.adminToken, RATE_LIMIT_MAX: '100000' };
    services.push(...(await Promise.all([spawnService(env), spawnService(env)])));
  }
}, 120_000);
afterAll(async () => {
  await Promise.all(services.map((s) => s.stop()));
  await app?.close();
});

const bases = () => (multiProcess ? services.map((s) => s.url) : [app.url, app.url]);

function putNote(base: string, t: Tenant, path: string) {
  return fetch(`${base}/api/v1/workspaces/-/memory/note`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ path, body: `race ${path}`, kind: 'note', links: [], tags: ['race'] }),
  }).then(async (res) => ({ status: res.status, body: await res.json() }));
}

async function stored(t: Tenant): Promise<{ notes: number; used: number }> {
  const conn = app.server.orm.em.fork().getConnection();
  const [{ notes }] = await conn.execute('select count(*)::int as notes from memory_notes where workspace_id = ?', [t.workspace.id]);
  const [usage] = await conn.execute('select used from memory_usage where workspace_id = ?', [t.workspace.id]);
  return { notes, used: usage?.used ?? 0 };
}

describe(`memory quota under concurrency (${multiProcess ? '2 service processes on PostgreSQL' : 'one process, embedded'})`, () => {
  it('at 195 used, 2 × 50 concurrent creates of new paths end at exactly 200 notes; every other answer is 409', async () => {
    const t = await tenant(app, { plan: 'free' });
    for (let i = 0; i < 195; i += 39) {
      await Promise.all(Array.from({ length: 39 }, (_, j) => putNote(app.url, t, `seed/${i + j}`).then((r) => expect(r.status).toBe(200))));
    }
    expect(await stored(t)).toEqual({ notes: 195, used: 195 });
    const [a, b] = bases();
    const results = await Promise.all([
      ...Array.from({ length: 50 }, (_, i) => putNote(a, t, `race/a${i}`)),
      ...Array.from({ length: 50 }, (_, i) => putNote(b, t, `race/b${i}`)),
    ]);
    const ok = results.filter((r) => r.status === 200).length;
    const refused = results.filter((r) => r.status === 409);
    console.log(`quota race: ${results.length} requests, ${ok} created, ${refused.length} × 409, final ${JSON.stringify(await stored(t))}`);
    expect(ok).toBe(5);
    expect(refused).toHaveLength(95);
    expect(refused.every((r) => r.body.error.code === 'memory_quota_exceeded' && r.body.error.details.limit === 200)).toBe(true);
    expect(await stored(t)).toEqual({ notes: 200, used: 200 });
  }, 120_000);

  it('20 concurrent PUTs of one new path create one note, counted once', async () => {
    const t = await tenant(app, { plan: 'free' });
    const [a, b] = bases();
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => putNote(i % 2 ? a : b, t, 'same/path')));
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
    expect(await stored(t)).toEqual({ notes: 1, used: 1 });
  }, 60_000);

  it('counts the notes when an organization moves from an unlimited plan to one with a quota', async () => {
    const t = await tenant(app, { plan: 'enterprise' });
    const [a, b] = bases();
    // Created from both processes under the unlimited plan, which keeps no count.
    for (let i = 0; i < 204; i += 51) {
      await Promise.all(
        Array.from({ length: 51 }, (_, j) => putNote(j % 2 ? a : b, t, `big/${i + j}`).then((r) => expect(r.status).toBe(200))),
      );
    }
    expect((await stored(t)).notes).toBe(204);
    await app.gql('mutation($id: ID!) { updateOrganization(id: $id, input: { plan: "free" }) { plan } }', { id: t.org.id });
    expect(await stored(t)).toEqual({ notes: 204, used: 204 });
    // Over the free quota now: no new path, updates still go through; deleting makes room for exactly that many.
    const over = await putNote(b, t, 'big/new');
    expect(over.status).toBe(409);
    expect(over.body.error.details).toMatchObject({ limit: 200, usage: 204, plan: 'free' });
    expect((await putNote(a, t, 'big/7')).status).toBe(200);
    for (let i = 0; i < 5; i++) {
      const del = await fetch(`${a}/api/v1/workspaces/-/memory/note?path=big/${i}`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${t.key}` },
      });
      expect(del.status).toBe(200);
    }
    expect((await putNote(b, t, 'big/new')).status).toBe(200);
    expect((await putNote(a, t, 'big/newer')).status).toBe(409);
    expect(await stored(t)).toEqual({ notes: 200, used: 200 });
  }, 120_000);
});
