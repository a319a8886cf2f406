/** Statements /metrics reads when scraped: backlogs of the embedding queue, of webhook deliveries and of the webhook fan-out. */
import { sql, type SqlTarget } from '../db/sql.js';

/** Items waiting in a queue, and the age in seconds of the oldest (0 when empty). */
export interface Backlog {
  depth: number;
  oldestSeconds: number;
}

/** The embedding queue (articles, notes and logged questions waiting for a vector). */
export async function embeddingBacklog(db: SqlTarget): Promise<Backlog> {
  const [row] = await sql<{ depth: number; oldest: number | null }>(
    db,
    'select count(*)::int as depth, extract(epoch from now() - min(enqueued_at))::float8 as oldest from embedding_queue',
  );
  return { depth: row.depth, oldestSeconds: Math.max(0, row.oldest ?? 0) };
}

/** Webhook deliveries not yet delivered (pending, including those waiting for a retry). */
export async function webhookBacklog(db: SqlTarget): Promise<Backlog> {
  const [row] = await sql<{ depth: number; oldest: number | null }>(
    db,
    `select count(*)::int as depth, extract(epoch from now() - min(created_at))::float8 as oldest from webhook_deliveries where status = 'pending'`,
  );
  return { depth: row.depth, oldestSeconds: Math.max(0, row.oldest ?? 0) };
}

/** The fan-out backlog is counted up to this many events: past it, a scrape would read ever more of the table. */
export const FAN_OUT_COUNTED = 100_000;

/**
 * Events the webhook fan-out has not passed yet (after its cursor in commit order, counted up to
 * FAN_OUT_COUNTED), and the age of the first of them: the deliveries these become are not in
 * `webhookBacklog` until a dispatcher fans them out. Reads the range of `events_xid_idx` past
 * the cursor, at most FAN_OUT_COUNTED entries of it.
 */
export async function webhookFanOutLag(db: SqlTarget): Promise<Backlog> {
  const [row] = await sql<{ depth: number; oldest: number | null }>(
    db,
    `select (select count(*)::int from (select 1 from events e where (e.xid, e.id) > (c.last_xid, c.last_id) limit ?) past) as depth,
            (select extract(epoch from now() - e.created_at)::float8 from events e
              where (e.xid, e.id) > (c.last_xid, c.last_id) order by e.xid, e.id limit 1) as oldest
       from event_cursors c
      where c.name = 'webhooks'`,
    [FAN_OUT_COUNTED],
  );
  return { depth: row?.depth ?? 0, oldestSeconds: Math.max(0, row?.oldest ?? 0) };
}
