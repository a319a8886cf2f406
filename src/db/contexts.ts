import { AsyncLocalStorage } from 'node:async_hooks';
import type { MikroORM } from '@mikro-orm/postgresql';

const tamed = new WeakSet<AsyncLocalStorage<unknown>>();

/**
 * On Node 20 an AsyncLocalStorage, once used, stays enabled and every promise and async resource
 * the process creates from then on pays for propagating it (measured here: 100 awaited promises
 * cost 8 µs before any MikroORM flush and 52 µs after one). MikroORM keeps three such stores of its
 * own (the transaction context, a module-private "inside flush" marker used by every flush, and
 * the request context, which this service does not use) and needs them only while one of its `run`
 * calls is active. This switches each off again when its last active `run` settles, so requests
 * that never reach the ORM's unit of work do not pay for it. The stores are private to MikroORM:
 * they are found by watching which stores one empty transaction with a flush uses, at start.
 */
export async function tameOrmContexts(orm: MikroORM): Promise<void> {
  const stores = new Set<AsyncLocalStorage<unknown>>();
  // eslint-disable-next-line @typescript-eslint/unbound-method -- the original method, called back with its store as `this`
  const run = AsyncLocalStorage.prototype.run;
  AsyncLocalStorage.prototype.run = function (this: AsyncLocalStorage<unknown>, ...args: Parameters<typeof run>) {
    stores.add(this);
    return run.apply(this, args);
  } as typeof run;
  try {
    await orm.em.fork({ disableContextResolution: true }).transactional((em) => em.flush());
  } finally {
    AsyncLocalStorage.prototype.run = run;
  }
  for (const store of stores) {
    tame(store);
    store.disable(); // nothing runs in it now
  }
}

/** Makes `run` on this store switch it off once no run is active on it any more. */
function tame(store: AsyncLocalStorage<unknown>): void {
  if (tamed.has(store)) return;
  tamed.add(store);
  // eslint-disable-next-line @typescript-eslint/unbound-method -- the original method, called back with its store as `this`
  const run = AsyncLocalStorage.prototype.run;
  let active = 0;
  const settled = () => {
    if (--active === 0) store.disable();
  };
  store.run = function <R>(this: AsyncLocalStorage<unknown>, value: unknown, callback: (...args: unknown[]) => R, ...args: unknown[]): R {
    active++;
    let out: R;
    try {
      out = run.call(this, value, callback, ...args) as R;
    } catch (error) {
      settled();
      throw error;
    }
    if (out && typeof (out as { then?: unknown }).then === 'function') {
      (out as unknown as Promise<unknown>).then(settled, settled);
      return out;
    }
    settled();
    return out;
  };
}
