/** Statements of retention: deleting the oldest rows of the event table and of the search log, one small batch per statement. */
import { sql, type SqlTarget } from '../db/sql.js';

/**
 * Deletes up to `batch` events older than `days` days, oldest first (by id, so the primary key
 * index walks from the start and each statement touches only `batch` rows, briefly). Events the
 * webhook fan-out has not passed yet (at or after its cursor) and events a pending delivery
 * still sends are kept whatever their age. How many it deleted.
 */
export async function deleteOldEvents(db: SqlTarget, days: number, batch: number): Promise<number> {
  const rows = await sql<{ n: number }>(
    db,
    `with cursor as (select last_xid, last_id from event_cursors where name = 'webhooks'),
     doomed as (
       select e.id from events e
        where e.created_at < now() - make_interval(days => :days)
          and exists (select 1 from cursor c where (e.xid, e.id) <= (c.last_xid, c.last_id))
          and not exists (select 1 from webhook_deliveries d where d.status = 'pending' and d.event_seq = e.id)
        order by e.id limit :batch),
     gone as (delete from events e using doomed where e.id = doomed.id returning 1)
     select count(*)::int as n from gone`,
    { days, batch },
  );
  return rows[0]?.n ?? 0;
}

/**
 * Deletes up to `batch` search-log rows older than `days` days, oldest first, with their
 * embeddings and queue entries (a logged question is embedded for content-gap groups); the
 * workspaces whose embeddings changed get a new embedding stamp. How many it deleted.
 */
export async function deleteOldSearches(db: SqlTarget, days: number, batch: number): Promise<number> {
  const rows = await sql<{ n: number }>(
    db,
    `with doomed as (select id from search_log where created_at < now() - make_interval(days => :days) order by id limit :batch),
     deleted as (delete from search_log s using doomed where s.id = doomed.id returning s.id, s.workspace_id),
     unembedded as (delete from embeddings e using deleted d where e.item_type = 'search' and e.item_id = d.id returning e.workspace_id),
     unqueued as (delete from embedding_queue q using deleted d where q.item_type = 'search' and q.item_id = d.id),
     restamped as (update embedding_stamps set revision = revision + 1, removals = removals + 1
                    where workspace_id in (select workspace_id from unembedded))
     select count(*)::int as n from deleted`,
    { days, batch },
  );
  return rows[0]?.n ?? 0;
}
