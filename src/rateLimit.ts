import type pg from 'pg';
import { DomainError } from './errors.js';
import { deleteEndedWindows, grantRequests, returnRequests, selectAndGrant } from './store/rateLimitCounters.js';

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
  return { start, end: start + size, resetSeconds: Math.max(1, Math.ceil((start + size - now) / 1000)) };
}

function result(max: number, count: number, resetSeconds: number): RateLimitResult {
  return { allowed: count <= max, limit: max, remaining: Math.max(0, max - count), resetSeconds };
}

/** An answer from a lease: granted (with what is left for the key) or refused. */
function leased(max: number, granted: boolean, remaining: number, resetSeconds: number): RateLimitResult {
  return { allowed: granted, limit: max, remaining: granted ? Math.max(0, remaining) : 0, resetSeconds };
}

/** Fixed windows counted in process memory: right for the embedded database, where one process serves. */
export class MemoryRateLimiter implements RateLimiter {
  private readonly counts = new Map<string, { start: number; count: number }>();

  constructor(
    readonly max: number,
    readonly windowSeconds: number,
  ) {}

  hit(key: string): Promise<RateLimitResult> {
    const { start, resetSeconds } = windowOf(this.windowSeconds, Date.now());
    let entry = this.counts.get(key);
    if (!entry || entry.start !== start) {
      if (this.counts.size > 10_000) for (const [k, v] of this.counts) if (v.start !== start) this.counts.delete(k);
      entry = { start, count: 0 };
      this.counts.set(key, entry);
    }
    entry.count += 1;
    return Promise.resolve(result(this.max, entry.count, resetSeconds));
  }
}

/** What one process holds of a key's current window. */
interface Lease {
  window: number;
  /** Requests granted to this process by the database and not used yet. */
  tokens: number;
  /** What the window had left in the database after this process's last grant. */
  remaining: number;
  /** The size of the last grant (what a refill is measured against). */
  granted: number;
  /** Requests of this key seen here in this window, since `since`; `lastUse` is the latest. */
  hits: number;
  since: number;
  lastUse: number;
  /** The database grant under way, if any (one at a time per key and process). */
  pending: Promise<void> | null;
}

/** A process takes at most this share of what a window has left … */
const LEASE_SHARE = 16;
/** … and at most about one second of its own traffic for the key. */
const LEASE_MAX = 1000;
/** Tokens unused this long go back to the window, for other processes. */
const IDLE_RETURN_MS = 1000;
/** A busy key asks for its next lease when less than this share of the last one is left. */
const REFILL_AT = 1 / 4;

/**
 * Fixed windows counted in PostgreSQL, so the limit holds across processes: a window's row counts
 * the requests granted to all processes together and never passes the limit. To spare a round
 * trip per request, a process takes a *lease* of several requests at once when the key is busy —
 * at most 1/16 of what the window has left and about one second of the key's traffic in this
 * process — and answers from it locally, asking for the next lease while a quarter of the current
 * one is left (so the key's requests do not queue behind that round trip); near the limit leases
 * shrink to one request, so the limit stays exact. Unused requests go back to the window after a
 * second of idleness (and at shutdown), so a key whose traffic moves to another process loses
 * nothing for long. The counter runs on the given pool, which the caller owns: the ORM's
 * `synchronous_commit=off` pool (a crash may forget the last few counts, harmless here).
 */
export class PostgresRateLimiter implements RateLimiter {
  private readonly leases = new Map<string, Lease>();
  private readonly sweeper: NodeJS.Timeout;
  /** The window whose predecessors this process last deleted. */
  private purgedFor = 0;

  constructor(
    private readonly pool: pg.Pool,
    readonly max: number,
    readonly windowSeconds: number,
  ) {
    this.sweeper = setInterval(() => void this.sweep().catch(() => undefined), IDLE_RETURN_MS / 2);
    this.sweeper.unref();
  }

  async hit(key: string): Promise<RateLimitResult> {
    for (;;) {
      const now = Date.now();
      const { start, end, resetSeconds } = windowOf(this.windowSeconds, now);
      const lease = this.leaseOf(key, start, now);
      if (lease.tokens > 0) {
        lease.tokens--;
        this.used(lease, now);
        // Asked before the lease runs out, so the key's next requests do not all queue behind the round trip.
        if (!lease.pending && lease.granted > 1 && lease.tokens < lease.granted * REFILL_AT)
          void this.grant(key, lease, start, end, now, 0).catch(() => undefined);
        return leased(this.max, true, lease.remaining + lease.tokens, resetSeconds);
      }
      if (lease.pending) {
        await lease.pending; // another request of this key is asking the database: share its grant
        continue;
      }
      this.used(lease, now);
      const granted = await this.grant(key, lease, start, end, now, 1);
      return leased(this.max, granted > 0, lease.remaining + lease.tokens, resetSeconds);
    }
  }

  /**
   * Asks the database for the key's next lease and returns what it granted: `using` of it are the
   * caller's own request (1, or 0 for a renewal ahead), the rest become the lease's tokens.
   */
  private async grant(key: string, lease: Lease, start: number, end: number, now: number, using: number): Promise<number> {
    const want = this.leaseSize(lease, now);
    let granted = 0;
    const window = { start: new Date(start), end: new Date(end) };
    lease.pending = grantRequests(this.pool, key, window, want, this.max).then((row) => {
      granted = Number(row.granted);
      lease.granted = granted;
      this.record(key, start, Number(row.count), Math.max(0, granted - using));
    });
    try {
      await lease.pending;
    } finally {
      lease.pending = null;
    }
    return granted;
  }

  /**
   * Runs `select` (one parameter, `$1`; at most one row, with the columns `id` and `usable`) and,
   * in the same statement, counts one request for the row's `id` when it is usable: the key lookup
   * and the rate limit in one round trip. No row or an unusable one: nothing is counted.
   */
  async selectAndHit<T extends { id: string; usable: boolean }>(
    select: string,
    param: unknown,
  ): Promise<{ row?: T; result?: RateLimitResult }> {
    const now = Date.now();
    const { start, end, resetSeconds } = windowOf(this.windowSeconds, now);
    const found = await selectAndGrant<T>(this.pool, select, param, { start: new Date(start), end: new Date(end) }, this.max);
    if (!found) return {};
    const { rate_count: count, rate_granted: granted, ...row } = found;
    if (count === null) return { row: row as unknown as T };
    const lease = this.leaseOf(row.id, start, now);
    this.used(lease, now);
    this.record(row.id, start, Number(count), 0);
    return { row: row as unknown as T, result: leased(this.max, Number(granted) > 0, lease.remaining + lease.tokens, resetSeconds) };
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    await this.sweep(true).catch(() => undefined);
  }

  private leaseOf(key: string, window: number, now: number): Lease {
    let lease = this.leases.get(key);
    if (!lease || lease.window !== window) {
      lease = { window, tokens: 0, granted: 0, remaining: this.max, hits: 0, since: now, lastUse: now, pending: null };
      this.leases.set(key, lease);
    }
    return lease;
  }

  private used(lease: Lease, now: number): void {
    lease.hits++;
    lease.lastUse = now;
  }

  /** After a grant: what the window has left, and the extra requests this process now holds. */
  private record(key: string, window: number, count: number, extra: number): void {
    const lease = this.leases.get(key);
    if (!lease || lease.window !== window) return; // the window rolled over meanwhile: the grant is void
    lease.remaining = this.max - count;
    lease.tokens += extra;
  }

  /** One request when the key is quiet here; up to 1/16 of what is left and ~1 s of this process's traffic when it is busy. */
  private leaseSize(lease: Lease, now: number): number {
    const perSecond = Math.ceil(lease.hits / Math.max(1, (now - lease.since) / 1000));
    return Math.max(1, Math.min(Math.floor(lease.remaining / LEASE_SHARE), perSecond, LEASE_MAX));
  }

  /**
   * Gives idle (or, at shutdown, all) unused requests back to their windows; forgets past windows
   * here and, once per window, deletes the rows of windows that ended before this one began. A
   * row's own end decides, not this process's window length: processes configured with another
   * RATE_LIMIT_WINDOW_S (a rolling change, or tests sharing a database) never cut a live window.
   */
  private async sweep(all = false): Promise<void> {
    const now = Date.now();
    const { start } = windowOf(this.windowSeconds, now);
    const returns: Promise<unknown>[] = [];
    if (this.purgedFor !== start) {
      this.purgedFor = start;
      returns.push(deleteEndedWindows(this.pool, new Date(start)));
    }
    for (const [key, lease] of this.leases) {
      if (lease.window !== start) {
        if (!lease.pending) this.leases.delete(key);
        continue;
      }
      if (lease.tokens > 0 && !lease.pending && (all || now - lease.lastUse >= IDLE_RETURN_MS)) {
        const n = lease.tokens;
        lease.tokens = 0;
        lease.remaining += n;
        returns.push(returnRequests(this.pool, key, new Date(start), n));
      }
    }
    await Promise.all(returns);
  }
}

/** The 429 a refused request gets, on every door: the envelope says when to retry (Retry-After carries the same seconds). */
export function rateLimitedError(result: RateLimitResult, windowSeconds: number): DomainError {
  return new DomainError(
    'rate_limited',
    `Rate limit of ${result.limit} requests per ${windowSeconds} s exceeded; retry in ${result.resetSeconds} s.`,
    { limit: result.limit, windowSeconds, retryAfterSeconds: result.resetSeconds },
  );
}
