import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import type { DbConnection } from '../../mikro-orm.config.js';

export interface EmbeddedDatabase {
  connection: DbConnection;
  db: PGlite;
  close(): Promise<void>;
}

export interface EmbeddedOptions {
  /** Directory kept across restarts; omit for an in-memory database. */
  dataDir?: string;
  /** A `dumpDataDir()` tarball to start from (tests start each file from one migrated dump). */
  loadDataDir?: Blob;
  maxConnections?: number;
}

/** Starts PGlite behind a Postgres-protocol unix socket, so the ordinary driver connects to it. */
export async function startEmbedded(options: EmbeddedOptions): Promise<EmbeddedDatabase> {
  if (options.dataDir) await mkdir(options.dataDir, { recursive: true });
  const db = await PGlite.create({ dataDir: options.dataDir, loadDataDir: options.loadDataDir, extensions: { vector } });
  // PGlite serves every connection from one session, so a session setting holds for all of them.
  // A new 16 MB WAL segment is not filled with zeros first: the embedded database runs on the event
  // loop, and zero-filling one stalled the write (a commit) that crossed into it by ~90 ms, once
  // per 16 MB of WAL. PostgreSQL allows skipping it; the segment's space is then taken as written.
  await db.exec('set wal_init_zero = off');
  const socketDir = await mkdtemp(join(tmpdir(), 'wks-pg-'));
  const server = new PGLiteSocketServer({
    db,
    path: join(socketDir, '.s.PGSQL.5432'),
    // Above the ORM pool plus the migration lock client; the default of 1 resets extra connections.
    maxConnections: options.maxConnections ?? 64,
  });
  await server.start();
  return {
    connection: { host: socketDir, port: 5432, dbName: 'postgres', user: 'postgres', password: 'postgres' },
    db,
    async close() {
      await server.stop();
      await db.close();
      await rm(socketDir, { recursive: true, force: true });
    },
  };
}
