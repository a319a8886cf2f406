import type { EntityManager } from '@mikro-orm/postgresql';
import type { SqlTarget } from '../db/sql.js';
import {
  claimIdempotencyKey,
  completeIdempotencyKey,
  deleteIdempotencyKey,
  lockIdempotencyKey,
  purgeIdempotencyKeys,
  readIdempotencyKey,
} from '../store/idempotency.js';

/** What a retried request with the same Idempotency-Key gets. */
export type IdempotencyStart =
  | { kind: 'new'; id: number }
  | { kind: 'replay'; status: number; body: unknown; headers: Record<string, string> }
  | { kind: 'mismatch' }
  | { kind: 'in_progress' };

/**
 * Idempotency-Key records in PostgreSQL (so they hold across processes): the first request with a
 * key claims it atomically; retries within 24 h replay the stored answer, a different request with
 * the same key is refused, and a claim whose request never finished is taken over after 2 minutes.
 *
 * On a PostgreSQL server the claim, the request's writes and its stored answer are one
 * transaction (`tx`, see unitOfWork's requestTransaction): a request whose COMMIT got no answer
 * (the primary crashed, a failover) either committed all three — a retry replays the answer — or
 * none, and a retry runs it for the first time. Never a second write, and no claim left behind to
 * wait out. A second request with the key while the first runs finds the key's lock taken (409).
 * On the embedded database each step commits alone, as the claim's 2 minutes assume.
 */
export class IdempotencyStore {
  constructor(private readonly em: () => EntityManager) {}

  /** Takes the key's lock in the request's transaction `tx`: false while another request with the key runs. */
  lock(tx: SqlTarget, agentKeyId: string, workspace: string, key: string): Promise<boolean> {
    return lockIdempotencyKey(tx, { agentKeyId, workspace, key });
  }

  async begin(agentKeyId: string, workspace: string, key: string, requestHash: string, tx?: SqlTarget): Promise<IdempotencyStart> {
    const em = tx ?? this.em();
    const which = { agentKeyId, workspace, key };
    const claimed = await claimIdempotencyKey(em, which, requestHash);
    if (claimed !== undefined) return { kind: 'new', id: claimed };
    const row = await readIdempotencyKey(em, which);
    if (!row) return this.begin(agentKeyId, workspace, key, requestHash, tx); // expired and removed meanwhile
    if (row.request_hash !== requestHash) return { kind: 'mismatch' };
    if (row.state !== 'done') return { kind: 'in_progress' };
    return { kind: 'replay', status: row.status, body: row.response.body, headers: row.response.headers };
  }

  async complete(id: number, status: number, body: unknown, headers: Record<string, string>, tx?: SqlTarget): Promise<void> {
    await completeIdempotencyKey(tx ?? this.em(), id, status, body, headers);
  }

  /** Forgets a claim whose answer must not be replayed (5xx, 429, 409): the client may retry it. */
  async abandon(id: number): Promise<void> {
    await deleteIdempotencyKey(this.em(), id);
  }

  /** Drops expired records (run now and then). */
  async purge(): Promise<void> {
    await purgeIdempotencyKeys(this.em());
  }
}
