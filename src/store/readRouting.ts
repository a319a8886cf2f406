/** Statements of read routing with a replica: WAL positions of the primary and the replica, and each caller's last write. */
import type pg from 'pg';
import { sql, type SqlTarget } from '../db/sql.js';

/** The primary's current WAL position (as text, `X/Y`). */
export async function primaryWalLsn(db: SqlTarget): Promise<string> {
  const [row] = await sql<{ lsn: string }>(db, 'select pg_current_wal_lsn()::text as lsn');
  return row.lsn;
}

/** How far the replica has replayed (null on a server that is not replaying), and whether replay is paused. */
export async function replicaReplay(replica: pg.Pool): Promise<{ lsn: string | null; paused: boolean }> {
  const { rows } = await replica.query<{ lsn: string | null; paused: boolean }>(
    'select pg_last_wal_replay_lsn()::text as lsn, (pg_is_in_recovery() and pg_is_wal_replay_paused()) as paused',
  );
  return rows[0];
}

/** Records that `caller` has just written: the primary's WAL position now is at or past every commit of its request. */
export async function recordCallerWrite(db: SqlTarget, caller: string): Promise<void> {
  await sql(
    db,
    `insert into caller_writes (caller, wal_lsn, written_at) values (?, pg_current_wal_lsn(), now())
     on conflict (caller) do update set wal_lsn = excluded.wal_lsn, written_at = excluded.written_at`,
    [caller],
    'caller_write_put',
  );
}

/** The WAL position after `caller`'s last write, if it wrote recently. */
export async function callerWriteLsn(db: SqlTarget, caller: string): Promise<string | null> {
  const [row] = await sql<{ lsn: string }>(
    db,
    'select wal_lsn::text as lsn from caller_writes where caller = ?',
    [caller],
    'caller_write_get',
  );
  return row?.lsn ?? null;
}

/** Deletes callers' write positions older than an hour (past any lag the router accepts). */
export async function deleteOldCallerWrites(db: SqlTarget): Promise<number> {
  const rows = await sql(db, `delete from caller_writes where written_at < now() - interval '1 hour' returning 1`);
  return rows.length;
}
