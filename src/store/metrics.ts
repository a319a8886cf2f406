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

/**
 * Events the webhook fan-out has not passed yet (after its cursor in commit order), and the age of
 * the oldest: the deliveries these become are not in `webhookBacklog` until a dispatcher fans
 * them out. Reads the range of `events_xid_idx` past the cursor only.
 */
export async function webhookFanOutLag(db: SqlTarget): Promise<Backlog> {
  const [row] = await sql<{ depth: number; oldest: number | null }>(
    db,
    `select count(*)::int as depth, extract(epoch from now() - min(e.created_at))::float8 as oldest
       from event_cursors c join events e on (e.xid, e.id) > (c.last_xid, c.last_id)
      where c.name = 'webhooks'`,
  );
  return { depth: row.depth, oldestSeconds: Math.max(0, row.oldest ?? 0) };
}
