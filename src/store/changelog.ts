/** Statements on changelog_entries that the ORM does not run: the list's keyset page. */
import { sql, type SqlTarget } from '../db/sql.js';
import type { ChangelogStatus } from '../entities/ChangelogEntry.js';

/** A row of changelog_entries as the list reads it. */
export interface ChangelogRow {
  id: number;
  author: string;
  title: string;
  markdown: string;
  status: ChangelogStatus;
  tags: string[];
  created_at: string;
  updated_at: string;
  published_at: string | null;
}

/**
 * Up to `limit` entries of a workspace, newest first by (publication or creation time, id), after
 * the position `after` if given; drafts too unless `publishedOnly`.
 */
export function listChangelogRows(
  db: SqlTarget,
  workspaceId: string,
  options: { publishedOnly: boolean; after: [string, number] | null; limit: number },
): Promise<ChangelogRow[]> {
  const params: unknown[] = [workspaceId];
  let where = 'workspace_id = ?';
  if (options.publishedOnly) where += ` and status = 'published'`;
  if (options.after) {
    where += ' and (coalesce(published_at, created_at), id) < (?::timestamptz, ?)';
    params.push(...options.after);
  }
  params.push(options.limit);
  return sql<ChangelogRow>(
    db,
    `select id, author, title, markdown, status, tags, created_at, updated_at, published_at from changelog_entries where ${where}
      order by coalesce(published_at, created_at) desc, id desc limit ?`,
    params,
  );
}
