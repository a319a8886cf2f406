/**
 * Statements on uploads: an upload's row (what its bytes said), its bytes as parts of at most
 * UPLOAD_PART_BYTES (one statement each, so the embedded database, which runs one statement at a
 * time, never holds other callers long), and the drafts that name uploads whose parts are being
 * written.
 */
import { sql, sqlRelaxed, type SqlTarget } from '../db/sql.js';

/** The largest part of an upload's bytes: one statement writes one (~5 ms of the embedded database's time). */
export const UPLOAD_PART_BYTES = 128 * 1024;
/** Parts one statement reads back (1 MiB). */
const PARTS_READ = 8;

/** An upload's row. */
export interface UploadRow {
  id: string;
  workspace_id: string;
  extension: string;
  content_type: string;
  size: number;
  width: number;
  height: number;
  sha256: string;
}

const ROW = 'id, workspace_id, extension, content_type, size, width, height, sha256';

/** The workspace's uploads that claim these bytes (by SHA-256 hex digest), newest first; the caller checks their bytes. */
export async function uploadsByDigest(db: SqlTarget, workspaceId: string, sha256: string): Promise<UploadRow[]> {
  return sql<UploadRow>(db, `select ${ROW} from uploads where workspace_id = ? and sha256 = ? order by created_at desc limit 3`, [
    workspaceId,
    sha256,
  ]);
}

/** An upload as it is stored (its size is its bytes' length). */
export interface NewUpload {
  id: string;
  workspaceId: string;
  contentType: string;
  extension: string;
  width: number;
  height: number;
  sha256: string;
  size: number;
  /** Now, or as an archive recorded it (an ISO timestamp, kept to the microsecond). */
  createdAt: Date | string;
}

/** Stores an upload's row once its parts are in, and ends its draft; the row. */
export async function insertUpload(db: SqlTarget, upload: NewUpload): Promise<UploadRow> {
  const { id, workspaceId, contentType, extension, size, width, height, sha256, createdAt } = upload;
  const [row] = await sql<UploadRow>(
    db,
    `with done as (delete from upload_drafts where workspace_id = :workspaceId and upload_id = :id)
     insert into uploads (id, workspace_id, content_type, extension, size, width, height, sha256, created_at)
     values (:id, :workspaceId, :contentType, :extension, :size, :width, :height, :sha256, :createdAt) returning ${ROW}`,
    { id, workspaceId, contentType, extension, size, width, height, sha256, createdAt },
  );
  return row;
}

/** Names an upload whose parts are about to be written (so that parts a failed request leaves are found). */
export async function beginUploadDraft(db: SqlTarget, workspaceId: string, id: string): Promise<void> {
  await sql(db, 'insert into upload_drafts (workspace_id, upload_id, created_at) values (?, ?, now())', [workspaceId, id]);
}

/**
 * Writes part `part` (from 0) of an upload's bytes. Outside a transaction its commit does not wait
 * for the WAL flush: nothing refers to the part until the upload's row commits, and that commit
 * flushes the WAL up to itself, the parts' records included.
 */
export async function insertUploadPart(db: SqlTarget, workspaceId: string, id: string, part: number, data: Buffer): Promise<void> {
  const text = 'insert into upload_parts (workspace_id, upload_id, part, data) values (?, ?, ?, ?)';
  const values = [workspaceId, id, part, data];
  await (db.getTransactionContext() ? sql(db, text, values) : sqlRelaxed(db, text, values));
}

/** Removes an unfinished upload's parts and its draft. */
export async function discardUploadDraft(db: SqlTarget, workspaceId: string, id: string): Promise<void> {
  await sql(
    db,
    `with parts as (delete from upload_parts where workspace_id = ? and upload_id = ?)
     delete from upload_drafts where workspace_id = ? and upload_id = ?`,
    [workspaceId, id, workspaceId, id],
  );
}

/** Drafts older than `minutes` (their request failed or its process was killed): at most `limit`, oldest first. */
export async function staleUploadDrafts(
  db: SqlTarget,
  minutes: number,
  limit: number,
): Promise<{ workspace_id: string; upload_id: string }[]> {
  return sql(
    db,
    `select workspace_id, upload_id from upload_drafts where created_at < now() - make_interval(mins => ?) order by created_at limit ?`,
    [minutes, limit],
  );
}

/** The row of the upload with this id and extension, if any. */
export async function findUpload(db: SqlTarget, id: string, extension: string): Promise<UploadRow | undefined> {
  const [row] = await sql<UploadRow>(db, `select ${ROW} from uploads where id = ? and extension = ?`, [id, extension]);
  return row;
}

/** An upload's bytes in order, a megabyte (one statement) at a time. */
export async function* uploadBytes(db: SqlTarget, workspaceId: string, id: string): AsyncGenerator<Buffer> {
  for (let from = 0; ; from += PARTS_READ) {
    const rows = await sql<{ data: Buffer }>(
      db,
      'select data from upload_parts where workspace_id = ? and upload_id = ? and part >= ? and part < ? order by part',
      [workspaceId, id, from, from + PARTS_READ],
    );
    for (const row of rows) yield row.data;
    if (rows.length < PARTS_READ) return;
  }
}
