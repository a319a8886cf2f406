/** Statements on content_gap_groups (groups of similar unanswered questions). */
import { articleVisible } from './visibility.js';
import { pgArray, sql, type Row, type SqlTarget } from '../db/sql.js';

/** Sample questions a listed group carries (newest first). */
const SAMPLES = 3;

/** Marks a workspace's gap group resolved at `now` unless it is already; whether this call resolved it. */
export async function resolveGroup(db: SqlTarget, workspaceId: string, groupId: number, now: Date): Promise<boolean> {
  const rows = await sql(
    db,
    'update content_gap_groups set resolved_at = ? where id = ? and workspace_id = ? and resolved_at is null returning id',
    [now, groupId, workspaceId],
  );
  return rows.length > 0;
}

/** The questions of group `g` (its reports and zero-result searches) by door and caller, most first, as a jsonb array. */
const ASKED_BY = `(select coalesce(jsonb_agg(jsonb_build_object('door', c.door, 'caller', c.caller, 'questions', c.n)
                     order by c.n desc, c.door, c.caller), '[]'::jsonb)
     from (select coalesce(q.door, 'unknown') as door, coalesce(q.caller, 'unknown') as caller, count(*)::int as n
             from (select r.door, r.caller from content_gap_reports r where r.group_id = g.id
                   union all select l.door, l.caller from search_log l where l.group_id = g.id) q
            group by 1, 2) c)`;

/** A question's door and caller in a group's `asked_by`. */
export interface AskedByRow {
  door: string;
  caller: string;
  questions: number;
}

/** A group's row (`g.*`) with its latest proposal's id and status, and its questions by door and caller. */
export type GroupListRow = Row & { proposal_id: number | null; proposal_status: string | null; asked_by: AskedByRow[] };

/**
 * Up to 500 groups of a workspace, most frequent first: unresolved ones unless `withResolved`,
 * only `onlyId` when given; with `callers`, only groups those kinds of caller asked, most asked by
 * them first.
 */
export async function groupRows(
  db: SqlTarget,
  q: { workspaceId: string; withResolved: boolean; onlyId: number | null; callers: readonly string[] | null },
): Promise<GroupListRow[]> {
  return sql<GroupListRow>(
    db,
    `select * from (
       select g.*, p.id as proposal_id, p.status as proposal_status, ${ASKED_BY} as asked_by from content_gap_groups g
         left join lateral (select id, status from proposals where gap_group_id = g.id order by id desc limit 1) p on true
        where g.workspace_id = :workspace and (:with_resolved::boolean or g.resolved_at is null) and (:only::int is null or g.id = :only::int)) x
      where :callers::text[] is null or exists (select 1 from jsonb_array_elements(x.asked_by) e where e->>'caller' = any(:callers::text[]))
      order by (select coalesce(sum((e->>'questions')::int), 0) from jsonb_array_elements(x.asked_by) e
                 where :callers::text[] is null or e->>'caller' = any(:callers::text[])) desc,
               x.last_seen desc limit 500`,
    { workspace: q.workspaceId, with_resolved: q.withResolved, only: q.onlyId, callers: q.callers ? pgArray(q.callers) : null },
  );
}

/** Marks a group (of any workspace) resolved, keeping an earlier resolution time; its row (`*`), or undefined when there is none. */
export async function markGroupResolved(db: SqlTarget, id: number, now: Date): Promise<(Row & { workspace_id: string }) | undefined> {
  const [row] = await sql<Row & { workspace_id: string }>(
    db,
    'update content_gap_groups set resolved_at = coalesce(resolved_at, ?) where id = ? returning *',
    [now, id],
  );
  return row;
}

/** An open group as listed: counts, first and last seen, the nearest article if visible, a waiting proposal, sample questions. */
export interface GapRow {
  id: number;
  label: string;
  report_count: number;
  search_count: number;
  asked: number;
  first_seen: string;
  last_seen: string;
  nearest: string | null;
  proposal_id: number | null;
  samples: string[];
  asked_by: AskedByRow[];
}

/** Up to `limit` unresolved groups of a workspace (only `onlyId`, when given), most asked first, after the cursor (asked, id) when given. */
export async function openGapRows(
  db: SqlTarget,
  q: { workspaceId: string; canSee: boolean; afterAsked: number | null; afterId: number | null; limit: number; onlyId?: number },
): Promise<GapRow[]> {
  return sql<GapRow>(
    db,
    `select g.id, g.label, g.report_count, g.search_count, g.report_count + g.search_count as asked, g.first_seen, g.last_seen,
            (select a.slug from articles a join sections s on s.id = a.section_id
              where a.workspace_id = g.workspace_id and a.slug = g.nearest_article_slug and ${articleVisible('a', 's', ':see_restricted')}) as nearest,
            (select p.id from proposals p where p.gap_group_id = g.id and p.status = 'open' order by p.id desc limit 1) as proposal_id,
            array(select q.question from (
                    select r.question, r.created_at, r.id from content_gap_reports r where r.group_id = g.id and r.question is not null
                    union all
                    select l.query, l.created_at, l.id from search_log l where l.group_id = g.id) q
                  order by q.created_at desc, q.id desc limit ${SAMPLES}) as samples,
            ${ASKED_BY} as asked_by
       from content_gap_groups g
      where g.workspace_id = :workspace and g.resolved_at is null and (:only::int is null or g.id = :only::int)
        and (:after_asked::int is null or (g.report_count + g.search_count, g.id) < (:after_asked::int, :after_id::int))
      order by asked desc, g.id desc limit :limit`,
    {
      workspace: q.workspaceId,
      see_restricted: q.canSee,
      after_asked: q.afterAsked,
      after_id: q.afterId,
      limit: q.limit,
      only: q.onlyId ?? null,
    },
  );
}

/** A workspace's group by id, its row locked for the rest of the transaction: when it was resolved. */
export async function lockGroup(db: SqlTarget, groupId: number, workspaceId: string): Promise<{ resolved_at: string | null } | undefined> {
  const [group] = await sql<{ resolved_at: string | null }>(
    db,
    'select resolved_at from content_gap_groups where id = ? and workspace_id = ? for update',
    [groupId, workspaceId],
  );
  return group;
}

/** An open group as clustering compares it. */
export interface GroupRow {
  id: number;
  centroid: number[];
  report_count: number;
  search_count: number;
}

/** The unresolved groups of a workspace in id order, locked for the rest of the transaction. */
export async function lockOpenGroups(db: SqlTarget, workspaceId: string): Promise<GroupRow[]> {
  return sql<GroupRow>(
    db,
    'select id, centroid, report_count, search_count from content_gap_groups where workspace_id = ? and resolved_at is null order by id for update',
    [workspaceId],
  );
}

/** Adds a question seen at `seen` to a group: its new centroid, one more report (or search), and the first and last seen widened. */
export async function growGroup(db: SqlTarget, id: number, centroid: number[], isReport: boolean, seen: string): Promise<void> {
  await sql(
    db,
    `update content_gap_groups set centroid = ?::real[], report_count = report_count + ?, search_count = search_count + ?,
       first_seen = least(first_seen, ?), last_seen = greatest(last_seen, ?) where id = ?`,
    [pgArray(centroid), isReport ? 1 : 0, isReport ? 0 : 1, seen, seen, id],
  );
}

/** Inserts a group of one question (a report or a search) seen at `seen`; its id. */
export async function insertGroup(
  db: SqlTarget,
  row: { workspaceId: string; label: string; centroid: number[]; isReport: boolean; seen: string; nearestArticleSlug: string | null },
): Promise<number> {
  const [inserted] = await sql<{ id: number }>(
    db,
    `insert into content_gap_groups (workspace_id, label, centroid, report_count, search_count, first_seen, last_seen, nearest_article_slug)
     values (?, ?, ?::real[], ?, ?, ?, ?, ?) returning id`,
    [
      row.workspaceId,
      row.label,
      pgArray(row.centroid),
      row.isReport ? 1 : 0,
      row.isReport ? 0 : 1,
      row.seen,
      row.seen,
      row.nearestArticleSlug,
    ],
  );
  return inserted.id;
}
