import type { MikroORM } from '@mikro-orm/postgresql';
import type pg from 'pg';

/** An ORM's connection pools: node-postgres's for single statements and for relaxed writes, knex's (tarn) for transactions. */
export type PoolName = 'statements' | 'relaxed' | 'transactions';

/** One connection handed out: its pool, how long the caller waited for it, and whether it queued because every connection was busy. */
export type PoolWaitListener = (pool: PoolName, seconds: number, queued: boolean) => void;

/** Where an ORM's pools report each connection they hand out (read by /metrics). */
export class PoolWaits {
  private readonly listeners = new Set<PoolWaitListener>();

  /** Calls `listener` for every connection handed out from now on; the returned function stops that. */
  on(listener: PoolWaitListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  report(pool: PoolName, seconds: number, queued: boolean): void {
    for (const listener of this.listeners) listener(pool, seconds, queued);
  }
}

type Connected = (err: Error | undefined, client: pg.PoolClient | undefined, done: (release?: unknown) => void) => void;

/**
 * Times every connection `pool` hands out, from the caller's `connect` (which `pool.query` calls
 * too) to the client: about 0 when one was idle, a connection's set-up when the pool opened one,
 * the time in the queue when every connection was busy (`queued`: the callers ahead of it in the
 * queue take all the idle connections and all the pool may still open, so it waits for a release).
 */
export function watchPgPool(pool: pg.Pool, name: PoolName, waits: PoolWaits): void {
  const connect = pool.connect.bind(pool) as (cb?: Connected) => Promise<pg.PoolClient> | undefined;
  const watched = (cb?: Connected) => {
    const started = performance.now();
    // Queued behind a busy pool: the callers already waiting take every idle connection and every one the pool may still open.
    const queued = pool.waitingCount >= pool.idleCount + (pool.options.max ?? 10) - pool.totalCount;
    const report = () => waits.report(name, (performance.now() - started) / 1000, queued);
    if (cb)
      return connect((err, client, release) => {
        if (!err) report();
        cb(err, client, release);
      });
    return (connect() as Promise<pg.PoolClient>).then((client) => {
      report();
      return client;
    });
  };
  pool.connect = watched as typeof pool.connect;
}

/** What the metrics read of knex's pool (tarn). */
export interface TarnPool {
  max: number;
  numUsed(): number;
  numFree(): number;
  numPendingAcquires(): number;
  numPendingCreates(): number;
  on(event: 'acquireRequest' | 'acquireSuccess' | 'acquireFail', listener: (eventId: number) => void): void;
}

/** The ORM's own pool (its transactions), where the driver exposes it. */
export function knexPool(orm: MikroORM): TarnPool | null {
  const connection = orm.em.getConnection() as unknown as { getKnex?(): { client?: { pool?: TarnPool } } };
  return connection.getKnex?.().client?.pool ?? null;
}

/** Times every connection tarn hands out (through its acquire events), like `watchPgPool`. */
export function watchTarnPool(pool: TarnPool, name: PoolName, waits: PoolWaits): void {
  const pending = new Map<number, { started: number; queued: boolean }>();
  pool.on('acquireRequest', (id) => {
    // As for node-postgres: the acquires already pending take every connection not in use (free, being opened, or still to open).
    const queued = pool.numPendingAcquires() >= pool.max - pool.numUsed();
    pending.set(id, { started: performance.now(), queued });
  });
  pool.on('acquireSuccess', (id) => {
    const request = pending.get(id);
    pending.delete(id);
    if (request) waits.report(name, (performance.now() - request.started) / 1000, request.queued);
  });
  pool.on('acquireFail', (id) => pending.delete(id));
}
