import pg from 'pg';
import { MikroORM } from '@mikro-orm/postgresql';
import { ormConfig, type DbConnection } from '../../mikro-orm.config.js';

const MIGRATION_LOCK = 0x5753_4b31; // arbitrary, fixed: serialises migrations across processes

/**
 * A fresh EntityManager of this ORM. Never resolved from the async context: MikroORM would
 * otherwise fork whatever transaction the caller happens to run in (a timer set inside a request's
 * transaction, or another server's ORM in the same process).
 */
export function freshEm(orm: MikroORM) {
  return orm.em.fork({ disableContextResolution: true });
}

/** Opens the ORM on a connection. */
export async function openOrm(connection: DbConnection, poolMax = 10): Promise<MikroORM> {
  return MikroORM.init(ormConfig(connection, poolMax));
}

/**
 * Applies pending migrations. On a shared server, a session advisory lock held on a separate
 * client lets only one process migrate at a time; the others then find nothing pending.
 */
export async function migrate(orm: MikroORM, connection: DbConnection, shared: boolean): Promise<string[]> {
  const migrator = orm.getMigrator();
  if (!shared) return (await migrator.up()).map((m) => m.name);
  const client = new pg.Client(pgClientConfig(connection));
  await client.connect();
  try {
    await client.query('select pg_advisory_lock($1)', [MIGRATION_LOCK]);
    return (await migrator.up()).map((m) => m.name);
  } finally {
    await client.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
    await client.end();
  }
}

/** The same connection expressed for node-postgres. */
export function pgClientConfig(connection: DbConnection): pg.ClientConfig {
  if (connection.clientUrl) return { connectionString: connection.clientUrl };
  return { host: connection.host, port: connection.port, database: connection.dbName, user: connection.user, password: connection.password as string | undefined };
}
