/**
 * The write pass of an import: records, already checked whole, inserted in one transaction with
 * new ids, in batches small enough that no statement holds the database long (the embedded
 * database runs one statement at a time, on its own thread). References are translated through the archive's
 * refs; member and key ids survive only when they name one of the importing organization.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { open, type FileHandle } from 'node:fs/promises';
import { InvalidRequestError } from '../errors.js';
import { insertArchivedRows, reserveIds } from '../store/archive.js';
import { deleteArticleRevisions } from '../store/articleRevisions.js';
import { enqueueItems, type ContentType } from '../store/embeddings.js';
import { insertUpload, insertUploadPart, UPLOAD_PART_BYTES } from '../store/uploads.js';
import { Pacer } from './bounds.js';
import type { ArchiveCheck, DerivedUpload } from './contents.js';
import type { ArchiveRecord } from './format.js';
import { TYPE_BY_NAME, type RecordType } from './recordTypes.js';

/** Rows and bytes of one insert statement (this much text costs the embedded database tens of ms, during which it runs nothing else). */
const BATCH_ROWS = 100;
const BATCH_BYTES = 64 * 1024;

/** Types whose rows are queued for embedding once inserted, as what (notes only where the workspace searches them by meaning). */
const EMBEDDED: Record<string, ContentType> = { article: 'article', changelog_entry: 'changelog', memory_note: 'note' };

const UPLOAD_LINK = /\/uploads\/([A-Za-z0-9_-]{16,64})\./g;

/** Where the records go. */
export interface ImportInto {
  workspaceId: string;
  organizationId: string;
  /** The archive has article revisions: they replace the ones the insert trigger records. */
  replaceRevisions: boolean;
}

/** Inserts records in batches with fresh ids; keeps each ref-carrying type's ref → new id. */
export class RecordInserter {
  private readonly ids = new Map<string, number[]>();
  private batch: { spec: RecordType; rows: Record<string, unknown>[]; bytes: number } | null = null;
  private readonly pacer = new Pacer();

  constructor(
    private readonly tx: EntityManager,
    private readonly into: ImportInto,
    private readonly check: ArchiveCheck,
  ) {}

  /** Takes one record; writes a batch when it is full. */
  async add(record: ArchiveRecord): Promise<void> {
    const spec = TYPE_BY_NAME.get(record.type)!;
    if (this.batch && (this.batch.spec !== spec || this.batch.rows.length >= BATCH_ROWS || this.batch.bytes >= BATCH_BYTES))
      await this.flush();
    const row: Record<string, unknown> = { workspace_id: this.into.workspaceId };
    for (const column of spec.columns) row[column] = record.data[column];
    for (const [column, targetType] of Object.entries(spec.refs ?? {}))
      if (row[column] !== null) row[column] = this.ids.get(targetType)![(row[column] as number) - 1];
    for (const column of spec.text ?? []) if (typeof row[column] === 'string') row[column] = this.relink(row[column]);
    if (spec.type === 'content_gap_group' && this.check.droppedCentroids.has(record.position)) row.centroid = [];
    this.batch ??= { spec, rows: [], bytes: 0 };
    this.batch.rows.push(row);
    this.batch.bytes += rowBytes(row);
    await this.pacer.breathe();
  }

  private relink(text: string): string {
    const ids = this.check.uploadIds;
    return ids.size ? text.replace(UPLOAD_LINK, (whole, id: string) => (ids.has(id) ? `/uploads/${ids.get(id)}.` : whole)) : text;
  }

  /** Writes the batch being collected. */
  async flush(): Promise<void> {
    const batch = this.batch;
    this.batch = null;
    if (!batch?.rows.length) return;
    const { spec, rows } = batch;
    const columns = ['workspace_id', ...spec.columns];
    let fresh: number[] = [];
    if (spec.ref) {
      fresh = await this.freshIds(spec, rows.length);
      rows.forEach((row, i) => (row.id = fresh[i]));
      columns.unshift('id');
    }
    await this.insert(spec, columns, rows);
    if (spec.type === 'article' && this.into.replaceRevisions) await deleteArticleRevisions(this.tx, this.into.workspaceId, fresh);
    if (EMBEDDED[spec.type]) await enqueueItems(this.tx, EMBEDDED[spec.type], this.into.workspaceId, fresh);
  }

  /** New serial ids for a batch, in order; the type's ref → id list grows by them. */
  private async freshIds(spec: RecordType, count: number): Promise<number[]> {
    const fresh = await reserveIds(this.tx, spec.table, count);
    this.ids.set(spec.type, (this.ids.get(spec.type) ?? []).concat(fresh));
    return fresh;
  }

  /** One insert of the batch's rows; ids of members and keys outside the organization become null. */
  private async insert(spec: RecordType, columns: string[], rows: Record<string, unknown>[]): Promise<void> {
    try {
      await insertArchivedRows(this.tx, spec.table, columns, rows, this.into.organizationId);
    } catch (error) {
      throw refusedByDatabase(error, spec.type);
    }
  }

  /** Inserts the uploads with what their bytes said in the check pass, reading the bytes from the uploads file a part at a time. */
  async insertUploads(): Promise<void> {
    await this.flush();
    if (!this.check.uploads.length) return;
    const file = await open(this.check.uploadsFile, 'r');
    try {
      for (const upload of this.check.uploads) await this.insertUpload(upload, file);
    } finally {
      await file.close();
    }
  }

  /** One upload: its parts (a statement each), then its row; all in the import's transaction. */
  private async insertUpload(upload: DerivedUpload, file: FileHandle): Promise<void> {
    const { workspaceId } = this.into;
    for (let n = 0; n * UPLOAD_PART_BYTES < upload.size; n++) {
      const length = Math.min(UPLOAD_PART_BYTES, upload.size - n * UPLOAD_PART_BYTES);
      const { buffer } = await file.read(Buffer.alloc(length), 0, length, upload.offset + n * UPLOAD_PART_BYTES);
      await insertUploadPart(this.tx, workspaceId, upload.id, n, buffer);
    }
    const { id, contentType, extension, size, width, height, sha256, createdAt } = upload;
    await insertUpload(this.tx, { id, workspaceId, contentType, extension, size, width, height, sha256, createdAt });
  }
}

/** A row's size in a batch, roughly (its text; other values count little). */
function rowBytes(row: Record<string, unknown>): number {
  let bytes = 64;
  for (const value of Object.values(row)) {
    if (typeof value === 'string') bytes += value.length;
    else if (value && typeof value === 'object') bytes += JSON.stringify(value).length;
  }
  return bytes;
}

/**
 * A value the database refuses although every rule passed (a duplicate slug, path or key): the
 * archive is at fault, not the service — a 400 (the transaction rolls back, nothing is written).
 */
function refusedByDatabase(error: unknown, type: string): unknown {
  const e = error as { code?: string; sqlState?: string; message?: string };
  const state = e.sqlState ?? e.code ?? '';
  if (!/^2[23]/.test(state)) return error;
  const reason = (e.message ?? '').split('\n')[0].replace(/^.* - /, '');
  return new InvalidRequestError(`A ${type} record of the archive does not fit this service's database: ${reason}`, [
    { field: type, message: reason, in: 'body' },
  ]);
}
