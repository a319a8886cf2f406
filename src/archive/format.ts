/**
 * The workspace archive, version 1: a gzip stream of JSON lines (see README "Workspace archives").
 * Line 1 is the header, then one `{type, data}` line per record in RECORD_TYPES order, then the
 * trailer `{type: "trailer", counts, sha256}` where sha256 covers every byte before it.
 */
import { createHash, type Hash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { Transform, type Readable } from 'node:stream';
import { createGunzip, createGzip } from 'node:zlib';
import { InvalidRequestError } from '../errors.js';
import { TYPE_BY_NAME } from './recordTypes.js';

export const ARCHIVE_FORMAT = 'wks-archive';
export const ARCHIVE_VERSION = 1;
/** No line may be longer (an upload of 10 MiB is ~13.4 MiB of base64). */
export const MAX_LINE_BYTES = 32 * 1024 * 1024;

export type Counts = Record<string, number>;

export interface ArchiveHeader {
  format: typeof ARCHIVE_FORMAT;
  version: number;
  workspace: { id: string; name: string; organizationId: string };
  createdAt: string;
  counts: Counts;
}

export interface ArchiveRecord {
  type: string;
  data: Record<string, unknown>;
}

/** Writes header, records and trailer as gzip to a file, hashing every line before the trailer. */
export class ArchiveWriter {
  private readonly hash: Hash = createHash('sha256');
  private readonly gzip = createGzip();
  private readonly done: Promise<void>;
  private readonly counts: Counts = {};

  constructor(file: string) {
    this.done = pipeline(this.gzip, createWriteStream(file));
  }

  /** Writes one line (header or record), waiting when the file is behind. */
  async line(value: object): Promise<void> {
    const bytes = Buffer.from(`${JSON.stringify(value)}\n`);
    this.hash.update(bytes);
    if ('type' in value) this.counts[(value as ArchiveRecord).type] = (this.counts[(value as ArchiveRecord).type] ?? 0) + 1;
    if (!this.gzip.write(bytes)) await new Promise((resolve) => this.gzip.once('drain', resolve));
  }

  /** Writes the trailer and closes the file; resolves with the per-type counts written. */
  async finish(): Promise<Counts> {
    this.gzip.end(`${JSON.stringify({ type: 'trailer', counts: this.counts, sha256: this.hash.digest('hex') })}\n`);
    await this.done;
    return this.counts;
  }
}

/** Splits a byte stream into lines (without the newline), refusing lines over MAX_LINE_BYTES. */
function lineSplitter(): Transform {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  return new Transform({
    readableObjectMode: true,
    transform(chunk: Buffer, _encoding, callback) {
      let start = 0;
      for (let nl = chunk.indexOf(10, start); nl !== -1; nl = chunk.indexOf(10, start)) {
        this.push(Buffer.concat([...pending, chunk.subarray(start, nl)]));
        pending = [];
        pendingBytes = 0;
        start = nl + 1;
      }
      if (start < chunk.length) {
        pending.push(chunk.subarray(start));
        pendingBytes += chunk.length - start;
        if (pendingBytes > MAX_LINE_BYTES) return callback(invalid(`a line is longer than ${MAX_LINE_BYTES} bytes`));
      }
      callback();
    },
    flush(callback) {
      if (pendingBytes) this.push(Buffer.concat(pending));
      callback();
    },
  });
}

function invalid(message: string): InvalidRequestError {
  return new InvalidRequestError(`The archive is not valid: ${message}.`, [{ field: 'archive', message, in: 'body' }]);
}

/** Reads the archive's lines as raw bytes; gzip damage (a truncated file) becomes the 400. */
export async function* archiveLines(file: string): AsyncGenerator<Buffer> {
  const gunzip = createGunzip();
  const lines = createReadStream(file).pipe(gunzip).pipe(lineSplitter());
  gunzip.on('error', (error: Error) => lines.destroy(invalid(`not a complete gzip stream (${error.message})`)));
  try {
    for await (const line of lines as Readable) yield line as Buffer;
  } catch (error) {
    if (error instanceof InvalidRequestError) throw error;
    throw invalid(`unreadable (${(error as Error).message})`);
  }
}

function parse(line: Buffer, at: number): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(line.toString('utf8'));
    if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // reported below
  }
  throw invalid(`line ${at} is not a JSON object`);
}

const isCounts = (value: unknown): value is Counts =>
  !!value && typeof value === 'object' && Object.values(value).every((n) => Number.isInteger(n) && (n as number) >= 0);

function sameCounts(a: Counts, b: Counts): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].every((k) => (a[k] ?? 0) === (b[k] ?? 0));
}

/** Checks one record's shape: a known type, exactly its columns, its ref in sequence and refs to records before it. */
function checkRecord(value: Record<string, unknown>, at: number, seen: Counts): ArchiveRecord {
  const spec = typeof value.type === 'string' ? TYPE_BY_NAME.get(value.type) : undefined;
  if (!spec) throw invalid(`line ${at} has an unknown record type ${JSON.stringify(value.type)}`);
  const data = value.data;
  if (!data || typeof data !== 'object' || Array.isArray(data)) throw invalid(`line ${at} has no data object`);
  const record = data as Record<string, unknown>;
  const expected = spec.ref ? [...spec.columns, 'ref'] : spec.columns;
  const keys = Object.keys(record);
  if (keys.length !== expected.length || !expected.every((k) => k in record))
    throw invalid(`line ${at} (${spec.type}) must have exactly the fields ${expected.join(', ')}`);
  const position = (seen[spec.type] ?? 0) + 1;
  if (spec.ref && record.ref !== position) throw invalid(`line ${at} (${spec.type}) has ref ${String(record.ref)}, expected ${position}`);
  for (const [column, target] of Object.entries(spec.refs ?? {})) {
    const ref = record[column];
    if (ref === null && column !== 'article_id' && column !== 'section_id') continue;
    if (!Number.isInteger(ref) || (ref as number) < 1 || (ref as number) > (seen[target] ?? 0))
      throw invalid(`line ${at} (${spec.type}) refers to ${target} ${String(ref)}, which is not in the archive before it`);
  }
  seen[spec.type] = position;
  return { type: spec.type, data: record };
}

/**
 * Checks a whole archive before anything is written: gzip intact, header format and version,
 * every record's shape, the trailer present and last, its SHA-256 over every preceding byte, and
 * the counts of header, trailer and records equal. Resolves with the header; `onRecord` sees each record.
 */
export async function verifyArchive(file: string, onRecord?: (record: ArchiveRecord) => void): Promise<ArchiveHeader> {
  const hash = createHash('sha256');
  let header: ArchiveHeader | undefined;
  let trailer: Record<string, unknown> | undefined;
  const seen: Counts = {};
  let at = 0;
  for await (const line of archiveLines(file)) {
    at++;
    if (trailer) throw invalid(`line ${at} follows the trailer`);
    const value = parse(line, at);
    if (at === 1) {
      if (value.format !== ARCHIVE_FORMAT) throw invalid(`the header does not name the format "${ARCHIVE_FORMAT}"`);
      if (value.version !== ARCHIVE_VERSION)
        throw invalid(`version ${JSON.stringify(value.version)} is not supported (this service reads version ${ARCHIVE_VERSION})`);
      const ws = value.workspace as ArchiveHeader['workspace'] | undefined;
      if (
        !ws ||
        typeof ws.name !== 'string' ||
        typeof ws.id !== 'string' ||
        typeof ws.organizationId !== 'string' ||
        !isCounts(value.counts)
      )
        throw invalid('the header lacks workspace {id, name, organizationId} or counts');
      header = value as unknown as ArchiveHeader;
    } else if (value.type === 'trailer') {
      trailer = value;
      continue;
    } else {
      const record = checkRecord(value, at, seen);
      onRecord?.(record);
    }
    hash.update(line);
    hash.update('\n');
  }
  if (!header) throw invalid('it is empty');
  if (!trailer) throw invalid('it has no trailer (truncated?)');
  if (!isCounts(trailer.counts) || typeof trailer.sha256 !== 'string') throw invalid('the trailer lacks counts or sha256');
  if (trailer.sha256 !== hash.digest('hex')) throw invalid('the SHA-256 in the trailer does not match its content (altered or damaged)');
  if (!sameCounts(trailer.counts, seen) || !sameCounts(header.counts, seen))
    throw invalid(`the record counts ${JSON.stringify(seen)} differ from the header's or trailer's`);
  return header;
}

/** The archive's records in order (call after verifyArchive). */
export async function* archiveRecords(file: string): AsyncGenerator<ArchiveRecord> {
  let at = 0;
  for await (const line of archiveLines(file)) {
    if (++at === 1) continue;
    const value = JSON.parse(line.toString('utf8')) as ArchiveRecord;
    if (value.type !== 'trailer') yield value;
  }
}
