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

/** An open group as grouping compares it. */
export interface GroupRow {
  id: number;
  centroid: number[];
  report_count: number;
  search_count: number;
  last_seen: string;
  /** A proposal was ever made from it (it is then never merged into another group). */
  proposed: boolean;
}

/** The unresolved groups of a workspace in id order, locked for the rest of the transaction. */
export async function lockOpenGroups(db: SqlTarget, workspaceId: string): Promise<GroupRow[]> {
  return sql<GroupRow>(
    db,
    `select g.id, g.centroid, g.report_count, g.search_count, g.last_seen,
            exists (select 1 from proposals p where p.gap_group_id = g.id) as proposed
       from content_gap_groups g where g.workspace_id = ? and g.resolved_at is null order by g.id for update of g`,
    [workspaceId],
  );
}

/** The ids of a workspace's `limit` unresolved groups seen last (not locked). */
export async function openGroupIds(db: SqlTarget, workspaceId: string, limit: number): Promise<number[]> {
  const rows = await sql<{ id: number }>(
    db,
    'select id from content_gap_groups where workspace_id = ? and resolved_at is null order by last_seen desc, id desc limit ?',
    [workspaceId, limit],
  );
  return rows.map((r) => r.id);
}

/** A question of a group with its sentence vector (float32 bytes, of the model asked for). */
export interface MemberRow {
  group_id: number;
  item_type: 'gap' | 'search';
  item_id: number;
  question: string;
  vec: Buffer;
}

/**
 * The newest `perGroup` questions of each of `groupIds` (a workspace's) that have a vector of
 * `model`: reports with a question, and zero-result searches.
 */
export async function groupMembers(
  db: SqlTarget,
  workspaceId: string,
  groupIds: number[],
  perGroup: number,
  model: string,
): Promise<MemberRow[]> {
  if (!groupIds.length) return [];
  return sql<MemberRow>(
    db,
    `select g.id as group_id, q.item_type, q.item_id, q.question, e.vec
       from unnest(:ids::int[]) as g(id)
       cross join lateral (
         select * from (
           select 'gap' as item_type, r.id as item_id, r.question, r.created_at from content_gap_reports r
            where r.group_id = g.id and r.workspace_id = :ws and r.question is not null
           union all
           select 'search', l.id, l.query, l.created_at from search_log l where l.group_id = g.id and l.workspace_id = :ws) m
          order by m.created_at desc, m.item_id desc limit :per) q
       join embeddings e on e.item_type = q.item_type and e.item_id = q.item_id and e.passage = 0 and e.model = :model
      order by g.id, q.created_at desc, q.item_id desc`,
    { ids: pgArray(groupIds), ws: workspaceId, per: perGroup, model },
  );
}

/**
 * The newest `limit` questions of groups `groupIds` of a workspace that have a vector of `model`,
 * oldest first: reports with a question, and zero-result searches.
 */
export async function recentMembers(
  db: SqlTarget,
  workspaceId: string,
  groupIds: number[],
  limit: number,
  model: string,
): Promise<MemberRow[]> {
  if (!groupIds.length) return [];
  return sql<MemberRow>(
    db,
    `select q.group_id, q.item_type, q.item_id, q.question, e.vec from (
       select * from (
         select r.group_id, 'gap' as item_type, r.id as item_id, r.question, r.created_at from content_gap_reports r
          where r.workspace_id = :ws and r.group_id = any(:ids::int[]) and r.question is not null
         union all
         select l.group_id, 'search', l.id, l.query, l.created_at from search_log l where l.workspace_id = :ws and l.group_id = any(:ids::int[])) m
        order by m.created_at desc, m.item_type, m.item_id desc limit :limit) q
       join embeddings e on e.item_type = q.item_type and e.item_id = q.item_id and e.passage = 0 and e.model = :model
      order by q.created_at, q.item_type, q.item_id`,
    { ids: pgArray(groupIds), ws: workspaceId, limit, model },
  );
}

/** A question's new group. */
export interface QuestionMove {
  itemType: 'gap' | 'search';
  itemId: number;
  groupId: number;
}

/** Puts questions into groups (a statement per table that holds them). */
export async function moveQuestions(db: SqlTarget, moves: QuestionMove[]): Promise<void> {
  for (const [type, table] of [
    ['gap', 'content_gap_reports'],
    ['search', 'search_log'],
  ] as const) {
    const mine = moves.filter((m) => m.itemType === type);
    if (!mine.length) continue;
    await sql(db, `update ${table} t set group_id = m.g from unnest(?::int[], ?::int[]) as m(id, g) where t.id = m.id`, [
      pgArray(mine.map((m) => m.itemId)),
      pgArray(mine.map((m) => m.groupId)),
    ]);
  }
}

/**
 * Recounts groups `ids` (of a workspace) from the questions they hold after questions moved:
 * report and search counts, first and last seen, the label (their earliest question) and the
 * centroid given; deletes those left with no question and no proposal. The ids deleted.
 */
export async function refreshGroups(
  db: SqlTarget,
  workspaceId: string,
  ids: number[],
  centroids: Map<number, number[]>,
): Promise<number[]> {
  if (!ids.length) return [];
  const withCentroid = ids.filter((id) => centroids.has(id));
  await sql(
    db,
    `with q as (
       select r.group_id, 'gap' as kind, r.question, r.created_at, r.id from content_gap_reports r
        where r.workspace_id = :ws and r.group_id = any(:ids::int[])
       union all
       select l.group_id, 'search', l.query, l.created_at, l.id from search_log l where l.workspace_id = :ws and l.group_id = any(:ids::int[])),
     counted as (
       select group_id, count(*) filter (where kind = 'gap') as reports, count(*) filter (where kind = 'search') as searches,
              min(created_at) as first_seen, max(created_at) as last_seen,
              (array_agg(question order by created_at, id) filter (where question is not null))[1] as label
         from q group by group_id)
     update content_gap_groups g set report_count = c.reports, search_count = c.searches, first_seen = c.first_seen,
            last_seen = c.last_seen, label = coalesce(c.label, g.label)
       from counted c where g.id = c.group_id and g.workspace_id = :ws`,
    { ws: workspaceId, ids: pgArray(ids) },
  );
  for (const id of withCentroid) {
    await sql(db, 'update content_gap_groups set centroid = ?::real[] where id = ?', [pgArray(centroids.get(id)!), id]);
  }
  const deleted = await sql<{ id: number }>(
    db,
    `delete from content_gap_groups g where g.workspace_id = ? and g.id = any(?::int[])
        and not exists (select 1 from content_gap_reports r where r.group_id = g.id)
        and not exists (select 1 from search_log l where l.group_id = g.id)
        and not exists (select 1 from proposals p where p.gap_group_id = g.id)
      returning g.id`,
    [workspaceId, pgArray(ids)],
  );
  return deleted.map((d) => d.id);
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
