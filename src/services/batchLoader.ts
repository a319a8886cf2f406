import { wrap, type EntityClass } from '@mikro-orm/core';
import type { RequestContext } from '../context.js';
import { entitiesByIds } from '../store/entities.js';

type Waiter<T> = { resolve: (value: T | null) => void; reject: (error: unknown) => void };

/** Per request and entity class: the ids asked for since the last flush. */
const batches = new WeakMap<RequestContext, Map<EntityClass<object>, Map<string, Waiter<object>[]>>>();

/**
 * Loads an entity by id for a GraphQL field, a tiny DataLoader: every call made for one request
 * while a list's fields are resolved is answered by one `id in (…)` statement per entity class,
 * so nested fields cost a constant number of statements whatever the page size. An entity the
 * request's EntityManager already holds initialised is returned without a statement.
 */
export function loadById<T extends object>(ctx: RequestContext, entity: EntityClass<T>, ref: T & { id: string }): Promise<T | null> {
  if (wrap(ref, true).isInitialized()) return Promise.resolve(ref);
  let perClass = batches.get(ctx);
  if (!perClass) {
    perClass = new Map<EntityClass<object>, Map<string, Waiter<object>[]>>();
    batches.set(ctx, perClass);
  }
  let pending = perClass.get(entity);
  if (!pending) {
    pending = new Map();
    perClass.set(entity, pending);
    // After the promises already queued (the rest of the list's fields) have asked, as DataLoader does.
    const queued = pending;
    void Promise.resolve().then(() => process.nextTick(() => void flush(ctx, entity, queued)));
  }
  const waiters = pending.get(ref.id) ?? [];
  pending.set(ref.id, waiters);
  return new Promise<T | null>((resolve, reject) => waiters.push({ resolve: resolve as Waiter<object>['resolve'], reject }));
}

async function flush<T extends object>(ctx: RequestContext, entity: EntityClass<T>, pending: Map<string, Waiter<object>[]>): Promise<void> {
  batches.get(ctx)?.delete(entity);
  try {
    const found = await entitiesByIds(ctx.em, entity, [...pending.keys()]);
    const byId = new Map(found.map((e) => [(e as unknown as { id: string }).id, e]));
    for (const [id, waiters] of pending) for (const w of waiters) w.resolve(byId.get(id) ?? null);
  } catch (error) {
    for (const waiters of pending.values()) for (const w of waiters) w.reject(error);
  }
}
