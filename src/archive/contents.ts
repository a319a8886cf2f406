/**
 * The check pass of an import, one record at a time: every column against its rule
 * (recordRules.ts), uploads re-sniffed, re-measured and re-hashed from their bytes, and what the
 * write pass needs collected (the derived upload metadata and new ids, content that needs a paid
 * plan, centroids to drop). Uploads' bytes are set aside in a file of their own, so the write pass
 * reads them in chunks instead of parsing their lines again. Nothing here touches the database.
 */
import { createHash, randomBytes } from 'node:crypto';
import { open, type FileHandle } from 'node:fs/promises';
import { UPLOAD_LIMITS } from '../contract/rules.js';
import { InvalidRequestError, type FieldIssue } from '../errors.js';
import { EMBEDDING_DIMENSIONS } from '../search/embedder.js';
import { inspectImage, type InspectedImage } from '../services/uploads.js';
import { Pacer, RawString } from './bounds.js';
import type { ArchiveRecord } from './format.js';
import { recordIssues, type RecordFacts } from './recordRules.js';

/** An upload as the import stores it: its new id, what its bytes say, and where the check pass left them. */
export interface DerivedUpload extends InspectedImage {
  id: string;
  sha256: string;
  createdAt: string;
  /** Offset of its bytes in the uploads file (their length is `size`). */
  offset: number;
}

/** The largest base64 text of an upload within the limit. */
const MAX_BASE64 = Math.ceil(UPLOAD_LIMITS.maxBytes / 3) * 4;
/** Slices in which an upload is hashed, an event-loop turn allowed between them. */
const HASH_SLICE = 1024 * 1024;

function refuse(at: number, type: string, issues: FieldIssue[]): never {
  const said = issues.map((i) => `${i.field}: ${i.message}`).join('; ');
  throw new InvalidRequestError(`The archive is not valid: line ${at} (${type}): ${said}.`, issues);
}

/** Checks records as verifyArchive reads them, and keeps what the write pass needs. */
export class ArchiveCheck {
  private readonly facts: RecordFacts = { generatedArticles: new Set() };
  private readonly pacer = new Pacer();
  /** Whether any section, article or revision is restricted (a paid plan's feature). */
  restricted = false;
  /** Derived uploads, in archive order. */
  readonly uploads: DerivedUpload[] = [];
  /** Lines that hold uploads (the write pass takes them from the uploads file). */
  readonly uploadLines = new Set<number>();
  /** Upload ids of the archive → new ids (links in text are rewritten through it). */
  readonly uploadIds = new Map<string, string>();
  /** Refs of content-gap groups whose centroid is not of the embedding dimension: imported empty (never matched). */
  readonly droppedCentroids = new Set<number>();
  private bytesFile: FileHandle | null = null;
  private written = 0;

  /** `uploadsFile`: where upload bytes are set aside (a private path the caller removes). */
  constructor(readonly uploadsFile: string) {}

  /** Checks one record (throws the 400 naming its fields); resolves once it has been taken in. */
  async record(record: ArchiveRecord, at: number): Promise<void> {
    const { type, data, position } = record;
    const issues = recordIssues(type, position, data, this.facts);
    if (issues.length) refuse(at, type, issues);
    if (type === 'article' && data.api_operation_key !== null) this.facts.generatedArticles.add(position);
    if (data.visibility === 'restricted' || data.restricted === true) this.restricted = true;
    if (type === 'content_gap_group') {
      const length = (data.centroid as number[]).length;
      if (length !== 0 && length !== EMBEDDING_DIMENSIONS) this.droppedCentroids.add(position);
    }
    if (type === 'upload') {
      await this.upload(data, position, at);
      this.uploadLines.add(at);
    }
    await this.pacer.breathe();
  }

  /** Decodes, sniffs, measures and hashes an upload's bytes; the archive's claims about them are never read. */
  private async upload(data: Record<string, unknown>, position: number, at: number): Promise<void> {
    const field = `upload[${position}].data`;
    const archiveId = data.id as string;
    if (this.uploadIds.has(archiveId))
      refuse(at, 'upload', [{ field: `upload[${position}].id`, message: 'repeats an earlier upload id', in: 'body' }]);
    const bytes = await decodeUpload(data.data as string | RawString, field, at, this.pacer);
    let image: InspectedImage;
    try {
      image = await inspectImage(bytes, field);
    } catch (error) {
      if (error instanceof InvalidRequestError)
        refuse(
          at,
          'upload',
          (error.details as FieldIssue[]).map((i) => ({ ...i, in: 'body' })),
        );
      throw error;
    }
    const hash = createHash('sha256');
    for (let from = 0; from < bytes.length; from += HASH_SLICE) {
      hash.update(bytes.subarray(from, from + HASH_SLICE));
      await this.pacer.breathe();
    }
    const id = randomBytes(16).toString('base64url');
    this.bytesFile ??= await open(this.uploadsFile, 'w');
    await this.bytesFile.write(bytes, 0, bytes.length, this.written);
    this.uploads.push({ ...image, id, sha256: hash.digest('hex'), createdAt: data.created_at as string, offset: this.written });
    this.written += bytes.length;
    this.uploadIds.set(archiveId, id);
  }

  /** Closes the uploads file (call when the check pass ends, whatever its outcome). */
  async close(): Promise<void> {
    await this.bytesFile?.close();
    this.bytesFile = null;
  }
}

/**
 * An upload's base64 as bytes: within the upload limit, and strict (a character base64 lacks is
 * refused, not skipped); line breaks are allowed, as PostgreSQL's encode() writes them. A long
 * value arrives as its JSON literal (RawString) and is decoded a slice at a time.
 */
export async function decodeUpload(value: string | RawString, field: string, at: number, pacer: Pacer): Promise<Buffer> {
  // A copy either way: compacted in place, and the archive's own bytes stay as read.
  const text =
    value instanceof RawString ? await compact(Buffer.from(value.json), 0x5c, pacer) : await compact(Buffer.from(value, 'utf8'), 10, pacer);
  if (!text || text.length % 4 !== 0) return notBase64(at, field);
  if (text.length > MAX_BASE64)
    refuse(at, 'upload', [{ field, message: `must be at most ${UPLOAD_LIMITS.maxBytes} bytes (10 MiB)`, in: 'body' }]);
  const parts: Buffer[] = [];
  for (let from = 0; from < text.length; from += HASH_SLICE) {
    const slice = text.subarray(from, from + HASH_SLICE);
    const padding = from + HASH_SLICE < text.length ? 0 : slice.at(-2) === 0x3d ? 2 : slice.at(-1) === 0x3d ? 1 : 0;
    const bytes = Buffer.from(slice.toString('latin1'), 'base64');
    if (bytes.length !== (slice.length / 4) * 3 - padding || slice.subarray(0, slice.length - padding).includes(0x3d))
      return notBase64(at, field);
    parts.push(bytes);
    await pacer.breathe();
  }
  return Buffer.concat(parts);
}

const notBase64 = (at: number, field: string) =>
  refuse(at, 'upload', [{ field, message: 'must be base64 (RFC 4648, padded)', in: 'body' }]);

/**
 * Base64 text without its line breaks, compacted in place: `marker` 10 finds real ones (LF, or
 * CRLF), 0x5c (a backslash) the escapes of a JSON literal, where only "\n", "\r" and "\/" can
 * appear in base64 (null for any other).
 */
async function compact(text: Buffer, marker: 10 | 0x5c, pacer: Pacer): Promise<Buffer | null> {
  let length = 0;
  let from = 0;
  for (let at = text.indexOf(marker), seen = 0; at !== -1; at = text.indexOf(marker, from), seen++) {
    const cr = marker === 10 && at > from && text[at - 1] === 13;
    length += text.copy(text, length, from, cr ? at - 1 : at);
    from = at + 1;
    if (marker === 0x5c) {
      const escaped = text[at + 1];
      if (escaped === 0x2f) text[length++] = 0x2f;
      else if (escaped !== 0x6e && escaped !== 0x72) return null;
      from = at + 2;
    }
    if (seen % 1024 === 0) await pacer.breathe();
  }
  length += text.copy(text, length, from);
  return text.subarray(0, length);
}
