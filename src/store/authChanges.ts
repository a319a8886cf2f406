/**
 * Statements of the announcement that something authentication reads changed (keys, members,
 * organizations, sessions, grants): NOTIFY inside the changing transaction (delivered at commit),
 * LISTEN on a connection of each process's own.
 */
import type pg from 'pg';
import { sql, type SqlTarget } from '../db/sql.js';

/** The PostgreSQL channel on which every change that affects authentication is announced. */
const AUTH_CHANGED_CHANNEL = 'wks_auth_changed';

/** Announces, inside the changing transaction, that keys, members or plans changed (delivered to every listener at commit). */
export async function notifyAuthChanged(db: SqlTarget): Promise<void> {
  await sql(db, `select pg_notify('${AUTH_CHANGED_CHANNEL}', '')`);
}

/** Starts listening for the announcement on `client` (session state: a direct connection, never one behind a transaction pooler). */
export async function listenForAuthChanges(client: pg.ClientBase): Promise<void> {
  await client.query(`listen ${AUTH_CHANGED_CHANNEL}`);
}
