/** A workspace's usage in one statement: its plan, note quota counter and notes, uploads, articles by status and searches per day. */
import type { Plan } from '../plans.js';
import { sql, type SqlTarget } from '../db/sql.js';

/** A workspace's usage as the statement reads it (no row when the workspace does not exist). */
export interface UsageRow {
  plan: Plan | null;
  quota_used: number | null;
  notes: number;
  upload_count: number;
  upload_bytes: string;
  articles: Record<string, number>;
  searches: { day: string; count: number }[];
}

/** A workspace's usage: memory_usage, memory_notes, uploads, articles and the last seven UTC days of search_log. */
export async function workspaceUsageRow(db: SqlTarget, workspaceId: string): Promise<UsageRow | undefined> {
  const [row] = await sql<UsageRow>(
    db,
    `with w as (select w.id, o.plan from workspaces w join organizations o on o.id = w.organization_id where w.id = ?::uuid),
     days as (select d at time zone 'UTC' as start, (d + interval '1 day') at time zone 'UTC' as finish, to_char(d, 'YYYY-MM-DD') as day
              from generate_series(date_trunc('day', now() at time zone 'UTC') - interval '6 days',
                                   date_trunc('day', now() at time zone 'UTC'), interval '1 day') d)
     select w.plan,
       (select u.used from memory_usage u where u.workspace_id = w.id) as quota_used,
       (select count(*)::int from memory_notes n where n.workspace_id = w.id) as notes,
       (select count(*)::int from uploads up where up.workspace_id = w.id) as upload_count,
       (select coalesce(sum(up.size), 0)::text from uploads up where up.workspace_id = w.id) as upload_bytes,
       (select coalesce(json_object_agg(a.status, a.n), '{}'::json)
          from (select status, count(*)::int as n from articles where workspace_id = w.id group by status) a) as articles,
       (select json_agg(json_build_object('day', days.day, 'count',
            (select count(*)::int from search_log s where s.workspace_id = w.id
               and s.created_at >= days.start and s.created_at < days.finish)) order by days.start)
          from days) as searches
     from w`,
    [workspaceId],
  );
  return row;
}
