/**
 * The one cursor of workspace search and memory search: `[offset]` for a page of full text that
 * was asked for, `[offset, ranking]` for a page another ranking made (or full text standing in for
 * one, after a fallback). A later page keeps the ranking its cursor names, whatever `mode` says.
 */
import { invalidField } from '../errors.js';
import { decodeCursor, encodeCursor } from '../pagination.js';
import type { Ranking } from '../types/search.js';

const RANKINGS: readonly Ranking[] = ['fulltext', 'semantic', 'hybrid'];

/** The cursor of the page after `offset`, made by `ranking` when `asked` was requested. */
export function searchCursor(offset: number, ranking: Ranking, asked: Ranking): string {
  return encodeCursor(ranking === 'fulltext' && asked === 'fulltext' ? [offset] : [offset, ranking]);
}

/** A search cursor's offset and ranking, or a 400 naming `cursor`. */
export function readSearchCursor(cursor: string): { offset: number; ranking: Ranking } {
  let decoded: [number, string];
  try {
    decoded = [decodeCursor<[number]>(cursor, ['number'])[0], 'fulltext'];
  } catch {
    decoded = decodeCursor<[number, string]>(cursor, ['number', 'string']);
  }
  const [offset, ranking] = decoded;
  if (!Number.isInteger(offset) || offset < 0 || !RANKINGS.includes(ranking as Ranking))
    throw invalidField('cursor', 'is not a cursor returned by this search');
  return { offset, ranking: ranking as Ranking };
}
