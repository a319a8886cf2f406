import { wrap, type EntityClass } from '@mikro-orm/core';
import type { RequestContext } from '../context.js';
import { entitiesByIds } from '../store/entities.js';

type Waiter<T> = { resolve: (value: T | null) => void; reject: (error: unknown) => void };

/** Per request and entity class: the ids asked for since the last flush, and every id's answer once asked. */
type PerClass = { pending: Map<string, Waiter<object>> | null; asked: Map<string, Promise<object | null>> };
const batches = new WeakMap<RequestContext, Map<EntityClass<object>, PerClass>>();

/**
 * Loads an entity by id for a GraphQL field, a tiny DataLoader: every call made for one request
 * while a list's fields are resolved is answered by one `id in (…)` statement per entity class,
 * so nested fields cost a constant number of statements whatever the page size. An entity the
 * request's EntityManager already holds initialised is returned without a statement, and an id
 * already asked for in this request (its statement still running, or done) shares that answer:
 * the same organization reached through a key, its member and its workspace is read once, however
 * the statements' answers happen to interleave.
 */
export function loadById<T extends object>(ctx: RequestContext, entity: EntityClass<T>, ref: T & { id: string }): Promise<T | null> {
  if (wrap(ref, true).isInitialized()) return Promise.resolve(ref);
  let perRequest = batches.get(ctx);
  if (!perRequest) {
    perRequest = new Map();
    batches.set(ctx, perRequest);
  }
  let perClass = perRequest.get(entity);
  if (!perClass) {
    perClass = { pending: null, asked: new Map() };
    perRequest.set(entity, perClass);
  }
  const asked = perClass.asked.get(ref.id);
  if (asked) return asked as Promise<T | null>;
  if (!perClass.pending) {
    const queued = new Map<string, Waiter<object>>();
    perClass.pending = queued;
    const owner = perClass;
    // After the promises already queued (the rest of the list's fields) have asked, as DataLoader does.
    void Promise.resolve().then(() =>
      process.nextTick(() => {
        owner.pending = null;
        void flush(ctx, entity, queued);
      }),
    );
  }
  const pending = perClass.pending;
  const answer = new Promise<object | null>((resolve, reject) => pending.set(ref.id, { resolve, reject }));
  perClass.asked.set(ref.id, answer);
  return answer as Promise<T | null>;
}

async function flush<T extends object>(ctx: RequestContext, entity: EntityClass<T>, pending: Map<string, Waiter<object>>): Promise<void> {
  try {
    const found = await entitiesByIds(ctx.em, entity, [...pending.keys()]);
    const byId = new Map(found.map((e) => [(e as unknown as { id: string }).id, e]));
    for (const [id, waiter] of pending) waiter.resolve(byId.get(id) ?? null);
  } catch (error) {
    for (const waiter of pending.values()) waiter.reject(error);
  }
}
