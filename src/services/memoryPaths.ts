import { invalidField } from '../errors.js';
import { NOTE_PATH_BYTES } from '../contract/rules.js';

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/** Whether a string holds a C0 or C1 control character, or DEL. */
function hasControl(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const unit = value.charCodeAt(i);
    if (unit <= 0x1f || (unit >= 0x7f && unit <= 0x9f)) return true;
  }
  return false;
}

/**
 * Normalises a note path (Unicode NFC, surrounding whitespace and leading/trailing "/" removed)
 * and checks it: "/"-separated segments, none empty, "." or "..", no control characters, at most
 * 512 UTF-8 bytes. Paths are case-sensitive. Throws a 400 naming `field`. The length is checked
 * before anything else looks at the value, and every step is linear in its length.
 */
export function normalizePath(raw: string, field = 'path'): string {
  const maxBytes = NOTE_PATH_BYTES;
  // NFC never makes a string more than 3 times longer; anything past that cannot end up in bounds.
  if (raw.length > 3 * maxBytes + 1024) throw invalidField(field, `must be at most ${maxBytes} bytes in UTF-8`);
  // Printable ASCII is already in NFC (and normalize() is costly on a hot path).
  const path = trimSlashes((PRINTABLE_ASCII.test(raw) ? raw : raw.normalize('NFC')).trim());
  if (!path) throw invalidField(field, 'must not be empty');
  if (hasControl(path)) throw invalidField(field, 'must not contain control characters');
  if (Buffer.byteLength(path, 'utf8') > maxBytes) throw invalidField(field, `must be at most ${maxBytes} bytes in UTF-8`);
  for (const segment of path.split('/')) {
    if (segment === '') throw invalidField(field, 'must not contain empty segments ("//")');
    if (segment === '.' || segment === '..') throw invalidField(field, 'must not contain "." or ".." segments');
  }
  return path;
}

/** The value without leading and trailing "/" (an index loop: a `/\/+$/` regex backtracks quadratically on runs of "/"). */
export function trimSlashes(value: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && value.charCodeAt(start) === 0x2f) start++;
  while (end > start && value.charCodeAt(end - 1) === 0x2f) end--;
  return value.slice(start, end);
}
