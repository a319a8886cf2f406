/** Statements on uploads: finding an image by its digest, storing one, and reading the bytes behind a public URL. */
import { sql, type SqlTarget } from '../db/sql.js';

/** An upload's row without its bytes. */
export interface UploadRow {
  id: string;
  extension: string;
  content_type: string;
  size: number;
  width: number;
  height: number;
}

/** A workspace's upload of these bytes (by SHA-256 hex digest), if it has one. */
export async function findUploadByDigest(db: SqlTarget, workspaceId: string, sha256: string): Promise<UploadRow | undefined> {
  const [existing] = await sql<UploadRow>(
    db,
    // The stored digest is checked against the stored bytes: a row whose digest lies is never handed out.
    `select id, extension, content_type, size, width, height from uploads
        where workspace_id = ? and sha256 = ? and sha256(data) = decode(?, 'hex')`,
    [workspaceId, sha256, sha256],
  );
  return existing;
}

/** An upload as it is stored. */
export interface NewUpload {
  id: string;
  workspaceId: string;
  contentType: string;
  extension: string;
  width: number;
  height: number;
  sha256: string;
  data: Buffer;
}

/** Stores an upload (its size is its bytes' length); its row without the bytes. */
export async function insertUpload(db: SqlTarget, upload: NewUpload): Promise<UploadRow> {
  const { id, workspaceId, contentType, extension, data, width, height, sha256 } = upload;
  const [row] = await sql<UploadRow>(
    db,
    'insert into uploads (id, workspace_id, content_type, extension, size, width, height, sha256, data, created_at) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) returning id, extension, content_type, size, width, height',
    [id, workspaceId, contentType, extension, data.length, width, height, sha256, data, new Date()],
  );
  return row;
}

/** The bytes and digest of the upload with this id and extension, if any. */
export async function findUploadBytes(db: SqlTarget, id: string, extension: string): Promise<{ data: Buffer; sha256: string } | undefined> {
  const [row] = await sql<{ data: Buffer; sha256: string }>(db, 'select data, sha256 from uploads where id = ? and extension = ?', [
    id,
    extension,
  ]);
  return row;
}
