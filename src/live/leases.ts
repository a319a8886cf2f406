import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { freshEm } from '../db/orm.js';
import type { SqlTarget } from '../db/sql.js';
import { deleteLease, deleteLeases, renewLeases, takeNamedLock, type LeaseTable } from '../store/live.js';
import { inTransaction } from '../store/unitOfWork.js';

/** A lease row lives this long without renewal: the slots of a process that dies are free again within it. */
export const LEASE_S = 60;
/** How often a process renews the lease rows it holds. */
const RENEW_MS = 20_000;

export type { LeaseTable } from '../store/live.js';

/**
 * Runs `work` in a transaction that first takes the advisory locks named `locks`, in that order,
 * so a count `work` reads after them (in statements of its own: snapshots taken after the locks)
 * sees every row an earlier holder of the same lock inserted. Transaction-scoped locks only: they
 * are safe behind a transaction pooler.
 */
export function underLocks<T>(orm: MikroORM, locks: readonly string[], work: (em: EntityManager) => Promise<T>): Promise<T> {
  return inTransaction(freshEm(orm), async (em) => {
    for (const lock of locks) await takeNamedLock(em, lock);
    return work(em);
  });
}

/**
 * The lease rows this process holds in one table: renewed every RENEW_MS while held (one statement
 * for all of them), deleted when released or at shutdown. A process that dies stops renewing, so
 * its rows expire within LEASE_S and every count that skips expired rows frees their slots.
 */
export class HeldLeases {
  private readonly ids = new Set<string>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly db: SqlTarget,
    private readonly table: LeaseTable,
    private readonly logger: Logger,
  ) {}

  /** Lease rows held by this process. */
  get size(): number {
    return this.ids.size;
  }

  /** Keeps renewing a row just inserted (with `expires_at` LEASE_S ahead). */
  hold(id: string): void {
    this.ids.add(id);
    this.timer ??= setInterval(() => void this.renew(), RENEW_MS).unref();
  }

  /** Deletes a held row (best effort: a row left behind expires by itself). */
  async release(id: string): Promise<void> {
    this.ids.delete(id);
    if (!this.ids.size && this.timer) {
      clearInterval(this.timer);
      this.timer = null;
    }
    await deleteLease(this.db, this.table, id).catch((err: unknown) =>
      this.logger.warn({ err, table: this.table }, 'could not free a lease; it expires by itself'),
    );
  }

  private async renew(): Promise<void> {
    if (!this.ids.size) return;
    await renewLeases(this.db, this.table, [...this.ids], LEASE_S).catch((err: unknown) =>
      this.logger.warn({ err, table: this.table }, 'could not renew leases'),
    );
  }

  /** Stops renewing and deletes every row still held. */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    const ids = [...this.ids];
    this.ids.clear();
    if (ids.length) await deleteLeases(this.db, this.table, ids).catch(() => undefined);
  }
}
