/** Statements on memory_note_revisions: a path's readable history, one revision, and the purge of deleted notes' history. */
import { sql, type SqlTarget } from '../db/sql.js';

/** How long the history of a deleted note stays readable. */
export const DELETED_HISTORY_DAYS = 30;

const ENTRY_COLUMNS =
  'path, version, kind, tags, links, octet_length(body) as size, written_by_key_id, written_at, replaced_by_key_id, replaced_at, deleted';

/**
 * The revisions of a path that are still readable: all while a note lives at the path; after a
 * delete, for DELETED_HISTORY_DAYS from the delete (the housekeeping purge then drops them).
 */
const READABLE = `(exists (select 1 from memory_notes n where n.workspace_id = r.workspace_id and n.path = r.path)
  or (select max(d.replaced_at) from memory_note_revisions d where d.workspace_id = r.workspace_id and d.path = r.path and d.deleted)
     > now() - interval '${DELETED_HISTORY_DAYS} days')`;

/** A row of memory_note_revisions (ENTRY_COLUMNS, and the body when asked for). */
export interface RevisionRow {
  path: string;
  version: number;
  kind: string;
  tags: string[];
  links: string[];
  size: string;
  written_by_key_id: string | null;
  written_at: string;
  replaced_by_key_id: string | null;
  replaced_at: string;
  deleted: boolean;
  body?: string;
}

/** The readable revisions of a path, newest first, below version `before` (null: from the newest), at most `limit`. */
export async function listRevisions(
  db: SqlTarget,
  workspaceId: string,
  path: string,
  before: number | null,
  limit: number,
): Promise<RevisionRow[]> {
  return sql<RevisionRow>(
    db,
    `select ${ENTRY_COLUMNS} from memory_note_revisions r
      where r.workspace_id = ? and r.path = ? and (?::int is null or r.version < ?::int) and ${READABLE}
      order by r.version desc limit ?`,
    [workspaceId, path, before, before, limit],
  );
}

/** The readable revision of a path at `version`, with its body. */
export async function readRevision(db: SqlTarget, workspaceId: string, path: string, version: number): Promise<RevisionRow | undefined> {
  const [row] = await sql<RevisionRow>(
    db,
    `select ${ENTRY_COLUMNS}, body from memory_note_revisions r where r.workspace_id = ? and r.path = ? and r.version = ? and ${READABLE}`,
    [workspaceId, path, version],
  );
  return row;
}

/** Drops the history of notes deleted more than DELETED_HISTORY_DAYS ago. */
export async function purgeDeletedHistory(db: SqlTarget): Promise<void> {
  await sql(
    db,
    `delete from memory_note_revisions r
      using (select workspace_id, path from memory_note_revisions
              where deleted and replaced_at < now() - interval '${DELETED_HISTORY_DAYS} days') gone
      where r.workspace_id = gone.workspace_id and r.path = gone.path and not ${READABLE}`,
  );
}
