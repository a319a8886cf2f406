/**
 * Statements MikroORM makes for any entity class: loading entities by primary key, and writing the
 * changes an EntityManager holds now instead of at commit.
 */
import type { EntityClass } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';

/**
 * The entities of `entity` with these ids (one `id in (…)` statement; ids that name no row are
 * absent), in no particular order. By primary key only: the ids must come from rows the caller
 * already read under its scope (a page's positions, an entity's references), never from a client.
 */
export function entitiesByIds<T extends object>(
  em: EntityManager,
  entity: EntityClass<T>,
  ids: readonly (string | number)[],
): Promise<T[]> {
  return em.find(entity, { id: { $in: [...ids] } } as never);
}

/**
 * Writes every change the EntityManager holds (new, changed and removed entities) now, in its
 * transaction: for a step that needs an entity's id, its update hooks or its row before the next
 * statement (else the changes are written when the transaction commits).
 */
export async function flushChanges(em: EntityManager): Promise<void> {
  await em.flush();
}
