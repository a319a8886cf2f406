/** Statements on article_revisions (the versions the revision trigger records), and what the trigger records of a change. */
import { revisionVisible } from './visibility.js';
import { pgArray, sql, type SqlTarget } from '../db/sql.js';

const ENTRY_COLUMNS = `r.version, r.title, r.status, r.visibility, s.key as section, r.position, r.action, r.changed, r.summary,
  r.agent_key_id, r.member_id, r.proposal_id, r.restored_from, octet_length(r.markdown) as size, r.created_at`;

/**
 * A version is readable by whoever may read the article now and, when its content was restricted
 * (by the article or its section) at that version, only by keys that may see restricted content.
 */
const REVISION_VISIBLE = revisionVisible('r', ':see_restricted');

/** A row of article_revisions with its section's key and its Markdown's size in bytes (ENTRY_COLUMNS), and the Markdown where asked for. */
export interface RevisionRow {
  version: number;
  title: string;
  status: string;
  visibility: string;
  section: string;
  position: number;
  action: string;
  changed: string[];
  summary: string | null;
  agent_key_id: string | null;
  member_id: string | null;
  proposal_id: number | null;
  restored_from: number | null;
  size: string;
  created_at: string;
  markdown?: string;
}

/** Up to `limit` versions of an article older than `before` (all when null) that `canSee` allows, newest first, without Markdown. */
export async function revisionsBefore(
  db: SqlTarget,
  q: { workspaceId: string; articleId: number; before: number | null; canSee: boolean; limit: number },
): Promise<RevisionRow[]> {
  return sql<RevisionRow>(
    db,
    `select ${ENTRY_COLUMNS} from article_revisions r join sections s on s.id = r.section_id
      where r.workspace_id = :workspace and r.article_id = :article and (:before::int is null or r.version < :before::int) and ${REVISION_VISIBLE}
      order by r.version desc limit :limit`,
    { workspace: q.workspaceId, article: q.articleId, before: q.before, see_restricted: q.canSee, limit: q.limit },
  );
}

/** One version of an article with its Markdown, if `canSee` allows it. */
export async function revisionWithMarkdown(
  db: SqlTarget,
  q: { workspaceId: string; articleId: number; version: number; canSee: boolean },
): Promise<RevisionRow | undefined> {
  const [row] = await sql<RevisionRow>(
    db,
    `select ${ENTRY_COLUMNS}, r.markdown from article_revisions r join sections s on s.id = r.section_id
      where r.workspace_id = :workspace and r.article_id = :article and r.version = :version and ${REVISION_VISIBLE}`,
    { workspace: q.workspaceId, article: q.articleId, version: q.version, see_restricted: q.canSee },
  );
  return row;
}

/** Sets the transaction-local setting the revision trigger reads (who makes the transaction's article writes, and how; JSON). */
export async function setArticleChange(db: SqlTarget, value: string): Promise<void> {
  await sql(db, "select set_config('wks.article_change', ?, true)", [value]);
}

/** Deletes the revisions of these articles of a workspace (an import replaces what the insert trigger recorded with the archive's). */
export async function deleteArticleRevisions(db: SqlTarget, workspaceId: string, articleIds: readonly number[]): Promise<void> {
  await sql(db, 'delete from article_revisions where workspace_id = ? and article_id = any(?::int[])', [workspaceId, pgArray(articleIds)]);
}
