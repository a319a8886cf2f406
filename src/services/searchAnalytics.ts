import type { SqlTarget } from '../db/sql.js';
import { searchDays, topQueries } from '../store/searchLog.js';
import type { QueryCount, SearchDay } from '../types/searchAnalytics.js';
import { scrub } from './scrub.js';

/**
 * A workspace's searches per day (UTC) over the last `days` days, newest first: counts,
 * zero-result rate, rankings used, p50/p95 time, and the top queries and top zero-result queries
 * (grouped lower-cased, scrubbed like content-gap questions before they leave). Two statements
 * whatever the number of days or queries.
 */
export async function searchAnalytics(db: SqlTarget, workspaceId: string, days: number): Promise<SearchDay[]> {
  const [totals, tops] = await Promise.all([searchDays(db, workspaceId, days), topQueries(db, workspaceId, days)]);
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
