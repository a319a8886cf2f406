/**
 * Transactions, forks and rows made entities: how a service opens its unit of work. The store owns
 * every statement, BEGIN and COMMIT included; a service decides where its transaction begins and
 * ends and passes the transaction's EntityManager to the store's functions inside it.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { EntityDictionary, EntityName, TransactionOptions } from '@mikro-orm/core';

/** Runs `work` in one transaction (nested: in the caller's), committed when it resolves, rolled back when it throws. */
export function inTransaction<T>(em: EntityManager, work: (tx: EntityManager) => Promise<T>, options?: TransactionOptions): Promise<T> {
  return em.transactional(work, options);
}

/** An EntityManager of its own beside `em` (its identity map apart), for reads that must not join `em`'s entities. */
export function forkOf(em: EntityManager): EntityManager {
  return em.fork();
}

/** A row as read by the store's statements, made an entity of `entity` (managed by `em`). */
export function entityOf<T extends object>(em: EntityManager, entity: EntityName<T>, row: object): T {
  return em.map(entity, row as EntityDictionary<T>);
}
