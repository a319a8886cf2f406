import pg from 'pg';

/** The outcome of counting one request against a key's window. */
export interface RateLimitResult {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window resets (whole seconds, at least 1). */
  resetSeconds: number;
}

export interface RateLimiter {
  readonly max: number;
  readonly windowSeconds: number;
  hit(key: string): Promise<RateLimitResult>;
  close?(): Promise<void>;
}

function windowOf(windowSeconds: number, now: number) {
  const size = windowSeconds * 1000;
  const start = Math.floor(now / size) * size;
  return { start, resetSeconds: Math.max(1, Math.ceil((start + size - now) / 1000)) };
}

function result(max: number, count: number, resetSeconds: number): RateLimitResult {
  return { allowed: count <= max, limit: max, remaining: Math.max(0, max - count), resetSeconds };
}

/** Fixed windows counted in process memory: right for the embedded database, where one process serves. */
export class MemoryRateLimiter implements RateLimiter {
  private readonly counts = new Map<string, { start: number; count: number }>();

  constructor(readonly max: number, readonly windowSeconds: number) {}

  async hit(key: string): Promise<RateLimitResult> {
    const { start, resetSeconds } = windowOf(this.windowSeconds, Date.now());
    let entry = this.counts.get(key);
    if (!entry || entry.start !== start) {
      if (this.counts.size > 10_000) for (const [k, v] of this.counts) if (v.start !== start) this.counts.delete(k);
      entry = { start, count: 0 };
      this.counts.set(key, entry);
    }
    entry.count += 1;
    return result(this.max, entry.count, resetSeconds);
  }
}

/**
 * Fixed windows counted by an atomic upsert in PostgreSQL, so the limit holds across processes.
 * Every request of a key updates one row, so the counter has its own small pool with
 * `synchronous_commit=off`: the row lock is held for microseconds instead of a WAL flush
 * (a crash may forget the last few counts, which is harmless for a rate limit).
 */
export class PostgresRateLimiter implements RateLimiter {
  private readonly pool: pg.Pool;

  constructor(connection: pg.PoolConfig, readonly max: number, readonly windowSeconds: number) {
    this.pool = new pg.Pool({ ...connection, max: 4, options: '-c synchronous_commit=off' });
    this.pool.on('error', () => undefined); // a dropped idle client is replaced on next use
  }

  async hit(key: string): Promise<RateLimitResult> {
    const { start, resetSeconds } = windowOf(this.windowSeconds, Date.now());
    const { rows } = await this.pool.query(
      `insert into rate_limit_counters (key, window_start, count) values ($1, $2, 1)
       on conflict (key, window_start) do update set count = rate_limit_counters.count + 1
       returning count`,
      [key, new Date(start)],
    );
    if (Math.random() < 0.01) {
      this.pool.query('delete from rate_limit_counters where window_start < $1', [new Date(start - this.windowSeconds * 1000)]).catch(() => undefined);
    }
    return result(this.max, Number(rows[0].count), resetSeconds);
  }

  /**
   * Runs `select` (at most one row, with the columns `id` and `usable`) and, in the same statement,
   * counts a hit for the row's `id` when it is usable: the key lookup and the rate limit in one
   * round trip instead of two. No row or an unusable one: nothing is counted (`result` undefined).
   */
  async selectAndHit<T extends { id: string; usable: boolean }>(select: string, params: unknown[]): Promise<{ row?: T; result?: RateLimitResult }> {
    const { start, resetSeconds } = windowOf(this.windowSeconds, Date.now());
    const { rows } = await this.pool.query(
      `with found as (${select}),
       hit as (
         insert into rate_limit_counters (key, window_start, count)
         select id::text, $${params.length + 1}, 1 from found where usable
         on conflict (key, window_start) do update set count = rate_limit_counters.count + 1
         returning count)
       select found.*, (select count from hit) as rate_count from found`,
      [...params, new Date(start)],
    );
    const row = rows[0];
    if (!row) return {};
    const { rate_count: count, ...rest } = row;
    return { row: rest as T, result: count === null ? undefined : result(this.max, Number(count), resetSeconds) };
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
