import { invalidField } from '../errors.js';
import { LIMITS } from '../limits.js';

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

// C0 and C1 control characters, plus DEL.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * Normalises a note path (Unicode NFC, surrounding whitespace and one leading/trailing "/"
 * removed) and checks it: "/"-separated segments, none empty, "." or "..", no control
 * characters, at most 512 UTF-8 bytes. Paths are case-sensitive. Throws a 400 naming `field`.
 */
export function normalizePath(raw: string, field = 'path'): string {
  // Printable ASCII is already in NFC (and normalize() is costly on a hot path).
  const path = (PRINTABLE_ASCII.test(raw) ? raw : raw.normalize('NFC')).trim().replace(/^\/+/, '').replace(/\/+$/, '');
  if (!path) throw invalidField(field, 'must not be empty');
  if (CONTROL.test(path)) throw invalidField(field, 'must not contain control characters');
  if (Buffer.byteLength(path, 'utf8') > LIMITS.memoryPathBytes) throw invalidField(field, `must be at most ${LIMITS.memoryPathBytes} bytes in UTF-8`);
  for (const segment of path.split('/')) {
    if (segment === '') throw invalidField(field, 'must not contain empty segments ("//")');
    if (segment === '.' || segment === '..') throw invalidField(field, 'must not contain "." or ".." segments');
  }
  return path;
}
