/** Statements on content_gap_reports, and on the questions a gap group is made of (reports, and zero-result searches in search_log). */
import { sql, type Row, type SqlTarget } from '../db/sql.js';

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
