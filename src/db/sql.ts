import type { EntityManager } from '@mikro-orm/postgresql';
import type pg from 'pg';
import type { FailoverWatch } from './failover.js';
import { PoolWaits } from './poolWaits.js';

/**
 * Each ORM's node-postgres pool for statements outside a transaction (see openOrm). MikroORM's
 * own `execute` inlines every parameter into the SQL text and takes connections from knex's pool,
 * which under load cost more CPU than the query itself; here statements are parameterised and
 * the pool is node-postgres's.
 */
interface Attached {
  pool: pg.Pool;
  relaxed: pg.Pool;
  /** The embedded PGlite: one session serves every connection, one statement at a time. */
  embedded: boolean;
  /** Behind a transaction pooler: no named prepared statements, no per-connection settings. */
  pooled: boolean;
  /** Where session state may live (LISTEN): DATABASE_DIRECT_URL; null when that too goes through a pooler. */
  direct: pg.ClientConfig | null;
  /** A read replica's pool (DATABASE_READ_URL): only on a target made by `replicaTarget`. */
  replica?: pg.Pool;
  /** Where a request's statements went (a request routed to the replica: see StatementTally). */
  tally?: StatementTally;
  /** Where the pools report the connections they hand out (see watchPgPool). */
  waits: PoolWaits;
  /** The watch over the primary (a PostgreSQL server; null on the embedded database): told of every statement's failure. */
  failover: FailoverWatch | null;
}
const pools = new WeakMap<object, Attached>();

/** Where the statements `sql` sent for one request went: the replica, or the primary (a write, or a transaction's statement). */
export interface StatementTally {
  replica: number;
  primary: number;
}

/** What `sql` needs of an EntityManager (the shared statement EntityManager is typed as just this). */
export type SqlTarget = Pick<EntityManager, 'getConnection' | 'getTransactionContext' | 'getPlatform'>;

/**
 * Registers the pool that `sql` uses for this ORM's connection outside transactions. `embedded`:
 * the embedded PGlite, one session behind every socket connection (its socket runs each
 * connection's Parse … Sync round whole and shares named statements: see embeddedProtocol.mjs).
 */
export function attachPool(
  em: EntityManager,
  {
    pool,
    relaxed,
    direct,
    pooled,
    waits,
    failover,
  }: {
    pool: pg.Pool;
    relaxed?: pg.Pool;
    direct: pg.ClientConfig | null;
    pooled: boolean;
    waits?: PoolWaits;
    failover?: FailoverWatch | null;
  },
  embedded: boolean,
): void {
  pools.set(em.getConnection(), {
    pool,
    relaxed: relaxed ?? pool,
    embedded,
    pooled,
    direct,
    waits: waits ?? new PoolWaits(),
    failover: failover ?? null,
  });
}

/** The watch over this ORM's primary (null on the embedded database): for the door, /readyz and /metrics. */
export function failoverOf(em: SqlTarget): FailoverWatch | null {
  return attachedTo(em).failover;
}

/** Whether this ORM reaches PostgreSQL through a transaction pooler (see behindPooler). */
export function isPooled(em: SqlTarget): boolean {
  return attachedTo(em).pooled;
}

/** The direct connection of this ORM (DATABASE_DIRECT_URL), for LISTEN; null when it too goes through a pooler (no session to listen on). */
export function directConfig(em: SqlTarget): pg.ClientConfig | null {
  return attachedTo(em).direct;
}

/**
 * The last `max` results of a text conversion, most recently used kept: hot statements stay
 * converted however many one-off texts (bulk inserts of varying row counts) pass through.
 */
function textCache<V>(max: number) {
  const map = new Map<string, V>();
  return {
    get(key: string): V | undefined {
      const value = map.get(key);
      if (value !== undefined && map.size > max / 2) {
        // Refreshed only once the cache is half full: until then nothing is evicted.
        map.delete(key);
        map.set(key, value);
      }
      return value;
    },
    set(key: string, value: V): void {
      map.set(key, value);
      if (map.size > max) map.delete(map.keys().next().value!);
    },
  };
}

/** `?` placeholders as `$1, $2, …` (outside quoted literals). */
const numbered = textCache<string>(2000);
export function toNumbered(text: string): string {
  let out = numbered.get(text);
  if (out !== undefined) return out;
  let count = 0;
  out = text.replace(/'[^']*'|\?/g, (m) => (m === '?' ? `$${++count}` : m));
  numbered.set(text, out);
  return out;
}

/** A row whose columns the caller has not described: each must be checked or cast where it is read. */
export type Row = Record<string, unknown>;

/** Values for `?` placeholders in order, or for `:name` placeholders by name (for statements with more than a handful). */
export type Params = readonly unknown[] | Readonly<Record<string, unknown>>;

/** `:name` placeholders as `?` (outside quoted literals; `::type` casts untouched), with the names in order. */
const positional = textCache<{ text: string; names: string[] }>(2000);
export function toPositional(text: string): { text: string; names: string[] } {
  const known = positional.get(text);
  if (known) return known;
  let out = '';
  const names: string[] = [];
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === "'") quoted = !quoted;
    if (quoted || ch !== ':') {
      if (!quoted && ch === '?') throw new Error('a statement with :name placeholders cannot also use ?');
      out += ch;
      continue;
    }
    if (text[i + 1] === ':') {
      out += '::';
      i++;
      continue;
    }
    const name = /^[A-Za-z_]\w*/.exec(text.slice(i + 1, i + 65))?.[0];
    if (!name) {
      out += ch;
      continue;
    }
    names.push(name);
    out += '?';
    i += name.length;
  }
  const converted = { text: out, names };
  positional.set(text, converted);
  return converted;
}

/** The statement with `?` placeholders and its values in order. */
function bind(text: string, params: Params): { text: string; values: readonly unknown[] } {
  if (Array.isArray(params)) return { text, values: params };
  const named = params as Readonly<Record<string, unknown>>;
  const converted = toPositional(text);
  return {
    text: converted.text,
    values: converted.names.map((name) => {
      if (!(name in named)) throw new Error(`no value for :${name}`);
      return named[name];
    }),
  };
}

/** Dates as ISO instants (exact for timestamptz whatever the process's time zone); undefined as null. */
const param = (v: unknown) => (v instanceof Date ? v.toISOString() : v === undefined ? null : v);

/**
 * Runs raw SQL (`?` placeholders, or `:name` ones with an object of values; bound as parameters) inside the EntityManager's transaction if
 * it has one, else as one autocommit statement on the ORM's node-postgres pool. Rows come back as
 * node-postgres gives them, with the ORM's type parsers (timestamps as strings). `name` makes it a
 * named prepared statement (parsed and planned once per connection): for hot statements whose
 * plan does not depend on the values, such as lookups by key. Behind a transaction pooler the name
 * is dropped here, for every caller: a statement prepared on one server connection does not exist
 * on the next one the pooler hands out, and preparing it again where it does fails ("already
 * exists"); the unnamed statement of one Parse/Bind/Execute/Sync round is safe there.
 */
export async function sql<T = Row>(em: SqlTarget, text: string, params: Params = [], name?: string): Promise<T[]> {
  const attached = attachedTo(em);
  const config = statement(em, false, text, params, attached.pooled ? undefined : name);
  const trx = em.getTransactionContext<{ client: { acquireConnection(): Promise<pg.ClientBase> } }>();
  const toReplica = !trx && attached.replica !== undefined && onlyReads(config.text);
  if (attached.tally) attached.tally[toReplica ? 'replica' : 'primary']++;
  try {
    if (trx) return (await (await trx.client.acquireConnection()).query(config)).rows as T[];
    return (await (toReplica ? attached.replica! : attached.pool).query(config)).rows as T[];
  } catch (error) {
    // The replica's failures are the read router's business; the primary's may mean it is gone.
    if (!toReplica) attached.failover?.report(error);
    throw error;
  }
}

/**
 * One autocommit statement whose commit does not wait for the WAL flush (`synchronous_commit =
 * off`): for writes that may be lost in a crash without harm, such as the search log. Never part
 * of a transaction. Behind a transaction pooler (no per-connection setting survives there) the
 * setting is made for the statement's own transaction: `SET LOCAL` and the statement, values
 * inlined, as one simple-protocol message, which PostgreSQL runs as one implicit transaction.
 */
export async function sqlRelaxed<T = Row>(em: SqlTarget, text: string, params: Params = []): Promise<T[]> {
  const attached = attachedTo(em);
  try {
    // The embedded database's commits never wait for a flush (PGlite's file system makes no fsync),
    // so there the statement is a plain one, its values parameters: an upload's part travels as
    // binary instead of a hex literal built on the request thread and parsed by the database's.
    if (!attached.pooled) return (await attached.relaxed.query(statement(em, false, text, params))).rows as T[];
    const inlined = statement(em, true, text, params).text;
    const results = (await attached.relaxed.query(`set local synchronous_commit = off; ${inlined}`)) as unknown as pg.QueryResult[];
    return results[results.length - 1].rows as T[];
  } catch (error) {
    attached.failover?.report(error);
    throw error;
  }
}

/** Connections of this ORM's node-postgres pools: in all, idle, and callers waiting for one (for /metrics). */
export function poolStats(em: SqlTarget): Record<'statements' | 'relaxed', { total: number; idle: number; waiting: number }> {
  const { pool, relaxed } = attachedTo(em);
  const of = (p: pg.Pool) => ({ total: p.totalCount, idle: p.idleCount, waiting: p.waitingCount });
  return { statements: of(pool), relaxed: of(relaxed) };
}

/** Where this ORM's pools report each connection they hand out and how long its caller waited (for /metrics). */
export function poolWaits(em: SqlTarget): PoolWaits {
  return attachedTo(em).waits;
}

/**
 * Whether statements sent at once run at once: on a PostgreSQL server, outside a transaction (the
 * embedded PGlite serves one statement at a time, and a transaction has one connection).
 */
export function runsConcurrently(em: SqlTarget): boolean {
  return !attachedTo(em).embedded && !em.getTransactionContext();
}

/** The pool behind `sqlRelaxed` (shared with the rate limiter on a PostgreSQL server; ended by the ORM's close). */
export function relaxedPool(em: SqlTarget): pg.Pool {
  return attachedTo(em).relaxed;
}

/**
 * A statement target beside `em` (a fresh EntityManager that never holds a transaction) whose
 * plain reads go to the replica's pool; every other statement still goes to the primary.
 */
export function replicaTarget(em: SqlTarget & object, replica: pg.Pool, tally?: StatementTally): SqlTarget {
  pools.set(em, { ...attachedTo(em), replica, tally });
  return em;
}

/**
 * `em` (a fresh EntityManager of the request) reading where `target` reads: when `target` is a
 * `replicaTarget`, `em`'s plain reads by `sql` outside a transaction go to the same replica (its
 * transactions, forks and writes, and what MikroORM itself loads and flushes, stay on the primary).
 */
export function readingLike<E extends SqlTarget & object>(em: E, target: SqlTarget): E {
  const { replica, tally } = pools.get(target) ?? {};
  if (replica) pools.set(em, { ...attachedTo(em), replica, tally });
  return em;
}

/**
 * Whether a statement only reads (a SELECT, or a WITH of SELECTs, or the plan of one — EXPLAIN with
 * its options in parentheses — with no row locks and no function that writes or notifies): only
 * those may go to a read-only replica.
 */
const readOnly = textCache<boolean>(2000);
export function onlyReads(text: string): boolean {
  let known = readOnly.get(text);
  if (known !== undefined) return known;
  known =
    /^\s*(explain\s*\([^)]*\)\s*)?(select|with)\b/i.test(text) &&
    !/\b(insert|update|delete|merge|nextval|setval|pg_notify|set_config|pg_advisory\w*|pg_try_advisory\w*|for\s+share|for\s+no\s+key|for\s+key)\b/i.test(
      text,
    );
  readOnly.set(text, known);
  return known;
}

function attachedTo(em: SqlTarget) {
  const attached = pools.get(em) ?? pools.get(em.getConnection());
  if (!attached) throw new Error('no pool attached to this ORM (open it with openOrm)');
  return attached;
}

function statement(em: SqlTarget, inline: boolean, raw: string, params: Params, name?: string): pg.QueryConfig {
  const { text, values } = bind(raw, params);
  if (!values.length) return { text };
  return inline
    ? { text: em.getPlatform().formatQuery(text, values as unknown[]) }
    : { name, text: toNumbered(text), values: values.map(param) };
}

/**
 * An array literal for a `?::text[]`, `?::int[]`, `?::uuid[]` or `?::real[]` parameter (every
 * element quoted and escaped; null and undefined as an unquoted NULL element).
 */
export function pgArray(values: readonly (string | number | null | undefined)[]): string {
  return `{${values.map((v) => (v == null ? 'NULL' : `"${String(v).replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`)).join(',')}}`;
}
