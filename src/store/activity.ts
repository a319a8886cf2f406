/** Statements on workspace_activity: a workspace's operations counted per UTC day, door and caller. */
import { pgArray, sql, sqlRelaxed, type SqlTarget } from '../db/sql.js';

/** One counter to add: a workspace's reads and writes through one door by one kind of caller on one UTC day. */
export interface ActivityCount {
  workspaceId: string;
  day: string;
  door: string;
  caller: string;
  reads: number;
  writes: number;
}

/**
 * Adds counters in one statement, committed without waiting for the WAL flush (statistics: a crash
 * may lose the last few seconds). A workspace deleted meanwhile is skipped.
 */
export async function addActivity(db: SqlTarget, counts: ActivityCount[]): Promise<void> {
  await sqlRelaxed(
    db,
    `insert into workspace_activity (workspace_id, day, door, caller, reads, writes)
     select u.workspace_id, u.day, u.door, u.caller, u.reads, u.writes
       from unnest(?::uuid[], ?::date[], ?::text[], ?::text[], ?::bigint[], ?::bigint[]) as u(workspace_id, day, door, caller, reads, writes)
      where exists (select 1 from workspaces w where w.id = u.workspace_id)
     on conflict (workspace_id, day, door, caller)
     do update set reads = workspace_activity.reads + excluded.reads, writes = workspace_activity.writes + excluded.writes`,
    [
      pgArray(counts.map((c) => c.workspaceId)),
      pgArray(counts.map((c) => c.day)),
      pgArray(counts.map((c) => c.door)),
      pgArray(counts.map((c) => c.caller)),
      pgArray(counts.map((c) => c.reads)),
      pgArray(counts.map((c) => c.writes)),
    ],
  );
}

/** A day's operations through one door by one kind of caller. */
export interface ActivityRow {
  day: string;
  door: string;
  caller: string;
  reads: number;
  writes: number;
  searches: number;
  gaps: number;
}

/**
 * A workspace's activity over the last `days` UTC days, oldest first: reads and writes (counted by
 * each process), searches (search_log) and content-gap reports, per day, door and caller; rows
 * recorded before doors were (null) read `unknown`.
 */
export async function activityRows(db: SqlTarget, workspaceId: string, days: number): Promise<ActivityRow[]> {
  return sql<ActivityRow>(
    db,
    `with since as (select (now() at time zone 'UTC')::date - (:days::int - 1) as day),
       ops as (
         select day, door, caller, reads, writes, 0::bigint as searches, 0::bigint as gaps from workspace_activity
          where workspace_id = :ws and day >= (select day from since)
         union all
         select (created_at at time zone 'UTC')::date, coalesce(door, 'unknown'), coalesce(caller, 'unknown'), 0, 0, 1, 0 from search_log
          where workspace_id = :ws and created_at >= (select day from since)::timestamp at time zone 'UTC'
         union all
         select (created_at at time zone 'UTC')::date, coalesce(door, 'unknown'), coalesce(caller, 'unknown'), 0, 0, 0, 1 from content_gap_reports
          where workspace_id = :ws and created_at >= (select day from since)::timestamp at time zone 'UTC')
     select to_char(day, 'YYYY-MM-DD') as day, door, caller, sum(reads)::int as reads, sum(writes)::int as writes,
            sum(searches)::int as searches, sum(gaps)::int as gaps
       from ops group by day, door, caller order by day, door, caller`,
    { ws: workspaceId, days },
  );
}

/** Deletes activity counters older than `days` days, up to `batch` of them; how many. */
export async function deleteOldActivity(db: SqlTarget, days: number, batch: number): Promise<number> {
  const [row] = await sql<{ n: number }>(
    db,
    `with doomed as (select workspace_id, day, door, caller from workspace_activity
                      where day < (now() at time zone 'UTC')::date - :days::int order by day limit :batch),
          gone as (delete from workspace_activity a using doomed d
                    where (a.workspace_id, a.day, a.door, a.caller) = (d.workspace_id, d.day, d.door, d.caller) returning 1)
     select count(*)::int as n from gone`,
    { days, batch },
  );
  return row?.n ?? 0;
}
