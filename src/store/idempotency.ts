/** Statements on idempotency_keys: claiming a key, reading its record, storing the answer, forgetting and purging. */
import { sql, type SqlTarget } from '../db/sql.js';

/** How long a record is kept: a retry within it replays the answer. */
const TTL = "interval '24 hours'";
/** An in-progress claim older than this died with its process. */
const ABANDONED = "interval '2 minutes'";

/** A request's Idempotency-Key: who sent it, for which workspace, and the key. */
export interface IdempotencyKeyId {
  agentKeyId: string;
  workspace: string;
  key: string;
}

/** A key's record as a retry reads it. */
export interface IdempotencyRow {
  request_hash: string;
  state: string;
  status: number;
  response: { body: unknown; headers: Record<string, string> };
}

/**
 * Claims a key for a request (atomically): a new record, or one that expired or whose claim was
 * abandoned, taken over; the record's id, or undefined when another record holds the key.
 */
export async function claimIdempotencyKey(db: SqlTarget, id: IdempotencyKeyId, requestHash: string): Promise<number | undefined> {
  const [claimed] = await sql<{ id: number }>(
    db,
    `insert into idempotency_keys (agent_key_id, workspace, idempotency_key, request_hash, state, created_at)
        values (?, ?, ?, ?, 'in_progress', clock_timestamp())
       on conflict (agent_key_id, workspace, idempotency_key) do update
         set request_hash = excluded.request_hash, state = 'in_progress', status = null, response = null, created_at = excluded.created_at
         where idempotency_keys.created_at < clock_timestamp() - ${TTL}
            or (idempotency_keys.state = 'in_progress' and idempotency_keys.created_at < clock_timestamp() - ${ABANDONED})
       returning id`,
    [id.agentKeyId, id.workspace, id.key, requestHash],
  );
  return claimed?.id;
}

/** The record holding a key, if any. */
export async function readIdempotencyKey(db: SqlTarget, id: IdempotencyKeyId): Promise<IdempotencyRow | undefined> {
  const [row] = await sql<IdempotencyRow>(
    db,
    'select request_hash, state, status, response from idempotency_keys where agent_key_id = ? and workspace = ? and idempotency_key = ?',
    [id.agentKeyId, id.workspace, id.key],
  );
  return row;
}

/** Stores a claimed request's answer: later retries replay it. */
export async function completeIdempotencyKey(
  db: SqlTarget,
  id: number,
  status: number,
  body: unknown,
  headers: Record<string, string>,
): Promise<void> {
  await sql(db, `update idempotency_keys set state = 'done', status = ?, response = ?::jsonb where id = ?`, [
    status,
    JSON.stringify({ body, headers }),
    id,
  ]);
}

/**
 * Takes the key's transaction lock if it is free (inside the request's transaction, see
 * IdempotencyStore.atomically): false while another request with the same key holds it.
 */
export async function lockIdempotencyKey(db: SqlTarget, id: IdempotencyKeyId): Promise<boolean> {
  const [row] = await sql<{ locked: boolean }>(db, `select pg_try_advisory_xact_lock(hashtextextended(?, 0)) as locked`, [
    `idempotency\n${id.agentKeyId}\n${id.workspace}\n${id.key}`,
  ]);
  return row.locked;
}

/** Deletes a record by id. */
export async function deleteIdempotencyKey(db: SqlTarget, id: number): Promise<void> {
  await sql(db, 'delete from idempotency_keys where id = ?', [id]);
}

/** Deletes expired records. */
export async function purgeIdempotencyKeys(db: SqlTarget): Promise<void> {
  await sql(db, `delete from idempotency_keys where created_at < clock_timestamp() - ${TTL}`);
}
