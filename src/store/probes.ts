/** Statements that only prove the database answers: the readiness probe's, and the heartbeat of a connection held open. */
import type pg from 'pg';
import { sql, type SqlTarget } from '../db/sql.js';

/** One trivial statement on the pool behind `db`: resolves when the database answered, rejects when it failed. */
export async function pingDatabase(db: SqlTarget): Promise<void> {
  await sql(db, 'select 1');
}

/** One trivial statement on a connection held open (a listener's): resolves when it answered, rejects when it failed. */
export async function pingConnection(client: pg.ClientBase): Promise<void> {
  await client.query('select 1');
}
