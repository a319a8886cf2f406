import { describe, expect, it } from 'vitest';
import { InvalidRequestError } from '../../src/errors.js';
import { decodeCursor, encodeCursor, pageSize, toPage } from '../../src/pagination.js';
import { RULES } from '../../src/contract/rules.js';

describe('pagination', () => {
  it('round-trips a cursor and refuses one of another shape or a forged one', () => {
    const cursor = encodeCursor(['2026-11-23T10:00:00.000Z', 42]);
    expect(decodeCursor(cursor, ['string', 'number'])).toEqual(['2026-11-23T10:00:00.000Z', 42]);
    expect(() => decodeCursor(cursor, ['number'])).toThrow(InvalidRequestError);
    expect(() => decodeCursor('%%%not-base64', ['number'])).toThrow(/cursor/);
  });

  it('defaults and bounds the page size by its rule', () => {
    expect(pageSize(undefined)).toBe(50);
    expect(pageSize(null, RULES.searchLimit)).toBe(20);
    expect(pageSize(100)).toBe(100);
    expect(() => pageSize(101)).toThrow(/limit: must be an integer from 1 to 100/);
    expect(() => pageSize(0, RULES.searchLimit)).toThrow(/from 1 to 50/);
  });

  it('cuts the extra row and derives the next cursor from the last item', () => {
    expect(toPage([1, 2, 3], 2, (n) => [n])).toEqual({ items: [1, 2], nextCursor: encodeCursor([2]) });
    expect(toPage([1, 2], 2, (n) => [n])).toEqual({ items: [1, 2], nextCursor: null });
  });
});
