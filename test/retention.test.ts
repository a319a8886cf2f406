import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enforceRetention, RETENTION_BATCH } from '../src/app/background.js';
import { freshEm } from '../src/db/orm.js';
import { sql } from '../src/db/sql.js';
import { startTestApp, type TestApp } from './support/app.js';
import { tenant, type Tenant } from './support/factories.js';
import { ownDatabase } from './support/ownDatabase.js';

// A database of its own on PostgreSQL: the webhook cursor is moved here, and other files' old rows must not be counted.
let own: Awaited<ReturnType<typeof ownDatabase>>;
let app: TestApp;
beforeAll(async () => {
  own = await ownDatabase('wks_i35_retention');
  app = await startTestApp({ databaseUrl: own?.url, databaseDirectUrl: own?.directUrl });
}, 120_000);
afterAll(async () => {
  await app?.close();
  await own?.drop();
});

const W = '/api/v1/workspaces/-';
const db = () => freshEm(app.server.orm);
const count = async (table: string, t: Tenant) =>
  (await sql<{ n: number }>(db(), `select count(*)::int as n from ${table} where workspace_id = ?`, [t.workspace.id]))[0].n;

async function writeSome(t: Tenant, n: number): Promise<void> {
  for (let i = 0; i < n; i++)
    expect((await app.api('POST', `${W}/sections`, { key: t.key, body: { label: `S${i}`, key: `s${i}` } })).status).toBe(201);
}

describe('retention of the event table and the search log (housekeeping)', () => {
  it('deletes events older than the setting only once the webhook fan-out has passed them, and keeps recent ones', async () => {
    const t = await tenant(app);
    await writeSome(t, 3);
    const all = await count('events', t);
    expect(all).toBeGreaterThanOrEqual(3);
    // Two of them are made old; the rest stay recent.
    await sql(
      db(),
      `update events set created_at = now() - interval '40 days' where id in (select id from events where workspace_id = ? order by id limit 2)`,
      [t.workspace.id],
    );
    // Not yet fanned out to webhooks: kept whatever their age.
    expect((await enforceRetention(db(), { eventsDays: 30, searchLogDays: 0 })).events).toBe(0);
    await app.server.dispatchWebhooks();
    // A longer retention keeps them; 0 keeps everything for ever.
    expect((await enforceRetention(db(), { eventsDays: 60, searchLogDays: 0 })).events).toBe(0);
    expect((await enforceRetention(db(), { eventsDays: 0, searchLogDays: 0 })).events).toBe(0);
    expect((await enforceRetention(db(), { eventsDays: 30, searchLogDays: 0 })).events).toBe(2);
    expect(await count('events', t)).toBe(all - 2);
    expect((await enforceRetention(db(), { eventsDays: 30, searchLogDays: 0 })).events).toBe(0);
  });

  it('deletes old searches in batches of RETENTION_BATCH rows, a bounded number per pass, with their embedding queue entries', async () => {
    const t = await tenant(app);
    expect((await app.api('GET', `${W}/search?q=${encodeURIComponent('nothing matches this')}`, { key: t.key })).status).toBe(200);
    const old = RETENTION_BATCH * 2 + 500;
    await sql(
      db(),
      `insert into search_log (workspace_id, agent_key_id, query, result_count, ranking, duration_ms, created_at)
       select ?, null, 'q' || g, 0, 'fulltext', 1, now() - interval '100 days' from generate_series(1, ?) g`,
      [t.workspace.id, old],
    );
    const queued = await sql<{ item_id: number }>(db(), `select id as item_id from search_log where workspace_id = ? order by id limit 1`, [
      t.workspace.id,
    ]);
    await sql(
      db(),
      `insert into embedding_queue (item_type, item_id, workspace_id, enqueued_at, attempts) select 'search', id, workspace_id, now(), 0
         from search_log where workspace_id = ? and created_at < now() - interval '99 days' on conflict do nothing`,
      [t.workspace.id],
    );
    expect(queued.length).toBe(1);
    const before = await count('search_log', t);
    // One pass of two batches leaves the rest for the next pass.
    expect((await enforceRetention(db(), { eventsDays: 0, searchLogDays: 90 }, 2)).searches).toBe(RETENTION_BATCH * 2);
    expect((await enforceRetention(db(), { eventsDays: 0, searchLogDays: 90 }, 2)).searches).toBe(500);
    expect(await count('search_log', t)).toBe(before - old);
    const left = await sql<{ n: number }>(
      db(),
      `select count(*)::int as n from embedding_queue q where q.item_type = 'search' and q.workspace_id = ? and not exists (select 1 from search_log s where s.id = q.item_id)`,
      [t.workspace.id],
    );
    expect(left[0].n).toBe(0);
    // The recent search is still in the analytics.
    expect(await count('search_log', t)).toBe(before - old);
    expect(before - old).toBeGreaterThanOrEqual(1);
  });
});
