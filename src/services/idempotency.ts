import type { EntityManager } from '@mikro-orm/postgresql';
import {
  claimIdempotencyKey,
  completeIdempotencyKey,
  deleteIdempotencyKey,
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
 */
export class IdempotencyStore {
  constructor(private readonly em: () => EntityManager) {}

  async begin(agentKeyId: string, workspace: string, key: string, requestHash: string): Promise<IdempotencyStart> {
    const em = this.em();
    const which = { agentKeyId, workspace, key };
    const claimed = await claimIdempotencyKey(em, which, requestHash);
    if (claimed !== undefined) return { kind: 'new', id: claimed };
    const row = await readIdempotencyKey(em, which);
    if (!row) return this.begin(agentKeyId, workspace, key, requestHash); // expired and removed meanwhile
    if (row.request_hash !== requestHash) return { kind: 'mismatch' };
    if (row.state !== 'done') return { kind: 'in_progress' };
    return { kind: 'replay', status: row.status, body: row.response.body, headers: row.response.headers };
  }

  async complete(id: number, status: number, body: unknown, headers: Record<string, string>): Promise<void> {
    await completeIdempotencyKey(this.em(), id, status, body, headers);
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
