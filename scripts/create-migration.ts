/**
 * Writes a migration for the difference between the entities and the database schema.
 * Usage: DATABASE_URL=postgres://…/scratch npm run migration:create -- <name>
 * (applies the committed migrations to that database first; register the new class in
 * src/db/migrations/index.ts afterwards).
 */
import 'reflect-metadata';
import { openOrm } from '../src/db/orm.js';

const url = process.env.DATABASE_URL;
if (!url) {
  console.error('Set DATABASE_URL to a scratch PostgreSQL database.');
  process.exit(2);
}
const orm = await openOrm({ clientUrl: url });
try {
  const migrator = orm.getMigrator();
  await migrator.up();
  const result = await migrator.createMigration(undefined, false, false, process.argv[2]);
  console.log(result.diff.up.length ? `wrote ${result.fileName}:\n${result.diff.up.join('\n')}` : 'no changes');
} finally {
  await orm.close();
}
