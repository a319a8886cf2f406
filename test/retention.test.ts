import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enforceRetention, RETENTION_BATCH, RETENTION_LOCK } from '../src/app/background.js';
import { freshEm } from '../src/db/orm.js';
import { sql } from '../src/db/sql.js';
import { PASS_WITHOUT_HOOKS } from '../src/store/events.js';
import { DELETE_OLD_EVENTS, DELETE_OLD_SEARCHES } from '../src/store/retention.js';
import { fanOutPast, startTestApp, type TestApp } from './support/app.js';
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
    await fanOutPast(app, t.workspace.id);
    // A longer retention keeps them; 0 keeps everything for ever.
    expect((await enforceRetention(db(), { eventsDays: 60, searchLogDays: 0 })).events).toBe(0);
    expect((await enforceRetention(db(), { eventsDays: 0, searchLogDays: 0 })).events).toBe(0);
    expect((await enforceRetention(db(), { eventsDays: 30, searchLogDays: 0 })).events).toBe(2);
    expect(await count('events', t)).toBe(all - 2);
    expect((await enforceRetention(db(), { eventsDays: 30, searchLogDays: 0 })).events).toBe(0);
  });

  it('deletes old searches in batches of RETENTION_BATCH rows, one batch a pass without time budget, with their embedding queue entries', async () => {
    const t = await tenant(app);
    expect((await app.api('GET', `${W}/search?q=${encodeURIComponent('nothing matches this')}`, { key: t.key })).status).toBe(200);
    const old = RETENTION_BATCH * 2 + 500;
    await oldSearches(t, old, 100);
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
    // With no time left after the first batch, a pass deletes one batch and leaves the rest for the next pass.
    expect(await enforceRetention(db(), { eventsDays: 0, searchLogDays: 90 }, 0)).toEqual({
      events: 0,
      searches: RETENTION_BATCH,
      activity: 0,
      removals: 0,
      busy: false,
    });
    expect((await enforceRetention(db(), { eventsDays: 0, searchLogDays: 90 })).searches).toBe(RETENTION_BATCH + 500);
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

  it('finds each batch through an index on created_at, not by reading the table', async () => {
    // Whatever the table's size, a batch must be able to start at the cutoff: an index condition on created_at.
    for (const [statement, table] of [
      [DELETE_OLD_EVENTS, 'events'],
      [DELETE_OLD_SEARCHES, 'search_log'],
    ] as const) {
      const plan = await db().transactional(async (trx) => {
        await sql(trx, 'set local enable_seqscan = off');
        const rows = await sql<Record<string, string>>(trx, `explain ${statement}`, { days: 30, batch: RETENTION_BATCH });
        return rows.map((r) => Object.values(r)[0]).join('\n');
      });
      // A scan of the migration's created_at index, bounded by the cutoff (the workspace indexes also
      // hold created_at, but second: scanning one of them whole is the plan this index replaced).
      expect(plan, plan).toMatch(new RegExp(`(Index Scan(?: Backward)? using|Bitmap Index Scan on) ${table}_created_at_idx\\b`));
      expect(plan, plan).toContain('Index Cond: (created_at < ');
      expect(plan, plan).not.toMatch(new RegExp(`Seq Scan on ${table}\\b`));
    }
  });

  it("starts the webhook fan-out's pass at its cursor: a condition of the (xid, id) index scan, not a filter over every event", async () => {
    const rows = await sql<Record<string, string>>(db(), `explain ${PASS_WITHOUT_HOOKS(500)}`, [RETENTION_LOCK + 1]);
    const plan = rows.map((r) => Object.values(r)[0]).join('\n');
    // The cursor's two values are the plan's parameters ($1 on PostgreSQL 15, (InitPlan 2).col1 on 17).
    expect(plan, plan).toMatch(/Index Cond: \(\(ROW\(xid, id\) > ROW\(/);
    expect(plan, plan).not.toMatch(/Filter: \(ROW\(events\.xid, events\.id\) > /);
  });

  it('deletes everything past the cutoff in one pass (more than 20 batches), keeping recent rows and events not fanned out', async () => {
    const t = await tenant(app);
    const old = RETENTION_BATCH * 20 + 700; // one pass used to delete at most 20 batches of each table
    const insertEvents = (n: number, age: string) =>
      sql(
        db(),
        `insert into events (workspace_id, actor, action, target_type, created_at)
         select ?, 'system', 'retention.test', 'test', now() - ?::interval from generate_series(1, ?)`,
        [t.workspace.id, age, n],
      );
    await insertEvents(old + 1, '400 days');
    await insertEvents(3, '1 day');
    await oldSearches(t, old, 100);
    await oldSearches(t, 4, 1);
    // The fan-out passes all of them (no webhook here wants them) ...
    await sql(
      db(),
      `update event_cursors set last_xid = pg_current_xact_id(), last_id = (select max(id) from events) where name = 'webhooks'`,
    );
    // ... but one old event still has a pending delivery, and old events written after are not fanned out yet.
    await sql(
      db(),
      `insert into webhook_deliveries (event_id, event_type, webhook_id, status, attempts, next_attempt_at, created_at, event_seq)
       select 'msg_retention_test', 'retention.test', gen_random_uuid(), 'pending', 0, now(), now(), min(id) from events
        where workspace_id = ? and action = 'retention.test'`,
      [t.workspace.id],
    );
    await insertEvents(5, '400 days');
    // Counts of who used the workspace are kept as long as the search log: one day past it goes, one within it stays.
    await sql(
      db(),
      `insert into workspace_activity (workspace_id, day, door, caller, reads, writes)
       values (?, current_date - 91, 'mcp', 'agent_key', 5, 1), (?, current_date - 89, 'console', 'member', 2, 0)`,
      [t.workspace.id, t.workspace.id],
    );
    // Search removals are kept a day: two older ones go, the fresh one stays.
    await sql(
      db(),
      `insert into search_removals (workspace_id, item_type, item_id, removed_at)
       values (?, 'article', -1, now() - interval '25 hours'), (?, 'note', -2, now() - interval '3 days'), (?, 'note', -3, now())`,
      [t.workspace.id, t.workspace.id, t.workspace.id],
    );
    const started = performance.now();
    // A budget a loaded test machine cannot run out of (the default is 5 s): every batch is done in this one pass.
    const pass = await enforceRetention(db(), { eventsDays: 365, searchLogDays: 90 }, 120_000);
    console.log(`retention pass: ${pass.events} events and ${pass.searches} searches in ${Math.round(performance.now() - started)} ms`);
    expect(pass).toEqual({ events: old, searches: old, activity: 1, removals: 2, busy: false });
    expect(await sql(db(), 'select item_id from search_removals where workspace_id = ? and item_id < 0', [t.workspace.id])).toEqual([
      { item_id: -3 },
    ]);
    const activityKept = await sql<{ day: string }>(
      db(),
      `select to_char(day, 'YYYY-MM-DD') as day from workspace_activity where workspace_id = ? and day < current_date - 80`,
      [t.workspace.id],
    );
    expect(activityKept).toHaveLength(1);
    const kept = await sql<{ n: number }>(
      db(),
      `select count(*)::int as n from events where workspace_id = ? and action = 'retention.test'`,
      [t.workspace.id],
    );
    expect(kept[0].n).toBe(3 + 5 + 1);
    expect(await count('search_log', t)).toBe(4);
    expect(await enforceRetention(db(), { eventsDays: 365, searchLogDays: 90 })).toEqual({
      events: 0,
      searches: 0,
      activity: 0,
      removals: 0,
      busy: false,
    });
    await sql(db(), `delete from webhook_deliveries where event_id = 'msg_retention_test'`);
  }, 180_000);

  // The embedded database serves every connection from one session and runs other connections' statements only once an
  // open transaction ends: a second process holding the lock cannot be staged there.
  it.skipIf(!process.env.DATABASE_URL)('ends its pass when another process holds the retention lock, deleting nothing', async () => {
    const t = await tenant(app);
    await oldSearches(t, 10, 100);
    const pass = await db().transactional(async (trx) => {
      await sql(trx, 'select pg_advisory_xact_lock(?)', [RETENTION_LOCK]);
      return enforceRetention(db(), { eventsDays: 0, searchLogDays: 90 });
    });
    expect(pass).toEqual({ events: 0, searches: 0, activity: 0, removals: 0, busy: true });
    expect(await count('search_log', t)).toBe(10);
    expect(await enforceRetention(db(), { eventsDays: 0, searchLogDays: 90 })).toEqual({
      events: 0,
      searches: 10,
      activity: 0,
      removals: 0,
      busy: false,
    });
  });
});

/** `n` logged searches of `t`'s workspace, `days` days old. */
async function oldSearches(t: Tenant, n: number, days: number): Promise<void> {
  await sql(
    db(),
    `insert into search_log (workspace_id, agent_key_id, query, result_count, ranking, duration_ms, created_at)
     select ?, null, 'q' || g, 0, 'fulltext', 1, now() - make_interval(days => ?) from generate_series(1, ?) g`,
    [t.workspace.id, days, n],
  );
}
