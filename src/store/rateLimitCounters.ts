/**
 * Statements on rate_limit_counters: a fixed window's count of requests granted to all processes
 * together, per key. They run on the node-postgres pool the limiter is given (the ORM's
 * `synchronous_commit=off` pool), with `$n` placeholders: the limiter holds a pool, not an
 * EntityManager.
 */
import type pg from 'pg';

/** A window of a key: it starts at `start` and ends at `end`. */
export interface CounterWindow {
  start: Date;
  end: Date;
}

/** The grant statement's answer: the window's count after it, and how many requests it granted. */
export interface GrantRow {
  count: number;
  granted: number;
}

/**
 * The grant statement: adds up to `want` ($3) requests to the window starting at $2 and ending at $5 without passing
 * `max` ($4); returns the new count and the grant.
 */
const GRANT = (keySql: string, from = '') => `
  insert into rate_limit_counters as c (key, window_start, window_end, count, granted)
  select ${keySql}, $2, $5, least($3::int, $4::int), least($3::int, $4::int) ${from}
  on conflict (key, window_start) do update
    set granted = least($3::int, greatest($4::int - c.count, 0)), count = c.count + least($3::int, greatest($4::int - c.count, 0))
  returning count, granted`;

/** Grants up to `want` requests of the key's window without its count passing `max`. */
export async function grantRequests(pool: pg.Pool, key: string, window: CounterWindow, want: number, max: number): Promise<GrantRow> {
  const { rows } = await pool.query<GrantRow>(GRANT('$1'), [key, window.start, want, max, window.end]);
  return rows[0];
}

/**
 * Runs `select` (one parameter, `$1`; at most one row, with the columns `id` and `usable`) and, in
 * the same statement, grants one request of the window for the row's `id` when it is usable: the
 * row with the window's count and the grant (both null when nothing was counted), or none.
 */
export async function selectAndGrant<T extends { id: string; usable: boolean }>(
  pool: pg.Pool,
  select: string,
  param: unknown,
  window: CounterWindow,
  max: number,
): Promise<(T & { rate_count: number | null; rate_granted: number | null }) | undefined> {
  const { rows } = await pool.query<T & { rate_count: number | null; rate_granted: number | null }>(
    `with found as (${select}), hit as (${GRANT('id::text', 'from found where usable')})
       select found.*, (select count from hit) as rate_count, (select granted from hit) as rate_granted from found`,
    [param, window.start, 1, max, window.end],
  );
  return rows[0];
}

/** Deletes the windows (of every key) that ended before `before`. */
export async function deleteEndedWindows(pool: pg.Pool, before: Date): Promise<void> {
  await pool.query('delete from rate_limit_counters where window_end < $1', [before]);
}

/** Gives `n` unused requests back to the key's window starting at `start`. */
export async function returnRequests(pool: pg.Pool, key: string, start: Date, n: number): Promise<void> {
  await pool.query('update rate_limit_counters set count = greatest(count - $3, 0) where key = $1 and window_start = $2', [key, start, n]);
}
