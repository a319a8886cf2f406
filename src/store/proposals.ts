/** Statements on proposals (suggested edits and new drafts, and their review). */
import { sql, type SqlTarget } from '../db/sql.js';

const COLUMNS =
  'id, workspace_id, kind, status, article_slug, base_version, section, title, markdown, summary, agent_key_id, member_id, reviewed_by, reviewed_at, reason, created_at, gap_group_id';

/** A row of proposals (COLUMNS), mapped to the entity by the service. */
export type ProposalRow = { id: number } & Record<string, unknown>;

/** Inserts an `open` proposal; the row it wrote. */
export async function insertProposalRow(
  db: SqlTarget,
  row: {
    workspaceId: string;
    kind: 'edit' | 'new';
    articleSlug: string | null;
    baseVersion: number | null;
    section: string | null;
    title: string | null;
    markdown: string | null;
    summary: string;
    agentKeyId: string | null;
    memberId: string | null;
    createdAt: Date;
    gapGroupId: number | null;
  },
): Promise<ProposalRow> {
  const [inserted] = await sql<ProposalRow>(
    db,
    `insert into proposals (workspace_id, kind, status, article_slug, base_version, section, title, markdown, summary, agent_key_id, member_id, created_at, gap_group_id)
       values (?, ?, 'open', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) returning ${COLUMNS}`,
    [
      row.workspaceId,
      row.kind,
      row.articleSlug,
      row.baseVersion,
      row.section,
      row.title,
      row.markdown,
      row.summary,
      row.agentKeyId,
      row.memberId,
      row.createdAt,
      row.gapGroupId,
    ],
  );
  return inserted;
}

/** Up to `limit` proposals of a workspace, newest first: of one key and one status when given, older than `beforeId` when given. */
export async function proposalRows(
  db: SqlTarget,
  q: { workspaceId: string; keyId: string | null; status?: string | null; beforeId: number | null; limit: number },
): Promise<ProposalRow[]> {
  const params: unknown[] = [q.workspaceId];
  let where = 'workspace_id = ?';
  if (q.keyId) {
    where += ' and agent_key_id = ?';
    params.push(q.keyId);
  }
  if (q.status) {
    where += ' and status = ?';
    params.push(q.status);
  }
  if (q.beforeId !== null) {
    where += ' and id < ?';
    params.push(q.beforeId);
  }
  params.push(q.limit);
  return sql<ProposalRow>(db, `select ${COLUMNS} from proposals where ${where} order by id desc limit ?`, params);
}

/** Marks a proposal approved by `reviewer` (with the slug of the article it changed or made); the row it wrote. */
export async function markApproved(
  db: SqlTarget,
  id: number,
  articleSlug: string | null,
  reviewer: string | null,
  now: Date,
): Promise<ProposalRow> {
  const [row] = await sql<ProposalRow>(
    db,
    `update proposals set status = 'approved', article_slug = ?, reviewed_by = ?, reviewed_at = ? where id = ? returning ${COLUMNS}`,
    [articleSlug, reviewer, now, id],
  );
  return row;
}

/** Closes a proposal as rejected, or returned to its proposer, by `reviewer` with a reason (the comment); the row it wrote. */
export async function markReviewed(
  db: SqlTarget,
  id: number,
  status: 'rejected' | 'returned',
  reason: string,
  reviewer: string | null,
  now: Date,
): Promise<ProposalRow> {
  const [row] = await sql<ProposalRow>(
    db,
    `update proposals set status = ?, reason = ?, reviewed_by = ?, reviewed_at = ? where id = ? returning ${COLUMNS}`,
    [status, reason, reviewer, now, id],
  );
  return row;
}

/** A proposal of the workspace by id, its row locked for the rest of the transaction. */
export async function lockProposal(db: SqlTarget, id: number, workspaceId: string): Promise<ProposalRow | undefined> {
  const [row] = await sql<ProposalRow>(db, `select ${COLUMNS} from proposals where id = ? and workspace_id = ? for update`, [
    id,
    workspaceId,
  ]);
  return row;
}

/** A proposal of the workspace by id. */
export async function proposalById(db: SqlTarget, id: number, workspaceId: string): Promise<ProposalRow | undefined> {
  const [row] = await sql<ProposalRow>(db, `select ${COLUMNS} from proposals where id = ? and workspace_id = ?`, [id, workspaceId]);
  return row;
}

/** The open proposal made from a content-gap group, if one waits for review. */
export async function openProposalOfGroup(db: SqlTarget, groupId: number): Promise<{ id: number } | undefined> {
  const [waiting] = await sql<{ id: number }>(db, "select id from proposals where gap_group_id = ? and status = 'open'", [groupId]);
  return waiting;
}
