import type { EntityManager } from '@mikro-orm/postgresql';
import { sql } from '../db/sql.js';

/** What a retried request with the same Idempotency-Key gets. */
export type IdempotencyStart =
  | { kind: 'new'; id: number }
  | { kind: 'replay'; status: number; body: unknown; headers: Record<string, string> }
  | { kind: 'mismatch' }
  | { kind: 'in_progress' };

const TTL = "interval '24 hours'";
const ABANDONED = "interval '2 minutes'"; // an in-progress claim older than this died with its process

/**
 * Idempotency-Key records in PostgreSQL (so they hold across processes): the first request with a
 * key claims it atomically; retries within 24 h replay the stored answer, a different request with
 * the same key is refused, and a claim whose request never finished is taken over after 2 minutes.
 */
export class IdempotencyStore {
  constructor(private readonly em: () => EntityManager) {}

  async begin(agentKeyId: string, workspace: string, key: string, requestHash: string): Promise<IdempotencyStart> {
    const em = this.em();
    const [claimed] = await sql<{ id: number }>(
      em,
      `insert into idempotency_keys (agent_key_id, workspace, idempotency_key, request_hash, state, created_at)
        values (?, ?, ?, ?, 'in_progress', clock_timestamp())
       on conflict (agent_key_id, workspace, idempotency_key) do update
         set request_hash = excluded.request_hash, state = 'in_progress', status = null, response = null, created_at = excluded.created_at
         where idempotency_keys.created_at < clock_timestamp() - ${TTL}
            or (idempotency_keys.state = 'in_progress' and idempotency_keys.created_at < clock_timestamp() - ${ABANDONED})
       returning id`,
      [agentKeyId, workspace, key, requestHash],
    );
    if (claimed) return { kind: 'new', id: claimed.id };
    const [row] = await sql<{
      request_hash: string;
      state: string;
      status: number;
      response: { body: unknown; headers: Record<string, string> };
    }>(
      em,
      'select request_hash, state, status, response from idempotency_keys where agent_key_id = ? and workspace = ? and idempotency_key = ?',
      [agentKeyId, workspace, key],
    );
    if (!row) return this.begin(agentKeyId, workspace, key, requestHash); // expired and removed meanwhile
    if (row.request_hash !== requestHash) return { kind: 'mismatch' };
    if (row.state !== 'done') return { kind: 'in_progress' };
    return { kind: 'replay', status: row.status, body: row.response.body, headers: row.response.headers };
  }

  async complete(id: number, status: number, body: unknown, headers: Record<string, string>): Promise<void> {
    await sql(this.em(), `update idempotency_keys set state = 'done', status = ?, response = ?::jsonb where id = ?`, [
      status,
      JSON.stringify({ body, headers }),
      id,
    ]);
  }

  /** Forgets a claim whose answer must not be replayed (5xx, 429, 409): the client may retry it. */
  async abandon(id: number): Promise<void> {
    await sql(this.em(), 'delete from idempotency_keys where id = ?', [id]);
  }

  /** Drops expired records (run now and then). */
  async purge(): Promise<void> {
    await sql(this.em(), `delete from idempotency_keys where created_at < clock_timestamp() - ${TTL}`);
  }
}
