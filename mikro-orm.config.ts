import { Migrator } from '@mikro-orm/migrations';
import { defineConfig, type Options } from '@mikro-orm/postgresql';
import { ENTITIES } from './src/entities/index.js';
import { MIGRATIONS } from './src/db/migrations/index.js';
import { eventWriter } from './src/store/events.js';

/** Where the ORM connects: a URL for a real PostgreSQL, or host/port of the embedded socket. */
export type DbConnection = Pick<Options, 'clientUrl' | 'host' | 'port' | 'dbName' | 'user' | 'password'>;

/** The one ORM configuration; only the connection and pool size vary between runs. */
export function ormConfig(connection: DbConnection, poolMax = 10) {
  return defineConfig({
    ...connection,
    entities: ENTITIES,
    // Audit and outbox rows recorded in a transaction are written just before it commits.
    subscribers: [eventWriter],
    extensions: [Migrator],
    discovery: { disableDynamicFileAccess: true },
    migrations: {
      path: 'src/db/migrations',
      pathTs: 'src/db/migrations',
      emit: 'ts',
      snapshot: false,
      silent: true,
      transactional: true,
      allOrNothing: true,
      migrationsList: MIGRATIONS,
    },
    // The pgvector column exists only where the extension does (see the search migration).
    schemaGenerator: { skipColumns: { embeddings: ['embedding'] } },
    pool: { min: 0, max: poolMax },
    forceUtcTimezone: true,
    debug: false,
    allowGlobalContext: false,
  });
}

export default ormConfig({ clientUrl: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' });
