/** The shapes the bench's scenario table, runner and report share. */
import type autocannon from 'autocannon';
import type pg from 'pg';

/** One printed line: p95 is exact for sequential latency runs; autocannon reports p97.5 instead (its fixed percentiles). */
export interface Row {
  /** `<scenario id>/<variant id>`, e.g. `note-put/update`. */
  id?: string;
  scenario: string;
  variant: string;
  connections: number;
  rps: number;
  p50: number;
  p95: number | null;
  p97_5: number | null;
  p99: number;
  errors: number;
  note?: string;
  /** Every round's req/s, for ratios (side-by-side rows only). */
  perRound?: number[];
  /** CPU milliseconds per answered request in the median round: the server process's, and the local PostgreSQL's (null: not measured). */
  serverCpuMs?: number | null;
  /** The server's main thread alone (the one answering requests; without worker threads such as the embedding model's). */
  serverMainCpuMs?: number | null;
  databaseCpuMs?: number | null;
  /** With database statistics (AutocannonLoad.databaseStats), per answered request in the median round: WAL bytes and rows written. */
  walBytesPerRequest?: number;
  rowsPerRequest?: number;
  /** Rows written per request by table (inserted, updated of which HOT, deleted). */
  rowsByTable?: Record<string, { ins: number; upd: number; hot: number; del: number }>;
}

/** What a scenario needs seeded before it runs (the runner seeds the union for the scenarios chosen). */
/** `hot-note`: only the one note the probes read (`notes` includes it). */
export type Seed = 'notes' | 'hot-note' | 'articles' | 'search';

/**
 * Where a variant's requests go (`database`: pgbench; `service-lean`: the service without note history and
 * near-duplicate check; `plain-koa-indexed`: the plain Koa server on a table of its own with only the note search's
 * index; `postgraphile`: PostGraphile 5 serving that same table; `service-embedded`: a second service on a fresh
 * embedded database, seeded like the first, beside the one on PostgreSQL); every one but the service runs only when
 * the bench runs on PostgreSQL.
 */
export type Server =
  'service' | 'service-lean' | 'service-embedded' | 'plain-http' | 'plain-koa' | 'plain-koa-indexed' | 'postgraphile' | 'database';

/** Everything a variant needs to build its requests, known once the service runs and the data is seeded. */
export interface Bench {
  /** The base URL of the server the variant targets. */
  base: string;
  /** The process serving `base` (for its CPU time), when the bench started it. */
  pid?: number;
  /** The service's URL, whatever the variant targets. */
  service: string;
  databaseUrl: string | undefined;
  /** Bearer header of the key on the main workspace. */
  auth: Record<string, string>;
  /** Bearer header for search: the search workspace on PostgreSQL, else the main one. */
  searchAuth: Record<string, string>;
  workspaceId: string;
  /** The bench's organization (imports make workspaces in it). */
  organizationId: string;
  /** Articles the search scenario searches (2,000 on the embedded database). */
  corpus: number;
  /** The bench's own connections to DATABASE_URL (null on the embedded database). */
  pool: pg.Pool | null;
}

/** Other clients held busy while a variant is measured (e.g. hostile WebSockets); `stop` ends them. */
export interface Background {
  stop(): Promise<void>;
  /** What they did, for the note column (once stopped). */
  note(): string;
}

/** A load of many connections for DURATION seconds, run side by side with its neighbours in rounds. */
export interface AutocannonLoad {
  options: autocannon.Options;
  /** Started before each of the variant's runs (warm-up included) and stopped after it. */
  background?: () => Promise<Background>;
  /** Statuses that count as answers, not errors (beyond 2xx). */
  okStatuses?: number[];
  /** Text for the note column, from every measured round. */
  note?: (results: autocannon.Result[]) => string;
  /**
   * Reads pg_stat_wal and pg_stat_user_tables on this pool around each measured run (waiting for the
   * servers' connections to report their statistics): WAL bytes and rows written per request.
   */
  databaseStats?: pg.Pool | null;
}

/** One request at a time with exact percentiles: `count` requests cycling through `paths`, once (no rounds). */
export interface SequentialLoad {
  paths: string[];
  headers: Record<string, string>;
  count: number;
  /** Counts answers ranked this way (X-Search-Ranking) into the note column. */
  ranking?: string;
  /** Requests sent before measuring (default: the first 20 paths). */
  warmPaths?: string[];
  /** Work that runs while the requests are measured (they go on until it is done); what it resolves with goes in the note column. */
  during?: (b: Bench) => SequentialBackground;
  /** One request starts every `paceMs` (an agent polling), or at once when the previous took longer; default back to back. */
  paceMs?: number;
  /** Read once the requests are measured; appended to the note column. */
  noteAfter?: () => Promise<string>;
}

/** Background work of a sequential load: `started` once it is under way (its input is ready), `done` with a note. */
export interface SequentialBackground {
  started: Promise<void>;
  done: Promise<string>;
}

/** WebSocket connections to /graphql one at a time, each timed from open to connection_ack, with exact percentiles. */
export interface ConnectLoad {
  /** The bearer token of the connection_init. */
  token: string;
  count: number;
  /** One connection starts every `everyMs` (a console reconnects now and then; the service caps new sockets per address and second). */
  everyMs: number;
  background?: () => Promise<Background>;
}

/** How a variant is driven, known from the table alone; the load is built once its server runs. */
export type Drive =
  | { kind: 'autocannon'; load: (b: Bench) => AutocannonLoad }
  | { kind: 'sequential'; load: (b: Bench) => SequentialLoad }
  | { kind: 'connect'; load: (b: Bench) => ConnectLoad }
  /** The database alone: pgbench sending the service's PUT statement. */
  | { kind: 'pgbench' }
  /** A drill that brings its own servers and measures itself (the failover scenario): its row's figures. */
  | { kind: 'drill'; run: () => Promise<DrillRow> };

/** What a drill reports: a row's figures without its names. */
export type DrillRow = Omit<Row, 'id' | 'scenario' | 'variant' | 'connections'>;

/** One way of running a scenario; consecutive autocannon variants are measured side by side. */
export interface Variant {
  /** Stable id, named by ratios. */
  id: string;
  label: string | ((b: Bench) => string);
  connections: number;
  /** Default: the service. */
  server?: Server;
  drive: Drive;
}

/** A ratio of req/s, the median of per-round ratios of two side-by-side variants, with targets to show. */
export interface Ratio {
  /** Key in bench-results/latest.json's `ratios`. */
  key: string;
  label: string;
  of: { variant: string; name: string };
  over: { variant: string; name: string };
  /**
   * `p99Below`: the first side's p99 under this many ms; `p99AtMost`: at most this many times the second side's p99;
   * `cpuAtMost`: the first side's server CPU per request at most this many ms; `walAtMost`: the first side's WAL per
   * request at most this many times the second's (both measured with databaseStats).
   */
  target?: { min: number; p99Below?: number; p99AtMost?: number; cpuAtMost?: number; walAtMost?: number };
}

/** A row of the scenario table. */
export interface Scenario {
  /** Stable id for `--only=` (e.g. `note-get`). */
  id: string;
  /** The old scenario number, still accepted by `--only=`. */
  alias: number;
  /** Printed in the table's scenario column. */
  name: string;
  needs: Seed[];
  variants: Variant[];
  ratios?: Ratio[];
  /** Work to let finish before each measurement (e.g. background embedding the warm-up queued). */
  settle?: (b: Bench) => Promise<void>;
  /** Also count SQL statements per request for the lists (an in-process server, after every scenario). */
  countQueries?: boolean;
  /** Why the scenario is shaped as it is. */
  notes: string;
}
