import 'reflect-metadata';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { startEmbedded } from '../../src/db/embedded.js';
import { migrate, openOrm } from '../../src/db/orm.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Path of a migrated PGlite dump every test file starts from ('' on a real PostgreSQL). */
    pgliteDump: string;
  }
}

/**
 * Prepares the database once per run: on a real PostgreSQL (DATABASE_URL) it applies the
 * migrations; on the embedded one it builds one migrated data directory and dumps it, so each
 * test file starts from a copy in about a second instead of initialising its own.
 */
export default async function setup(project: TestProject) {
  const url = process.env.DATABASE_URL;
  if (url) {
    const direct = { clientUrl: process.env.DATABASE_DIRECT_URL || url };
    const orm = await openOrm({ clientUrl: url }, 2, direct);
    await migrate(orm, { clientUrl: url }, true, direct);
    await orm.close();
    project.provide('pgliteDump', '');
    return;
  }
  const dir = await mkdtemp(join(tmpdir(), 'wks-test-'));
  const embedded = await startEmbedded({ dataDir: join(dir, 'pgdata') });
  const orm = await openOrm(embedded.connection, 2);
  await migrate(orm, embedded.connection, false);
  await orm.close();
  const dump = await embedded.dump();
  await embedded.close();
  const file = join(dir, 'migrated.tar');
  await writeFile(file, Buffer.from(await dump.arrayBuffer()));
  project.provide('pgliteDump', file);
  return async () => {
    await rm(dir, { recursive: true, force: true });
  };
}
