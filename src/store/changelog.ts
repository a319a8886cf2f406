/** Statements on changelog_entries: the list's keyset page (plain rows), and the entries its writes change (managed entities). */
import type { RequiredEntityData } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { sql, type SqlTarget } from '../db/sql.js';
import { ChangelogEntry, type ChangelogStatus } from '../entities/ChangelogEntry.js';

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

/** A workspace's published entry by id (a plain row), if it has one. */
export async function publishedChangelogEntry(db: SqlTarget, workspaceId: string, id: number): Promise<ChangelogRow | undefined> {
  const [row] = await sql<ChangelogRow>(
    db,
    `select id, author, title, markdown, status, tags, created_at, updated_at, published_at from changelog_entries
      where workspace_id = ? and id = ? and status = 'published'`,
    [workspaceId, id],
  );
  return row;
}

/** A workspace's entry as a managed entity (changes to it are written when the transaction commits), if it has one with the id. */
export function loadChangelogEntry(em: EntityManager, workspaceId: string, id: number): Promise<ChangelogEntry | null> {
  return em.findOne(ChangelogEntry, { id, workspace: workspaceId });
}

/** Inserts an entry now (in the EntityManager's transaction), so its id is known; the entry, managed. */
export async function insertChangelogEntry(em: EntityManager, data: RequiredEntityData<ChangelogEntry>): Promise<ChangelogEntry> {
  const entry = em.create(ChangelogEntry, data);
  await em.flush();
  return entry;
}

/** Deletes a managed entry when the transaction commits. */
export function removeChangelogEntry(em: EntityManager, entry: ChangelogEntry): void {
  em.remove(entry);
}
