import { sql, type SqlTarget } from '../db/sql.js';
import type { QueryCount, SearchDay } from '../types/searchAnalytics.js';
import { scrub } from './scrub.js';

const TOP = 10;

/**
 * A workspace's searches per day (UTC) over the last `days` days, newest first: counts,
 * zero-result rate, rankings used, p50/p95 time, and the top queries and top zero-result queries
 * (grouped lower-cased, scrubbed like content-gap questions before they leave). Two statements
 * whatever the number of days or queries.
 */
export async function searchAnalytics(db: SqlTarget, workspaceId: string, days: number): Promise<SearchDay[]> {
  const since = `now() - make_interval(days => ?::int)`;
  const [totals, tops] = await Promise.all([
    sql<{
      day: string;
      searches: number;
      zero: number;
      fulltext: number;
      semantic: number;
      hybrid: number;
      p50: number | null;
      p95: number | null;
    }>(
      db,
      `select to_char(date_trunc('day', created_at at time zone 'UTC'), 'YYYY-MM-DD') as day, count(*)::int as searches,
              count(*) filter (where result_count = 0)::int as zero,
              count(*) filter (where ranking = 'fulltext')::int as fulltext,
              count(*) filter (where ranking = 'semantic')::int as semantic,
              count(*) filter (where ranking = 'hybrid')::int as hybrid,
              percentile_cont(0.5) within group (order by duration_ms) as p50,
              percentile_cont(0.95) within group (order by duration_ms) as p95
         from search_log where workspace_id = ? and created_at >= ${since}
        group by 1 order by 1 desc`,
      [workspaceId, days],
    ),
    sql<{ day: string; query: string; count: number; zero: boolean }>(
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
    ),
  ]);
  const top = new Map<string, { all: QueryCount[]; zero: QueryCount[] }>();
  for (const row of tops) {
    const entry = top.get(row.day) ?? { all: [], zero: [] };
    (row.zero ? entry.zero : entry.all).push({ query: scrub(row.query).text, count: Number(row.count) });
    top.set(row.day, entry);
  }
  return totals.map((t) => ({
    day: t.day,
    searches: t.searches,
    zeroResults: t.zero,
    zeroResultRate: t.searches ? Math.round((t.zero / t.searches) * 1000) / 1000 : 0,
    rankings: { fulltext: t.fulltext, semantic: t.semantic, hybrid: t.hybrid },
    p50Ms: Number(t.p50 ?? 0),
    p95Ms: Number(t.p95 ?? 0),
    topQueries: top.get(t.day)?.all ?? [],
    topZeroResultQueries: top.get(t.day)?.zero ?? [],
  }));
}
