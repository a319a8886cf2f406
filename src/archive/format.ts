/**
 * The workspace archive, version 1: a gzip stream of JSON lines (see docs/archives.md).
 * Line 1 is the header, then one `{type, data}` line per record in RECORD_TYPES order, then the
 * trailer `{type: "trailer", counts, sha256}` where sha256 covers every byte before it.
 */
import { createHash, randomBytes, type Hash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { pipeline as pipelineAsync } from 'node:stream/promises';
import { pipeline, Transform, type Readable } from 'node:stream';
import { createGunzip, createGzip } from 'node:zlib';
import { InvalidRequestError, type FieldIssue } from '../errors.js';
import { lineShape, MAX_LINE_BYTES, Pacer, RawString, type ArchiveBounds } from './bounds.js';
import { headerIssues } from './recordRules.js';
import { TYPE_BY_NAME } from './recordTypes.js';

export const ARCHIVE_FORMAT = 'wks-archive';
export const ARCHIVE_VERSION = 1;

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
  /** 1-based position among the records of its type (its ref, for types that have one). */
  position: number;
}

/** Writes header, records and trailer as gzip to a file, hashing every line before the trailer. */
export class ArchiveWriter {
  private readonly hash: Hash = createHash('sha256');
  private readonly gzip = createGzip();
  private readonly done: Promise<void>;
  private readonly counts: Counts = {};

  constructor(file: string) {
    this.done = pipelineAsync(this.gzip, createWriteStream(file));
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

/**
 * Splits a byte stream into lines (without the newline), counting the bytes it expands to: a
 * line's length and the total are checked before a line is assembled.
 */
function lineSplitter(bounds: ArchiveBounds): Transform {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let expanded = 0;
  const tooLong = () => invalid(`a line is longer than ${MAX_LINE_BYTES} bytes`);
  return new Transform({
    readableObjectMode: true,
    transform(chunk: Buffer, _encoding, callback) {
      expanded += chunk.length;
      if (expanded > bounds.maxExpandedBytes)
        return callback(invalid(`it expands to more than ${bounds.maxExpandedBytes} bytes (ARCHIVE_MAX_EXPANDED_BYTES)`));
      let start = 0;
      for (let nl = chunk.indexOf(10, start); nl !== -1; nl = chunk.indexOf(10, start)) {
        if (pendingBytes + nl - start > MAX_LINE_BYTES) return callback(tooLong());
        this.push(pending.length ? Buffer.concat([...pending, chunk.subarray(start, nl)]) : chunk.subarray(start, nl));
        pending = [];
        pendingBytes = 0;
        start = nl + 1;
      }
      if (start < chunk.length) {
        pending.push(chunk.subarray(start));
        pendingBytes += chunk.length - start;
        if (pendingBytes > MAX_LINE_BYTES) return callback(tooLong());
      }
      callback();
    },
    flush(callback) {
      if (pendingBytes) this.push(Buffer.concat(pending));
      callback();
    },
  });
}

function invalid(message: string, issues?: FieldIssue[]): InvalidRequestError {
  return new InvalidRequestError(`The archive is not valid: ${message}.`, issues ?? [{ field: 'archive', message, in: 'body' }]);
}

/** Reads the archive's lines as raw bytes within `bounds`; gzip damage (a truncated file) becomes the 400. */
export async function* archiveLines(file: string, bounds: ArchiveBounds): AsyncGenerator<Buffer> {
  // pipeline: a refusal anywhere (or the reader stopping) closes the file and the gunzip too.
  const lines = pipeline(createReadStream(file), createGunzip(), lineSplitter(bounds), () => undefined);
  try {
    for await (const line of lines as Readable) yield line as Buffer;
  } catch (error) {
    if (error instanceof InvalidRequestError) throw error;
    const e = error as NodeJS.ErrnoException;
    if (e.code?.startsWith('Z_')) throw invalid(`not a complete gzip stream (${e.message})`);
    throw invalid(`unreadable (${e.message})`);
  }
}

/** Stands for a lifted string while the rest of its line is parsed (a NUL: no storable value holds one). */
const LIFTED = `\u0000lifted-${randomBytes(8).toString('hex')}`;

/**
 * Parses a line whose length the reader has checked, once its shape has been checked too. In a
 * long line, the longest string is lifted out first (a RawString takes its place) when it is an
 * upload's bytes; any other is parsed back, a turn of the event loop before it.
 */
async function parse(line: Buffer, at: number, pacer: Pacer): Promise<Record<string, unknown>> {
  const { issue, longest } = lineShape(line);
  if (issue) throw invalid(`line ${at} ${issue}`);
  const lift = line.length > BIG_LINE && longest.close - longest.open > BIG_LINE;
  const text = lift
    ? `${line.toString('utf8', 0, longest.open)}${JSON.stringify(LIFTED)}${line.toString('utf8', longest.close + 1)}`
    : line.toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // reported below
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw invalid(`line ${at} is not a JSON object`);
  const record = value as Record<string, unknown>;
  if (!lift) return record;
  const raw = new RawString(line.subarray(longest.open + 1, longest.close));
  const data = record.data as Record<string, unknown> | undefined;
  if (record.type === 'upload' && data && typeof data === 'object' && data.data === LIFTED) data.data = raw;
  else {
    await pacer.yield();
    replaceLifted(record, raw.text());
  }
  return record;
}

/** Puts `text` back where the lifted string was (the walk is bounded by the line's checked shape). */
function replaceLifted(value: Record<string, unknown>, text: string): void {
  const stack: object[] = [value];
  while (stack.length) {
    const node = stack.pop() as Record<string, unknown>;
    for (const [key, inner] of Object.entries(node)) {
      if (inner === LIFTED) node[key] = text;
      else if (inner && typeof inner === 'object') stack.push(inner);
    }
  }
}

/** Lines longer than this get event-loop turns between the steps of their reading. */
const BIG_LINE = 256 * 1024;

/** Adds a line and its newline to the checksum, a slice at a time. */
async function hashLine(hash: Hash, line: Buffer, pacer: Pacer): Promise<void> {
  for (let at = 0; at < line.length; at += BIG_LINE) {
    hash.update(line.subarray(at, at + BIG_LINE));
    await pacer.breathe();
  }
  hash.update('\n');
}

const isCounts = (value: unknown): value is Counts =>
  !!value && typeof value === 'object' && Object.values(value).every((n) => Number.isInteger(n) && (n as number) >= 0);

function sameCounts(a: Counts, b: Counts): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].every((k) => (a[k] ?? 0) === (b[k] ?? 0));
}

/**
 * Checks one record's shape: a known type within its count, exactly its columns, its ref in
 * sequence and refs to records before it.
 */
function checkRecord(value: Record<string, unknown>, at: number, seen: Counts, bounds: ArchiveBounds): ArchiveRecord {
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
  if (position > bounds.maxRecordsPerType)
    throw invalid(`it holds more than ${bounds.maxRecordsPerType} ${spec.type} records (ARCHIVE_MAX_RECORDS)`);
  if (spec.ref && record.ref !== position) throw invalid(`line ${at} (${spec.type}) has ref ${String(record.ref)}, expected ${position}`);
  for (const [column, target] of Object.entries(spec.refs ?? {})) {
    const ref = record[column];
    if (ref === null && column !== 'article_id' && column !== 'section_id') continue;
    if (!Number.isInteger(ref) || (ref as number) < 1 || (ref as number) > (seen[target] ?? 0))
      throw invalid(`line ${at} (${spec.type}) refers to ${target} ${String(ref)}, which is not in the archive before it`);
  }
  seen[spec.type] = position;
  return { type: spec.type, data: record, position };
}

/** Checks the header's format, version, workspace and counts. */
function checkHeader(value: Record<string, unknown>): ArchiveHeader {
  if (value.format !== ARCHIVE_FORMAT) throw invalid(`the header does not name the format "${ARCHIVE_FORMAT}"`);
  if (value.version !== ARCHIVE_VERSION)
    throw invalid(`version ${JSON.stringify(value.version)} is not supported (this service reads version ${ARCHIVE_VERSION})`);
  const ws = value.workspace as ArchiveHeader['workspace'] | undefined;
  if (!ws || typeof ws.name !== 'string' || typeof ws.id !== 'string' || typeof ws.organizationId !== 'string' || !isCounts(value.counts))
    throw invalid('the header lacks workspace {id, name, organizationId} or counts');
  const issues = headerIssues(value as unknown as ArchiveHeader);
  if (issues.length) throw invalid(`line 1 (header): ${issues.map((i) => `${i.field}: ${i.message}`).join('; ')}`, issues);
  return value as unknown as ArchiveHeader;
}

/**
 * Checks a whole archive before anything is written: gzip intact, within the bounds, header format
 * and version, every record's shape, the trailer present and last, its SHA-256 over every
 * preceding byte, and the counts of header, trailer and records equal. Resolves with the header;
 * `onRecord` checks each record's contents (and may refuse it by throwing).
 */
export async function verifyArchive(
  file: string,
  bounds: ArchiveBounds,
  onRecord: (record: ArchiveRecord, at: number) => Promise<void>,
): Promise<ArchiveHeader> {
  const hash = createHash('sha256');
  const pacer = new Pacer();
  let header: ArchiveHeader | undefined;
  let trailer: Record<string, unknown> | undefined;
  const seen: Counts = {};
  let at = 0;
  for await (const line of archiveLines(file, bounds)) {
    at++;
    if (trailer) throw invalid(`line ${at} follows the trailer`);
    const value = await parse(line, at, pacer);
    if (at === 1) header = checkHeader(value);
    else if (value.type === 'trailer') {
      trailer = value;
      continue;
    } else await onRecord(checkRecord(value, at, seen, bounds), at);
    await hashLine(hash, line, pacer);
  }
  if (!header) throw invalid('it is empty');
  if (!trailer) throw invalid('it has no trailer (truncated?)');
  if (!isCounts(trailer.counts) || typeof trailer.sha256 !== 'string') throw invalid('the trailer lacks counts or sha256');
  if (trailer.sha256 !== hash.digest('hex')) throw invalid('the SHA-256 in the trailer does not match its content (altered or damaged)');
  if (!sameCounts(trailer.counts, seen) || !sameCounts(header.counts, seen))
    throw invalid(`the record counts ${JSON.stringify(seen)} differ from the header's or trailer's`);
  return header;
}

/**
 * The archive's records in order, with their positions among records of their type (call after
 * verifyArchive); lines for which `skip(line number)` holds are passed over unparsed.
 */
export async function* archiveRecords(file: string, bounds: ArchiveBounds, skip: (at: number) => boolean): AsyncGenerator<ArchiveRecord> {
  const pacer = new Pacer();
  const seen: Counts = {};
  let at = 0;
  for await (const line of archiveLines(file, bounds)) {
    if (++at === 1 || skip(at)) continue;
    if (line.length > BIG_LINE) await pacer.yield();
    const value = JSON.parse(line.toString('utf8')) as { type: string; data: Record<string, unknown> };
    if (value.type === 'trailer') continue;
    const position = (seen[value.type] = (seen[value.type] ?? 0) + 1);
    yield { type: value.type, data: value.data, position };
    await pacer.breathe();
  }
}
