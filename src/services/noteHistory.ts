import type { Scope } from '../auth/authorize.js';
import type { RequestContext } from '../context.js';
import type { SqlTarget } from '../db/sql.js';
import { sql } from '../db/sql.js';
import { invalidField, NotFoundError } from '../errors.js';
import { decodeCursor, pageSize, toPage, type Page } from '../pagination.js';
import type { MemoryNoteRevision, MemoryNoteRevisionEntry } from '../types/memory.js';
import { normalizePath } from './memoryPaths.js';

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

interface RevisionRow {
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

/** A note's replaced states, newest first (paginated by version); 404 when the path has none readable. */
export async function noteHistory(
  ctx: RequestContext,
  scope: Scope,
  rawPath: string,
  args: { limit?: number | null; cursor?: string | null },
): Promise<Page<MemoryNoteRevisionEntry>> {
  const path = normalizePath(rawPath);
  const size = pageSize(args.limit);
  const before = args.cursor ? decodeCursor<[number]>(args.cursor, ['number'])[0] : null;
  if (before !== null && !Number.isInteger(before)) throw invalidField('cursor', 'is not a cursor returned by this list');
  const rows = await sql<RevisionRow>(
    ctx.db,
    `select ${ENTRY_COLUMNS} from memory_note_revisions r
      where r.workspace_id = ? and r.path = ? and (?::int is null or r.version < ?::int) and ${READABLE}
      order by r.version desc limit ?`,
    [scope.workspaceId, path, before, before, size + 1],
  );
  if (!rows.length && before === null) {
    // No history: 404 unless a note lives at the path (a note never changed has an empty history).
    const [live] = await sql(ctx.db, 'select 1 from memory_notes where workspace_id = ? and path = ?', [scope.workspaceId, path]);
    if (!live) throw new NotFoundError('Memory note');
  }
  return toPage(rows.map(toEntry), size, (e) => [e.version]);
}

/** One replaced state of a note, with its body; 404 when the path has no readable revision of that version. */
export async function noteRevision(ctx: RequestContext, scope: Scope, rawPath: string, version: number): Promise<MemoryNoteRevision> {
  const path = normalizePath(rawPath);
  const [row] = await sql<RevisionRow>(
    ctx.db,
    `select ${ENTRY_COLUMNS}, body from memory_note_revisions r where r.workspace_id = ? and r.path = ? and r.version = ? and ${READABLE}`,
    [scope.workspaceId, path, version],
  );
  if (!row) throw new NotFoundError('Memory note revision');
  return { ...toEntry(row), body: row.body! };
}

/** Drops the history of notes deleted more than DELETED_HISTORY_DAYS ago (run now and then). */
export async function purgeNoteHistory(db: SqlTarget): Promise<void> {
  await sql(
    db,
    `delete from memory_note_revisions r
      using (select workspace_id, path from memory_note_revisions
              where deleted and replaced_at < now() - interval '${DELETED_HISTORY_DAYS} days') gone
      where r.workspace_id = gone.workspace_id and r.path = gone.path and not ${READABLE}`,
  );
}

function toEntry(r: RevisionRow): MemoryNoteRevisionEntry {
  return {
    path: r.path,
    version: r.version,
    kind: r.kind,
    tags: r.tags,
    links: r.links,
    size: Number(r.size),
    writtenByKeyId: r.written_by_key_id,
    writtenAt: new Date(r.written_at),
    replacedByKeyId: r.replaced_by_key_id,
    replacedAt: new Date(r.replaced_at),
    deleted: r.deleted,
  };
}
