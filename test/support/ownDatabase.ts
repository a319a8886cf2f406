import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** Runs one statement on a connection of its own to `url` (opened and closed around it); its rows. */
export async function queryOnce<T extends pg.QueryResultRow = pg.QueryResultRow>(url: string, statement: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(statement)).rows;
  } finally {
    await client.end();
  }
}

/** Runs one statement on the server's maintenance connection (`DATABASE_URL`). */
async function onServer(serverUrl: string, statement: string): Promise<void> {
  await queryOnce(serverUrl, statement);
}

/**
 * On PostgreSQL, a fresh database of the test's own beside the shared one (no other test process
 * reaches it): its URL and a drop. On the embedded database (no DATABASE_URL): undefined, since every
 * test app has a database of its own there already.
 */
export async function ownDatabase(
  prefix: string,
): Promise<{ url: string; directUrl: string; env: Record<string, string>; drop(): Promise<void> } | undefined> {
  if (!process.env.DATABASE_URL) return undefined;
  // Created and dropped on the direct connection (DATABASE_DIRECT_URL) when a pooler is in between; the app reaches it as it
  // reaches the shared one (a pooler whose [databases] has a `*` entry serves any database name).
  const serverUrl = process.env.DATABASE_DIRECT_URL || process.env.DATABASE_URL;
  const name = `${prefix}_${randomBytes(4).toString('hex')}`;
  await onServer(serverUrl, `create database ${name}`);
  const url = new URL(process.env.DATABASE_URL);
  url.pathname = `/${name}`;
  const direct = new URL(serverUrl);
  direct.pathname = `/${name}`;
  return {
    url: url.toString(),
    directUrl: direct.toString(),
    env: { DATABASE_URL: url.toString(), DATABASE_DIRECT_URL: direct.toString() },
    drop: () => onServer(serverUrl, `drop database if exists ${name} with (force)`),
  };
}
