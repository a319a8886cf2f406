import type { MikroORM } from '@mikro-orm/postgresql';
import pg from 'pg';
import type { Logger } from 'pino';
import { callerWriteLsn, primaryWalLsn, recordCallerWrite, replicaReplay } from '../store/readRouting.js';
import { freshEm } from '../db/orm.js';
import { replicaTarget, type SqlTarget, type StatementTally } from '../db/sql.js';
import { pgClientClass, pgConfigOf } from '../db/hostPicking.js';

/** A WAL position `X/Y` (hex) as a number, for comparison. */
export function lsnValue(lsn: string): bigint {
  const [hi, lo] = lsn.split('/');
  return (BigInt(`0x${hi}`) << 32n) + BigInt(`0x${lo}`);
}

export interface ReadRouterOptions {
  /** REPLICA_MAX_LAG_S: beyond this lag no read goes to the replica (default 30). */
  maxLagSeconds: number;
  /** How often the WAL positions of both servers are read (default 200 ms). */
  pollMs?: number;
}

/** Where the reads of requests went, and why (for /metrics). */
export type ReadRoute = 'replica' | 'primary_own_write' | 'primary_lag' | 'primary_unavailable';
/** Where a read request's statements went: its route, or `primary_write` for one routed to the replica that also wrote on the primary. */
export type ReadOutcome = ReadRoute | 'primary_write';

/**
 * Routes the plain reads of read requests (REST GETs, GraphQL queries, MCP reads) to a streaming
 * replica (DATABASE_READ_URL), except where the answer could miss the caller's own write. The
 * rule, by WAL position: after each write request the primary's WAL position is recorded for its
 * caller (in the primary, so every process sees it); a read request goes to the replica only if
 * the replica has replayed past its caller's last recorded position, and the replica is reachable
 * and no more than `maxLagSeconds` behind. The replica's position is polled, so the router only
 * ever underestimates it (a read may go to the primary needlessly, never to a replica that lacks
 * the caller's write). Other callers' writes may be missing from a replica read for as long as
 * the replica lags.
 */
export class ReadRouter {
  private readonly primary: SqlTarget;
  private readonly pool: pg.Pool;
  private replayed: bigint | null = null;
  private paused = false;
  /** Primary WAL positions sampled over time, oldest first: the lag is the age of the oldest one the replica has not replayed. */
  private samples: { at: number; lsn: bigint }[] = [];
  private timer: NodeJS.Timeout | null = null;
  private polling: Promise<void> | null = null;
  readonly routed: Record<ReadOutcome, number> = {
    replica: 0,
    primary_write: 0,
    primary_own_write: 0,
    primary_lag: 0,
    primary_unavailable: 0,
  };

  constructor(
    private readonly orm: MikroORM,
    readUrl: string,
    private readonly options: ReadRouterOptions,
    private readonly logger: Logger,
  ) {
    const { types } = orm.em.getConnection().getConnectionOptions() as { types?: pg.CustomTypesConfig };
    // A multi-host DATABASE_READ_URL (target_session_attrs=prefer-standby, say) picks its host per connection.
    const config = pgConfigOf(readUrl);
    this.pool = new pg.Pool({ ...config, Client: pgClientClass(config), types, max: 10 });
    this.pool.on('error', () => undefined);
    this.primary = freshEm(orm);
  }

  async start(): Promise<void> {
    await this.poll();
    this.timer = setInterval(() => void this.poll(), this.options.pollMs ?? 200);
    this.timer.unref();
  }

  /** Seconds the replica is behind the primary (0 when it has replayed everything sampled), or null while it cannot be read. */
  get lagSeconds(): number | null {
    if (this.replayed === null) return null;
    const behind = this.samples.find((s) => s.lsn > this.replayed!);
    return behind ? (Date.now() - behind.at) / 1000 : 0;
  }

  get replayPaused(): boolean {
    return this.paused;
  }

  /** Where a read request of `caller` (null: anonymous) goes. */
  route(caller: string | null): Promise<ReadRoute> {
    return this.decide(caller);
  }

  /** A statement target of one request routed to the replica: its plain reads go there, and `tally` counts where each statement went. */
  requestTarget(): { target: SqlTarget; tally: StatementTally } {
    const tally: StatementTally = { replica: 0, primary: 0 };
    return { target: replicaTarget(freshEm(this.orm), this.pool, tally), tally };
  }

  /** Counts a read request once answered, by where its statements went (wks_read_requests_total). */
  count(outcome: ReadOutcome): void {
    this.routed[outcome]++;
  }

  private async decide(caller: string | null): Promise<ReadRoute> {
    const lag = this.lagSeconds;
    if (lag === null) return 'primary_unavailable';
    if (lag > this.options.maxLagSeconds) return 'primary_lag';
    if (!caller) return 'replica';
    const written = await callerWriteLsn(this.primary, caller);
    return written !== null && lsnValue(written) > this.replayed! ? 'primary_own_write' : 'replica';
  }

  /** Records that `caller` has just written (after its request's transactions committed). */
  async recordWrite(caller: string): Promise<void> {
    await recordCallerWrite(this.primary, caller);
  }

  private poll(): Promise<void> {
    this.polling ??= this.readPositions().finally(() => (this.polling = null));
    return this.polling;
  }

  private async readPositions(): Promise<void> {
    const now = Date.now();
    try {
      // The primary first: a replica position read after it can only be further on.
      const primary = lsnValue(await primaryWalLsn(this.primary));
      const last = this.samples[this.samples.length - 1];
      if (!last || last.lsn !== primary) this.samples.push({ at: now, lsn: primary });
      const replica = await replicaReplay(this.pool);
      this.replayed = replica.lsn === null ? null : lsnValue(replica.lsn);
      this.paused = replica.paused;
      // Samples the replica has passed are of no more use, but the newest one it passed is kept as a floor.
      const firstAhead = this.samples.findIndex((s) => this.replayed === null || s.lsn > this.replayed);
      this.samples = firstAhead === -1 ? this.samples.slice(-1) : this.samples.slice(Math.max(0, firstAhead - 1));
      if (this.samples.length > 5000) this.samples = this.samples.slice(-5000);
    } catch (error) {
      if (this.replayed !== null) this.logger.warn({ err: error }, 'read replica unreachable; reads go to the primary');
      this.replayed = null;
    }
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.polling;
    await this.pool.end();
  }
}
