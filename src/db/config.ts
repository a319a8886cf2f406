import { Migrator } from '@mikro-orm/migrations';
import { defineConfig, type EventSubscriber, type Options } from '@mikro-orm/postgresql';
import { ENTITIES } from '../entities/index.js';
import { MIGRATIONS } from './migrations/index.js';

/** Where the ORM connects: a URL for a real PostgreSQL, or host/port of the embedded socket. */
export type DbConnection = Pick<Options, 'clientUrl' | 'host' | 'port' | 'dbName' | 'user' | 'password'>;

/**
 * The one ORM configuration; only the connection, the pool size and the subscribers vary between
 * runs (the service's ORM writes the audit and outbox rows a transaction recorded, just before it
 * commits: its opener passes that subscriber, which lives with the statements in store/).
 */
export function ormConfig(connection: DbConnection, poolMax = 10, subscribers: EventSubscriber[] = []) {
  return defineConfig({
    ...connection,
    entities: ENTITIES,
    subscribers,
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
