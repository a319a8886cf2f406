/** Statements on content_gap_reports, and on the questions a gap group is made of (reports, and zero-result searches in search_log). */
import { pgArray, sql, type Row, type SqlTarget } from '../db/sql.js';

/** Inserts a report; its id. */
export async function insertReport(
  db: SqlTarget,
  row: {
    workspaceId: string;
    question: string | null;
    slug: string | null;
    slugKnown: boolean;
    redacted: boolean;
    agentKeyId: string | null;
    /** The door it came through and the kind of caller (see src/context.ts). */
    door: string;
    caller: string | null;
    createdAt: Date;
  },
): Promise<number> {
  const [inserted] = await sql<{ id: number }>(
    db,
    `insert into content_gap_reports (workspace_id, question, slug, slug_known, redacted, agent_key_id, door, caller, created_at)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?) returning id`,
    [row.workspaceId, row.question, row.slug, row.slugKnown, row.redacted, row.agentKeyId, row.door, row.caller, row.createdAt],
  );
  return inserted.id;
}

/** Up to `limit` reports of a workspace (`*`), newest first. */
export async function reportRows(db: SqlTarget, workspaceId: string, limit: number): Promise<Row[]> {
  return sql(db, 'select * from content_gap_reports where workspace_id = ? order by created_at desc, id desc limit ?', [
    workspaceId,
    limit,
  ]);
}

/** The table holding a question of this kind: a content-gap report, or a logged search. */
const questionTable = (itemType: 'gap' | 'search') => (itemType === 'gap' ? 'content_gap_reports' : 'search_log');

/** When a question (a report or a logged search) was asked. */
export async function questionSeenAt(db: SqlTarget, itemType: 'gap' | 'search', itemId: number): Promise<string> {
  const table = questionTable(itemType);
  const [{ created_at: seen }] = await sql<{ created_at: string }>(db, `select created_at from ${table} where id = ?`, [itemId]);
  return seen;
}

/** Puts a question (a report or a logged search) into a group. */
export async function setQuestionGroup(db: SqlTarget, itemType: 'gap' | 'search', itemId: number, groupId: number): Promise<void> {
  const table = questionTable(itemType);
  await sql(db, `update ${table} set group_id = ? where id = ?`, [groupId, itemId]);
}

/** A question of a gap group: a report or a logged search, its text as stored. */
export interface GroupQuestionRow {
  group_id: number;
  item_type: 'gap' | 'search';
  item_id: number;
  question: string;
  created_at: string;
}

/**
 * The questions of groups `groupIds` of a workspace, at most `perGroup` of each (newest first):
 * reports with a question, and zero-result searches.
 */
export async function groupQuestions(
  db: SqlTarget,
  workspaceId: string,
  groupIds: number[],
  perGroup: number,
): Promise<GroupQuestionRow[]> {
  if (!groupIds.length) return [];
  return sql<GroupQuestionRow>(
    db,
    `select g.id as group_id, q.item_type, q.item_id, q.question, q.created_at
       from unnest(?::int[]) as g(id)
       cross join lateral (
         select * from (
           select 'gap' as item_type, r.id as item_id, r.question, r.created_at from content_gap_reports r
            where r.group_id = g.id and r.workspace_id = ? and r.question is not null
           union all
           select 'search', l.id, l.query, l.created_at from search_log l where l.group_id = g.id and l.workspace_id = ?) m
          order by m.created_at desc, m.item_id desc limit ?) q
      order by g.id, q.created_at desc, q.item_id desc`,
    [pgArray(groupIds), workspaceId, workspaceId, perGroup],
  );
}
