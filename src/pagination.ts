import { invalidField } from './errors.js';
import { RULES, type IntRule } from './contract/rules.js';

/** A page of a list: the items and an opaque cursor for the next page (null at the end). */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** Encodes a keyset position as an opaque, URL-safe cursor. */
export function encodeCursor(position: readonly (string | number)[]): string {
  return Buffer.from(JSON.stringify(position)).toString('base64url');
}

/** Decodes a cursor made by `encodeCursor` with the given shape, or throws a 400 naming `cursor`. */
export function decodeCursor<T extends (string | number)[]>(cursor: string, shape: readonly ('string' | 'number')[]): T {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(value) && value.length === shape.length && value.every((v, i) => typeof v === shape[i])) return value as T;
  } catch {
    // fall through to the 400
  }
  throw invalidField('cursor', 'is not a cursor returned by this list');
}

/** The page size: the rule's default when absent (the input contract has checked its range). */
export function pageSize(limit: number | null | undefined, rule: IntRule = RULES.pageLimit): number {
  if (limit === null || limit === undefined) return rule.default ?? rule.maximum;
  if (!Number.isInteger(limit) || limit < rule.minimum || limit > rule.maximum)
    throw invalidField('limit', `must be an integer from ${rule.minimum} to ${rule.maximum}`);
  return limit;
}

/** Cuts `rows` (fetched with one extra) to a page and derives the next cursor from its last item. */
export function toPage<T>(rows: T[], size: number, position: (last: T) => (string | number)[]): Page<T> {
  const items = rows.slice(0, size);
  const more = rows.length > size;
  return { items, nextCursor: more ? encodeCursor(position(items[items.length - 1])) : null };
}
