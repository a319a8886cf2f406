/**
 * The one cursor of workspace search and memory search: `[offset]` for a page of full text that
 * was asked for, `[offset, ranking]` for a page another ranking made (or full text standing in for
 * one, after a fallback). A later page keeps the ranking its cursor names, whatever `mode` says.
 */
import { invalidField } from '../errors.js';
import { decodeCursor, encodeCursor } from '../pagination.js';
import type { SearchMode } from '../types/search.js';

// A bounded full-text page's cursor is a full-text one (the next page is bounded by the same rule).
const RANKINGS: readonly SearchMode[] = ['fulltext', 'semantic', 'hybrid'];

/** The cursor of the page after `offset`, made by `ranking` when `asked` was requested. */
export function searchCursor(offset: number, ranking: SearchMode, asked: SearchMode): string {
  return encodeCursor(ranking === 'fulltext' && asked === 'fulltext' ? [offset] : [offset, ranking]);
}

/** A search cursor's offset and ranking, or a 400 naming `cursor`. */
export function readSearchCursor(cursor: string): { offset: number; ranking: SearchMode } {
  let decoded: [number, string];
  try {
    decoded = [decodeCursor<[number]>(cursor, ['number'])[0], 'fulltext'];
  } catch {
    decoded = decodeCursor<[number, string]>(cursor, ['number', 'string']);
  }
  const [offset, ranking] = decoded;
  if (!Number.isInteger(offset) || offset < 0 || !RANKINGS.includes(ranking as SearchMode))
    throw invalidField('cursor', 'is not a cursor returned by this search');
  return { offset, ranking: ranking as SearchMode };
}
