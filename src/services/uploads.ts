import { createHash, randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { EntityManager } from '@mikro-orm/postgresql';
import { fileTypeFromBuffer } from 'file-type';
import { imageSize } from 'image-size';
import type { Scope } from '../auth/authorize.js';
import type { RequestContext } from '../context.js';
import { invalidField } from '../errors.js';
import {
  beginUploadDraft,
  discardUploadDraft,
  findUpload,
  insertUpload,
  insertUploadPart,
  staleUploadDrafts,
  UPLOAD_PART_BYTES,
  uploadBytes,
  uploadsByDigest,
  type UploadRow,
} from '../store/uploads.js';
import { recordAudit } from './audit.js';
import { UPLOAD_LIMITS } from '../contract/rules.js';
import { inTransaction } from '../store/unitOfWork.js';

/** Decided from the bytes (magic numbers), never from the file name or declared type. */
const ACCEPTED: Record<string, string> = { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/webp': 'webp', 'image/gif': 'gif' };
const CONTENT_TYPES: Record<string, string> = Object.fromEntries(Object.entries(ACCEPTED).map(([type, extension]) => [extension, type]));

export interface UploadResult {
  url: string;
  id: string;
  contentType: string;
  size: number;
  width: number;
  height: number;
  sha256: string;
}

/** The file part of a GraphQL multipart upload (graphql-upload-minimal's FileUpload). */
export interface IncomingFile {
  filename: string;
  createReadStream(): Readable;
  /** The SHA-256 of its bytes (hex), when the service's own transport hashed them as they arrived. */
  sha256?: string;
}

/** What the bytes of an accepted image say about it (never what a client or an archive claims). */
export interface InspectedImage {
  contentType: string;
  extension: string;
  size: number;
  width: number;
  height: number;
}

/**
 * Sniffs and measures an image from its bytes: PNG, JPEG, WebP or GIF by magic numbers, at most
 * 10 MiB, at most 16,384 px a side and 50 megapixels (decompression bombs); a 400 naming `field`
 * otherwise.
 */
export async function inspectImage(data: Buffer, field = 'file'): Promise<InspectedImage> {
  if (data.length === 0) throw invalidField(field, 'is empty');
  if (data.length > UPLOAD_LIMITS.maxBytes) throw invalidField(field, `must be at most ${UPLOAD_LIMITS.maxBytes} bytes (10 MiB)`);
  const type = await fileTypeFromBuffer(data);
  const extension = type ? ACCEPTED[type.mime] : undefined;
  if (!type || !extension) {
    throw invalidField(field, `must be a PNG, JPEG, WebP or GIF image (its content is ${type ? type.mime : 'not a recognised image'})`);
  }
  let dims: { width?: number; height?: number };
  try {
    dims = imageSize(data);
  } catch {
    throw invalidField(field, 'is not a readable image');
  }
  const width = dims.width ?? 0;
  const height = dims.height ?? 0;
  if (!width || !height) throw invalidField(field, 'has no image dimensions');
  if (width > UPLOAD_LIMITS.maxSide || height > UPLOAD_LIMITS.maxSide || width * height > UPLOAD_LIMITS.maxPixels) {
    throw invalidField(
      field,
      `is ${width}×${height} px; at most ${UPLOAD_LIMITS.maxSide} px a side and ${UPLOAD_LIMITS.maxPixels / 1e6} megapixels are accepted`,
    );
  }
  return { contentType: type.mime, extension, size: data.length, width, height };
}

/**
 * Stores an image: PNG, JPEG, WebP or GIF by its bytes; at most 10 MiB (read with a cap, never
 * buffered past it); at most 16,384 px a side and 50 megapixels (decompression bombs). The same
 * bytes uploaded twice to a workspace return the same URL. The bytes are written a part at a time,
 * each part a statement of its own, and the upload's row (with its audit event) in one transaction
 * once every part is in: a request that fails halfway leaves no upload, and its parts are removed
 * (by the request, or by housekeeping when its process was killed).
 */
export async function uploadImage(ctx: RequestContext, scope: Scope, file: IncomingFile): Promise<UploadResult> {
  const { data, sha256 } = await readCapped(file.createReadStream(), UPLOAD_LIMITS.maxBytes, file.sha256);
  const { contentType, extension, width, height } = await inspectImage(data);
  const existing = await sameBytes(ctx.em, scope.workspaceId, sha256);
  if (existing) return toResult(existing);
  const id = randomBytes(16).toString('base64url');
  const { workspaceId } = scope;
  await beginUploadDraft(ctx.em, workspaceId, id);
  try {
    for (let part = 0; part * UPLOAD_PART_BYTES < data.length; part++) {
      await insertUploadPart(ctx.em, workspaceId, id, part, data.subarray(part * UPLOAD_PART_BYTES, (part + 1) * UPLOAD_PART_BYTES));
    }
    return await inTransaction(ctx.em, async (em) => {
      const row = await insertUpload(em, {
        id,
        workspaceId,
        contentType,
        extension,
        width,
        height,
        sha256,
        size: data.length,
        createdAt: new Date(),
      });
      recordAudit(em, ctx, { action: 'upload.created', targetType: 'upload', targetId: id, workspaceId });
      return toResult(row);
    });
  } catch (error) {
    await discardUploadDraft(ctx.em, workspaceId, id).catch(() => undefined); // else housekeeping removes it
    throw error;
  }
}

/**
 * The workspace's upload of these bytes, if it has one. A row's digest is checked against its stored
 * bytes: a row whose digest lies (an unchecked import, a hand-made row) is never handed out.
 */
async function sameBytes(em: EntityManager, workspaceId: string, sha256: string): Promise<UploadRow | undefined> {
  for (const row of await uploadsByDigest(em, workspaceId, sha256)) {
    const hash = createHash('sha256');
    for await (const part of uploadBytes(em, workspaceId, row.id)) hash.update(part);
    if (hash.digest('hex') === sha256) return row;
  }
  return undefined;
}

/** An upload's parts are written within seconds: a draft this old belongs to a request that failed or a process that was killed. */
const UNFINISHED_AFTER_MINUTES = 60;

/** Removes the parts of uploads left unfinished (a killed process) an hour ago or more, 100 per call; how many. */
export async function purgeUnfinishedUploads(em: EntityManager): Promise<number> {
  const drafts = await staleUploadDrafts(em, UNFINISHED_AFTER_MINUTES, 100);
  for (const draft of drafts) await discardUploadDraft(em, draft.workspace_id, draft.upload_id);
  return drafts.length;
}

/** What the public URL `<id>.<ext>` serves: the type, size and digest of the upload, and its bytes (read as they are sent), or null. */
export async function findPublicUpload(
  em: EntityManager,
  name: string,
): Promise<{ contentType: string; size: number; sha256: string; bytes(): AsyncGenerator<Buffer> } | null> {
  const match = /^([A-Za-z0-9_-]{22})\.(png|jpg|webp|gif)$/.exec(name);
  if (!match) return null;
  const row = await findUpload(em, match[1], match[2]);
  if (!row) return null;
  // The type follows from the name's extension, which only an accepted image has: stored text never names it.
  return {
    contentType: CONTENT_TYPES[match[2]],
    size: row.size,
    sha256: row.sha256,
    bytes: () => uploadBytes(em, row.workspace_id, row.id),
  };
}

function toResult(row: UploadRow): UploadResult {
  return {
    url: `/uploads/${row.id}.${row.extension}`,
    id: row.id,
    contentType: row.content_type,
    size: row.size,
    width: row.width,
    height: row.height,
    sha256: row.sha256,
  };
}

/**
 * The stream's bytes, read with a cap, and their SHA-256: `known` (the transport's, hashed as the
 * bytes arrived), else hashed as they are read (10 MiB at once held the event loop ~25 ms).
 */
async function readCapped(stream: Readable, max: number, known?: string): Promise<{ data: Buffer; sha256: string }> {
  const chunks: Buffer[] = [];
  const hash = known ? null : createHash('sha256');
  let size = 0;
  for await (const chunk of stream) {
    size += (chunk as Buffer).length;
    if (size > max) {
      stream.destroy();
      throw invalidField('file', `must be at most ${max} bytes (10 MiB)`);
    }
    hash?.update(chunk as Buffer);
    chunks.push(chunk as Buffer);
  }
  return { data: Buffer.concat(chunks), sha256: known ?? hash!.digest('hex') };
}
