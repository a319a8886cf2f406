import type { EntityManager } from '@mikro-orm/postgresql';
import type pg from 'pg';

/**
 * Each ORM's node-postgres pool for statements outside a transaction (see openOrm). MikroORM's
 * own `execute` inlines every parameter into the SQL text and takes connections from knex's pool,
 * which under load cost more CPU than the query itself; here statements are parameterised and
 * the pool is node-postgres's.
 */
const pools = new WeakMap<object, { pool: pg.Pool; relaxed: pg.Pool; inline: boolean }>();

/** What `sql` needs of an EntityManager (the shared statement EntityManager is typed as just this). */
export type SqlTarget = Pick<EntityManager, 'getConnection' | 'getTransactionContext' | 'getPlatform'>;

/**
 * Registers the pool that `sql` uses for this ORM's connection outside transactions. `inline`:
 * send parameters inlined as literals in one simple-protocol message (the embedded PGlite serves
 * every socket connection from one session and interleaves extended-protocol messages of
 * different connections, so a Parse of one can replace the unnamed statement of another).
 */
export function attachPool(em: EntityManager, { pool, relaxed }: { pool: pg.Pool; relaxed?: pg.Pool }, inline: boolean): void {
  pools.set(em.getConnection(), { pool, relaxed: relaxed ?? pool, inline });
}

/** `?` placeholders as `$1, $2, …` (outside quoted literals); the texts of hot statements are kept. */
const numbered = new Map<string, string>();
function toNumbered(text: string): string {
  let out = numbered.get(text);
  if (out !== undefined) return out;
  out = '';
  let count = 0;
  let quoted = false;
  for (const ch of text) {
    if (ch === "'") quoted = !quoted;
    out += ch === '?' && !quoted ? `$${++count}` : ch;
  }
  if (numbered.size < 2000) numbered.set(text, out);
  return out;
}

/** Dates as ISO instants (exact for timestamptz whatever the process's time zone); undefined as null. */
const param = (v: unknown) => (v instanceof Date ? v.toISOString() : v === undefined ? null : v);

/**
 * Runs raw SQL (`?` placeholders, bound as parameters) inside the EntityManager's transaction if
 * it has one, else as one autocommit statement on the ORM's node-postgres pool. Rows come back as
 * node-postgres gives them, with the ORM's type parsers (timestamps as strings). `name` makes it a
 * named prepared statement (parsed and planned once per connection): for hot statements whose
 * plan does not depend on the values, such as lookups by key.
 */
export async function sql<T = Record<string, any>>(em: SqlTarget, text: string, params: readonly unknown[] = [], name?: string): Promise<T[]> {
  const attached = attachedTo(em);
  const config = statement(em, attached.inline, text, params, name);
  const trx = em.getTransactionContext<{ client: { acquireConnection(): Promise<pg.ClientBase> } }>();
  const result = trx ? await (await trx.client.acquireConnection()).query(config) : await attached.pool.query(config);
  return result.rows as T[];
}

/**
 * One autocommit statement whose commit does not wait for the WAL flush (`synchronous_commit =
 * off`): for writes that may be lost in a crash without harm, such as the search log. Never part
 * of a transaction.
 */
export async function sqlRelaxed<T = Record<string, any>>(em: SqlTarget, text: string, params: readonly unknown[] = []): Promise<T[]> {
  const attached = attachedTo(em);
  return (await attached.relaxed.query(statement(em, attached.inline, text, params))).rows as T[];
}

/** The pool behind `sqlRelaxed` (shared with the rate limiter on a PostgreSQL server; ended by the ORM's close). */
export function relaxedPool(em: SqlTarget): pg.Pool {
  return attachedTo(em).relaxed;
}

function attachedTo(em: SqlTarget) {
  const attached = pools.get(em.getConnection());
  if (!attached) throw new Error('no pool attached to this ORM (open it with openOrm)');
  return attached;
}

function statement(em: SqlTarget, inline: boolean, text: string, params: readonly unknown[], name?: string): pg.QueryConfig {
  if (!params.length) return { text };
  return inline ? { text: em.getPlatform().formatQuery(text, params as unknown[]) } : { name, text: toNumbered(text), values: params.map(param) };
}

/** A text[] literal for `?::text[]`. */
export function pgArray(values: readonly string[]): string {
  return `{${values.map((v) => `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`).join(',')}}`;
}
