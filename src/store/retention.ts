/** Statements of retention: deleting the oldest rows of the event table and of the search log, one small batch per statement. */
import { sql, type SqlTarget } from '../db/sql.js';

/**
 * Up to `:batch` events older than `:days` days, oldest first, deleted; how many. The batch walks
 * `events_created_at_idx` from its start and stops after `:batch` rows, so it reads about as many
 * rows as it deletes (plus the index entries of the rows earlier batches deleted) however large the
 * table, and an empty batch reads almost nothing. Events the webhook fan-out has not passed yet (at
 * or after its cursor) and events a pending delivery still sends (a probe of
 * `webhook_deliveries_pending_event_idx`) are kept whatever their age: while no process fans out,
 * nothing is deleted, and each batch reads the old rows past the cursor.
 */
export const DELETE_OLD_EVENTS = `with cursor as (select last_xid, last_id from event_cursors where name = 'webhooks'),
     doomed as (
       select e.id from events e
        where e.created_at < now() - make_interval(days => :days)
          and exists (select 1 from cursor c where (e.xid, e.id) <= (c.last_xid, c.last_id))
          and not exists (select 1 from webhook_deliveries d where d.status = 'pending' and d.event_seq = e.id)
        order by e.created_at limit :batch),
     gone as (delete from events e using doomed where e.id = doomed.id returning 1)
     select count(*)::int as n from gone`;

/**
 * Up to `:batch` search-log rows older than `:days` days, oldest first (through
 * `search_log_created_at_idx`, stopping after `:batch`), deleted with their embeddings and queue
 * entries (a logged question is embedded for content-gap groups); the workspaces whose embeddings
 * changed get a new embedding stamp. How many.
 */
export const DELETE_OLD_SEARCHES = `with doomed as (
       select id from search_log where created_at < now() - make_interval(days => :days) order by created_at limit :batch),
     deleted as (delete from search_log s using doomed where s.id = doomed.id returning s.id, s.workspace_id),
     unembedded as (delete from embeddings e using deleted d where e.item_type = 'search' and e.item_id = d.id returning e.workspace_id),
     unqueued as (delete from embedding_queue q using deleted d where q.item_type = 'search' and q.item_id = d.id),
     restamped as (update embedding_stamps set revision = revision + 1, removals = removals + 1
                    where workspace_id in (select workspace_id from unembedded))
     select count(*)::int as n from deleted`;

/** Deletes up to `batch` events older than `days` days (DELETE_OLD_EVENTS); how many it deleted. */
export async function deleteOldEvents(db: SqlTarget, days: number, batch: number): Promise<number> {
  const rows = await sql<{ n: number }>(db, DELETE_OLD_EVENTS, { days, batch });
  return rows[0]?.n ?? 0;
}

/** Deletes up to `batch` search-log rows older than `days` days (DELETE_OLD_SEARCHES); how many it deleted. */
export async function deleteOldSearches(db: SqlTarget, days: number, batch: number): Promise<number> {
  const rows = await sql<{ n: number }>(db, DELETE_OLD_SEARCHES, { days, batch });
  return rows[0]?.n ?? 0;
}
