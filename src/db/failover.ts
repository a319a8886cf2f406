/**
 * Following the primary when it changes: a database error that says the primary went away
 * (the connection dropped, the server shut down or restarted) or is no longer the primary (a
 * write refused as read-only: it was demoted, or a stable address now reaches a standby) empties
 * the ORM's pools, so no later statement runs on a connection to the old primary, and checks at
 * once for a writable server. While none answers, requests are refused at the door with 503 and
 * Retry-After (health.ts) instead of each waiting on connections that cannot come; new
 * connections find the writable host themselves (one host: whatever the address reaches now;
 * several: the first read-write one, see hostPicking.ts).
 */
import { EventEmitter } from 'node:events';
import type pg from 'pg';
import { signalsLostPrimary } from '../errors.js';
import type { TarnPool } from './poolWaits.js';

/** Which server a probe reached: its address and timeline (a promotion starts a new timeline), or why none serves writes. */
export type ProbeResult = { writable: true; server: string } | { writable: false; reason: string };

/** What a watch empties: node-postgres pools and knex's (tarn). */
export interface WatchedPools {
  pg: pg.Pool[];
  tarn: TarnPool | null;
}

/** What /readyz, /metrics and the door read. */
export type WatchState = 'serving' | 'checking' | 'switching';

const PROBE_EVERY_MS = 250;
/** While serving, how often the watch asks which server a new connection reaches (see beat). */
const HEARTBEAT_MS = 5_000;

/**
 * One ORM's watch over its primary. `report` takes every database error the ORM's statements
 * meet; one that signals a lost primary empties the pools and probes. A probe that finds a
 * writable server ends it there (a dropped connection, not a failover); one that does not starts
 * the switch: `switching` until a probe finds one (the door refuses requests meanwhile). A
 * failover is counted when the writable server found is another one than before (another
 * address, or a new timeline). Events: `lost` (reason), `restored` (seconds switching, whether
 * the primary changed).
 */
export class FailoverWatch extends EventEmitter {
  state: WatchState = 'serving';
  /** Times the writable server changed (wks_db_failovers_total). */
  failovers = 0;
  /** Times the pools were emptied because the primary was lost. */
  losses = 0;
  private server: string | null = null;
  private switchingSince = 0;
  /** Connections that were busy when the primary was lost: cut if it does not come back as it was. */
  private suspects: Busy[] = [];
  private timer: NodeJS.Timeout | null = null;
  private heartbeat: NodeJS.Timeout | null = null;
  private beating = false;
  private closed = false;

  constructor(
    private readonly probe: () => Promise<ProbeResult>,
    private readonly pools: () => WatchedPools,
  ) {
    super();
  }

  /** Learns the server first served (a later change of it is a failover), and keeps asking (see beat). */
  async start(): Promise<void> {
    const found = await this.probe().catch(() => null);
    if (found?.writable) this.server = found.server;
    this.heartbeat ??= setInterval(() => void this.beat(), HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  /**
   * While serving, a probe every HEARTBEAT_MS. One that finds another writable server than the one
   * served (a stable address repointed after a promotion) is a failover no statement may report:
   * a COMMIT on the old primary waiting for its synchronous standby, now promoted, waits for ever
   * without an error, and with every request waiting on one, none meets the old primary's refusal.
   * The pools are emptied and those statements cut, as on a reported loss. A probe that fails or
   * finds no writable server says nothing here: statements report real losses themselves.
   */
  private async beat(): Promise<void> {
    if (this.closed || this.beating || this.state !== 'serving' || this.server === null) return;
    this.beating = true;
    try {
      const found = await this.probe().catch(() => null);
      if (this.closed || this.state !== 'serving' || !found?.writable || found.server === this.server) return;
      this.lose(`a new connection reaches another primary (${found.server})`);
      this.restore(found.server);
    } finally {
      this.beating = false;
    }
  }

  /** Whether requests may go to the database now (not while the switch looks for a writable server). */
  get serving(): boolean {
    return this.state !== 'switching';
  }

  /** Takes a database error met by a statement or a pool; a lost primary starts a check. */
  report(error: unknown): void {
    if (this.closed || this.state !== 'serving' || !signalsLostPrimary(error)) return;
    this.lose((error as Error).message);
    void this.check();
  }

  /** The primary is lost: the pools are emptied (busy connections kept as suspects) and it is said why. */
  private lose(reason: string): void {
    this.state = 'checking';
    this.losses++;
    this.empty();
    this.emit('lost', reason);
  }

  private async check(): Promise<void> {
    const found = await this.probe().catch((error: Error): ProbeResult => ({ writable: false, reason: error.message }));
    if (this.closed) return;
    if (found.writable) return this.restore(found.server);
    if (this.state === 'checking') {
      this.state = 'switching';
      this.switchingSince = performance.now();
      // A statement still running on the lost primary may never return (a COMMIT waiting for a synchronous
      // standby that was promoted): cut it, so its request fails now, as one whose outcome is unknown.
      this.cutSuspects();
    }
    this.timer = setTimeout(() => void this.check(), PROBE_EVERY_MS);
    this.timer.unref();
  }

  private restore(server: string): void {
    const changed = this.server !== null && server !== this.server;
    const seconds = this.state === 'switching' ? (performance.now() - this.switchingSince) / 1000 : 0;
    if (changed) this.failovers++;
    this.server = server;
    // Another primary serves: statements still running on the old one would only ever be answered there.
    if (changed) this.cutSuspects();
    // Connections opened while switching may have reached the old primary (one stable address): drop them too, once free.
    if (this.state === 'switching') this.empty();
    this.suspects = [];
    this.state = 'serving';
    this.emit('restored', seconds, changed);
  }

  /** Drops every idle connection now, and every busy one when it is handed back (remembering those, see cutSuspects). */
  private empty(): void {
    const { pg: pgPools, tarn } = this.pools();
    for (const pool of pgPools) this.suspects.push(...emptyPgPool(pool));
    if (tarn) this.suspects.push(...emptyTarnPool(tarn));
  }

  /** Cuts the connections that were busy when the primary was lost: their statements fail at once. */
  private cutSuspects(): void {
    for (const client of this.suspects) client.connection?.stream?.destroy();
    this.suspects = [];
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.heartbeat) clearInterval(this.heartbeat);
  }
}

/** pg-pool's own fields used here (pg-pool 3): its clients, the idle ones, and those to drop when released. */
interface PgPoolInternals {
  _clients: pg.Client[];
  _idle: { client: pg.Client }[];
  _expired: Set<pg.Client>;
  _remove(client: pg.Client): void;
}

/** A connection in use: its socket can be cut. */
type Busy = { connection?: { stream?: { destroy(): void } } };

/**
 * Ends a node-postgres pool's idle clients and marks the busy ones to be ended when released (as
 * pg-pool does with expired ones); returns the busy ones.
 */
export function emptyPgPool(pool: pg.Pool): Busy[] {
  const internals = pool as unknown as PgPoolInternals;
  const idle = new Set(internals._idle.map((item) => item.client));
  const busy = internals._clients.filter((client) => !idle.has(client));
  for (const client of busy) internals._expired.add(client);
  for (const client of idle) internals._remove(client);
  return busy;
}

/** tarn's own fields used here (tarn 3): resources free and in use. */
interface TarnInternals {
  free: { resource: TarnResource }[];
  used: { resource: TarnResource }[];
}
type TarnResource = Busy & { __knex__disposed?: unknown; end(): Promise<void> };

/** Ends knex's free connections and marks every one as disposed (knex's check on the next acquire destroys it); returns those in use. */
export function emptyTarnPool(pool: TarnPool): Busy[] {
  const internals = pool as unknown as TarnInternals;
  for (const { resource } of internals.used) resource.__knex__disposed ??= 'the primary was lost';
  for (const { resource } of internals.free) {
    resource.__knex__disposed ??= 'the primary was lost';
    resource.end().catch(() => undefined);
  }
  return internals.used.map(({ resource }) => resource);
}
