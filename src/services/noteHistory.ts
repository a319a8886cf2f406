import type { Scope } from '../auth/authorize.js';
import type { RequestContext } from '../context.js';
import type { SqlTarget } from '../db/sql.js';
import { invalidField, NotFoundError } from '../errors.js';
import { decodeCursor, pageSize, toPage, type Page } from '../pagination.js';
import type { MemoryNoteRevision, MemoryNoteRevisionEntry } from '../types/memory.js';
import { noteExists } from '../store/memoryNotes.js';
import { listRevisions, purgeDeletedHistory, readRevision, type RevisionRow } from '../store/noteRevisions.js';
import { normalizePath } from './memoryPaths.js';

/** How long the history of a deleted note stays readable (the revision statements read it). */
export { DELETED_HISTORY_DAYS } from '../store/noteRevisions.js';

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
  const rows = await listRevisions(ctx.db, scope.workspaceId, path, before, size + 1);
  if (!rows.length && before === null) {
    // No history: 404 unless a note lives at the path (a note never changed has an empty history).
    if (!(await noteExists(ctx.db, scope.workspaceId, path))) throw new NotFoundError('Memory note');
  }
  return toPage(rows.map(toEntry), size, (e) => [e.version]);
}

/** One replaced state of a note, with its body; 404 when the path has no readable revision of that version. */
export async function noteRevision(ctx: RequestContext, scope: Scope, rawPath: string, version: number): Promise<MemoryNoteRevision> {
  const path = normalizePath(rawPath);
  const row = await readRevision(ctx.db, scope.workspaceId, path, version);
  if (!row) throw new NotFoundError('Memory note revision');
  return { ...toEntry(row), body: row.body! };
}

/** Drops the history of notes deleted more than DELETED_HISTORY_DAYS ago (run now and then). */
export async function purgeNoteHistory(db: SqlTarget): Promise<void> {
  await purgeDeletedHistory(db);
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
