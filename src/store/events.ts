/**
 * The events table's row as the service writes it, and the events a transaction queues: written
 * by eventWriter (a MikroORM subscriber) in one statement just before the transaction commits.
 */
import type { EventSubscriber, TransactionEventArgs } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';

/** The message id (for webhooks) and the writing transaction's id are the database's defaults. */
export const EVENT_COLUMNS =
  'organization_id, workspace_id, actor, agent_key_id, member_id, action, target_type, target_id, request_id, created_at, payload';
/** The placeholders of EVENT_COLUMNS (the action's and the payload's may be columns of a written row instead). */
export const EVENT_VALUES = (action = '?', payload = '?::jsonb') =>
  `?::uuid, ?::uuid, ?, ?::uuid, ?::uuid, ${action}, ?, ?, ?, ?, ${payload}`;

/** Rows queued in a transaction, written by eventWriter just before it commits. */
const queued = new WeakMap<EntityManager, unknown[][]>();

/** Queues one event row (values in EVENT_COLUMNS order) in the transaction of `em`. */
export function queueEvent(em: EntityManager, values: unknown[]): void {
  if (!em.isInTransaction()) throw new Error('an event needs the EntityManager of a transaction');
  const rows = queued.get(em) ?? [];
  queued.set(em, rows);
  rows.push(values);
}

/** Writes the events queued in a transaction, inside it, before COMMIT (one statement). */
export const eventWriter: EventSubscriber = {
  async beforeTransactionCommit({ em, transaction }: TransactionEventArgs) {
    const rows = queued.get(em as EntityManager);
    if (!rows?.length) return;
    queued.delete(em as EntityManager);
    await (em as EntityManager)
      .getConnection()
      .execute(
        `insert into events (${EVENT_COLUMNS}) values ${rows.map(() => `(${EVENT_VALUES()})`).join(', ')}`,
        rows.flat(),
        'run',
        transaction,
      );
  },
};
