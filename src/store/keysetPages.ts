/** Keyset pages over a table by (created_at, id): its count and one page's positions in one statement (the admin lists). */
import { sql, type SqlTarget } from '../db/sql.js';

/** Which rows of which table, in which order: `where` holds SQL on the table with `?`s filled by `params`. */
export interface KeysetList {
  table: string;
  idType: 'uuid' | 'bigint';
  order: 'asc' | 'desc';
  where: string[];
  params: unknown[];
  /** Columns of the page's rows besides the position (e.g. a lazy payload). */
  extra?: string;
}

/** The count of a list's rows (on every row), and one row of its page's positions (null on the row of an empty page). */
export interface PageRow {
  total: number;
  id: string | null;
  at: string | null;
  [column: string]: unknown;
}

/** Microsecond UTC text of created_at: the exact position, so no row is skipped or repeated between pages. */
const AT = `to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/** The list's total and up to `limit` positions (id, created_at text) after the position `after` if given, in order. */
export function keysetPositions(db: SqlTarget, spec: KeysetList, after: [string, string] | null, limit: number): Promise<PageRow[]> {
  const base = spec.where.length ? spec.where.join(' and ') : 'true';
  const keyset: string[] = [];
  const keysetParams: unknown[] = [];
  if (after) {
    keysetParams.push(...after);
    keyset.push(`(created_at, id) ${spec.order === 'asc' ? '>' : '<'} (?::timestamptz, ?::${spec.idType})`);
  }
  // The table's columns, not the select's `id` text (which would sort id 10 before 9 among rows of one created_at).
  const order = `${spec.table}.created_at ${spec.order}, ${spec.table}.id ${spec.order}`;
  return sql<PageRow>(
    db,
    `with total as (select count(*)::int as n from ${spec.table} where ${base}),
     page as (select id::text as id, ${AT} as at, row_number() over (order by ${order}) as ord${spec.extra ? `, ${spec.extra}` : ''}
              from ${spec.table} where ${[base, ...keyset].join(' and ')} order by ${order} limit ?)
     select total.n as total, page.* from total left join page on true order by page.ord`,
    [...spec.params, ...spec.params, ...keysetParams, limit],
  );
}
