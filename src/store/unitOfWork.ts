/**
 * Transactions, forks and rows made entities: how a service opens its unit of work. The store owns
 * every statement, BEGIN and COMMIT included; a service decides where its transaction begins and
 * ends and passes the transaction's EntityManager to the store's functions inside it.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { EntityDictionary, EntityName, TransactionOptions } from '@mikro-orm/core';
import { handOverEvents } from './events.js';

/** Runs `work` in one transaction (nested: in the caller's), committed when it resolves, rolled back when it throws. */
export function inTransaction<T>(em: EntityManager, work: (tx: EntityManager) => Promise<T>, options?: TransactionOptions): Promise<T> {
  if (!em.isInTransaction()) return em.transactional(work, options);
  // A savepoint in the caller's transaction: its events are written when that one commits.
  return em.transactional(async (tx) => {
    const result = await work(tx);
    handOverEvents(tx, em);
    return result;
  }, options);
}

/**
 * Runs a whole request's work in one transaction bound to `em` (the request's EntityManager and
 * statement target while it runs): committed when `work` says so, rolled back otherwise or when
 * it throws. A COMMIT that fails (the connection died during it) throws: its outcome is unknown.
 */
export async function requestTransaction<T>(em: EntityManager, work: () => Promise<{ value: T; commit: boolean }>): Promise<T> {
  await em.begin();
  let outcome: { value: T; commit: boolean };
  try {
    outcome = await work();
  } catch (error) {
    await em.rollback().catch(() => undefined);
    throw error;
  }
  if (outcome.commit) await em.commit();
  else await em.rollback().catch(() => undefined);
  return outcome.value;
}

/** An EntityManager of its own beside `em` (its identity map apart), for reads that must not join `em`'s entities. */
export function forkOf(em: EntityManager): EntityManager {
  return em.fork();
}

/** A row as read by the store's statements, made an entity of `entity` (managed by `em`). */
export function entityOf<T extends object>(em: EntityManager, entity: EntityName<T>, row: object): T {
  return em.map(entity, row as EntityDictionary<T>);
}
