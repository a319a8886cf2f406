/** Statements on search_log: logging a search (queueing a zero-result one for embedding) and the analytics read over it. */
import { sql, sqlRelaxed, type SqlTarget } from '../db/sql.js';
import { ENQUEUE_EMBEDDING } from './embeddings.js';

/** One search as the log keeps it. */
export interface LoggedSearch {
  workspaceId: string;
  agentKeyId: string | null;
  query: string;
  resultCount: number;
  ranking: string;
  durationMs: number;
  /** The door it came through and the kind of caller (see src/context.ts). */
  door: string;
  caller: string | null;
}

/**
 * Logs a search and, when `gap`, queues it for embedding (so it joins a content-gap group): one
 * statement, committed without waiting for the WAL flush.
 */
export async function logSearch(db: SqlTarget, search: LoggedSearch, gap: boolean): Promise<void> {
  await sqlRelaxed(
    db,
    `with logged as (
       insert into search_log (workspace_id, agent_key_id, query, result_count, ranking, duration_ms, door, caller, created_at)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?) returning id)
     ${ENQUEUE_EMBEDDING('search', 'select id, ?::uuid from logged where ?::boolean')}`,
    [
      search.workspaceId,
      search.agentKeyId,
      search.query,
      search.resultCount,
      search.ranking,
      search.durationMs,
      search.door,
      search.caller,
      new Date(),
      search.workspaceId,
      gap,
    ],
  );
}

/** How many top queries (and top zero-result queries) a day lists. */
const TOP = 10;

/** Searches since `days` days ago (a `?` for the days). */
const SINCE = `now() - make_interval(days => ?::int)`;

/** A day's search totals (UTC). */
export interface SearchDayRow {
  day: string;
  searches: number;
  zero: number;
  fulltext: number;
  semantic: number;
  hybrid: number;
  p50: number | null;
  p95: number | null;
}

/** A workspace's searches per day over the last `days` days, newest first: counts, rankings used, p50/p95 time. */
export function searchDays(db: SqlTarget, workspaceId: string, days: number): Promise<SearchDayRow[]> {
  const since = SINCE;
  return sql<SearchDayRow>(
    db,
    `select to_char(date_trunc('day', created_at at time zone 'UTC'), 'YYYY-MM-DD') as day, count(*)::int as searches,
              count(*) filter (where result_count = 0)::int as zero,
              count(*) filter (where ranking in ('fulltext', 'fulltext_bounded'))::int as fulltext,
              count(*) filter (where ranking = 'semantic')::int as semantic,
              count(*) filter (where ranking = 'hybrid')::int as hybrid,
              percentile_cont(0.5) within group (order by duration_ms) as p50,
              percentile_cont(0.95) within group (order by duration_ms) as p95
         from search_log where workspace_id = ? and created_at >= ${since}
        group by 1 order by 1 desc`,
    [workspaceId, days],
  );
}

/** A query among a day's most asked (`zero`: among its most asked with no result), lower-cased. */
export interface TopQueryRow {
  day: string;
  query: string;
  count: number;
  zero: boolean;
}

/** A workspace's top queries and top zero-result queries per day over the last `days` days (at most TOP of each a day). */
export function topQueries(db: SqlTarget, workspaceId: string, days: number): Promise<TopQueryRow[]> {
  const since = SINCE;
  return sql<TopQueryRow>(
    db,
    `with counted as (
         select to_char(date_trunc('day', created_at at time zone 'UTC'), 'YYYY-MM-DD') as day, lower(query) as query,
                count(*)::int as count, count(*) filter (where result_count = 0)::int as zero_count
           from search_log where workspace_id = ? and created_at >= ${since}
          group by 1, 2),
       ranked as (
         select day, query, count, false as zero, row_number() over (partition by day order by count desc, query) as n from counted
         union all
         select day, query, zero_count, true, row_number() over (partition by day order by zero_count desc, query) from counted where zero_count > 0)
       select day, query, count, zero from ranked where n <= ${TOP} order by day, zero, count desc, query`,
    [workspaceId, days],
  );
}
