/**
 * The bounds an archive is read within. Each is checked while the archive streams, before the
 * work it bounds: the expanded size and a line's length before the line is assembled, its nesting
 * and number of values before it is parsed, records per type before a record is checked.
 */
import { UPLOAD_LIMITS } from '../contract/rules.js';
import { readSetting } from '../config.js';

/** The longest line: the largest accepted image in base64, with 1 MiB for the line breaks PostgreSQL's encode() adds (~360 KB) and the other fields. */
export const MAX_LINE_BYTES = Math.ceil(UPLOAD_LIMITS.maxBytes / 3) * 4 + 1024 * 1024;
/** The deepest nesting of a line: the service writes at most 5 levels (record, data, last_sync, drifted, item). */
export const MAX_DEPTH = 8;
/** The most values (commas) in a line: room for the sync plan of a 5 MB spec; a centroid has 512. */
export const MAX_VALUES = 100_000;

/** The configurable bounds (docs/archives.md). */
export interface ArchiveBounds {
  /** Bytes of the decompressed stream (ARCHIVE_MAX_EXPANDED_BYTES, default 4 GiB). */
  maxExpandedBytes: number;
  /** Records of one type (ARCHIVE_MAX_RECORDS, default 1,000,000). */
  maxRecordsPerType: number;
}

/** The bounds as configured now (read for each import, like ARCHIVE_MAX_BYTES). */
export function archiveBounds(): ArchiveBounds {
  return {
    maxExpandedBytes: readSetting('ARCHIVE_MAX_EXPANDED_BYTES'),
    maxRecordsPerType: readSetting('ARCHIVE_MAX_RECORDS'),
  };
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;

/** A line's shape as lineShape finds it: what makes it unreadable (or null), and where its longest string literal lies. */
export interface LineShape {
  issue: string | null;
  /** Byte offsets of the opening and closing quote of the longest string (-1 when there is none). */
  longest: { open: number; close: number };
}

/**
 * What makes a line too deep or too wide to parse (nesting past MAX_DEPTH, more than MAX_VALUES
 * values), and its longest string. One pass over its bytes, jumping over strings with indexOf, so
 * an upload's base64 costs a search, not a loop; malformed JSON is left to the parser to name.
 */
export function lineShape(line: Buffer): LineShape {
  let depth = 0;
  let values = 0;
  const longest = { open: -1, close: -1 };
  const found = (issue: string | null): LineShape => ({ issue, longest });
  for (let i = 0; i < line.length; i++) {
    const byte = line[i];
    if (byte === QUOTE) {
      const close = stringEnd(line, i);
      if (close < 0) return found(null);
      if (close - i > longest.close - longest.open) Object.assign(longest, { open: i, close });
      i = close;
    } else if (byte === 0x5b || byte === 0x7b) {
      if (++depth > MAX_DEPTH) return found(`nests deeper than ${MAX_DEPTH} levels`);
    } else if (byte === 0x5d || byte === 0x7d) depth--;
    else if (byte === COMMA && ++values > MAX_VALUES) return found(`holds more than ${MAX_VALUES} values`);
  }
  return found(null);
}

/**
 * A string value left as the bytes of its JSON literal (without the quotes): a line's longest
 * string when it is long (an upload's base64), so it is never made a JavaScript string whole.
 */
export class RawString {
  constructor(readonly json: Buffer) {}

  /** The string itself (for a long value that is not an upload's bytes: a spec's text, say). */
  text(): string {
    return JSON.parse(`"${this.json.toString('utf8')}"`) as string;
  }
}

/** The index of the quote that closes the string opened at `open` (-1: none); each backslash is looked at once. */
function stringEnd(line: Buffer, open: number): number {
  let at = open;
  for (;;) {
    at = line.indexOf(QUOTE, at + 1);
    if (at < 0) return -1;
    let slashes = 0;
    while (line[at - 1 - slashes] === BACKSLASH) slashes++;
    if (slashes % 2 === 0) return at;
  }
}

/** Gives the event loop a turn whenever `sliceMs` of work have passed since the last one, so requests are served meanwhile. */
export class Pacer {
  private since = performance.now();

  constructor(private readonly sliceMs = 8) {}

  /** Yields (setImmediate: pending I/O runs first) once the slice is used up. */
  async breathe(): Promise<void> {
    if (performance.now() - this.since < this.sliceMs) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.since = performance.now();
  }

  /** Yields now. */
  async yield(): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.since = performance.now();
  }
}
