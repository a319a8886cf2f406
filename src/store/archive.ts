/**
 * Statements of workspace archives: counting and paging a record type's rows for export, checking
 * an import's target is empty, reserving ids and inserting a batch of records, its memory usage.
 */
import { sql, type SqlTarget } from '../db/sql.js';
import { ACCESSED_AT } from './memoryNotes.js';

/**
 * Columns exported from an expression over row `t` instead of as stored: a note's access time lives
 * partly in memory_note_access, an upload's bytes in upload_parts.
 */
const EXPRESSIONS: Record<string, Record<string, string>> = {
  memory_notes: { accessed_at: `${ACCESSED_AT('t')} as accessed_at` },
  uploads: {
    data: `(select encode(string_agg(p.data, ''::bytea order by p.part), 'base64') from upload_parts p
              where p.workspace_id = t.workspace_id and p.upload_id = t.id) as data`,
  },
};

/** What the statements need of a record type (see src/archive/recordTypes.ts). */
export interface ArchivedTable {
  table: string;
  columns: readonly string[];
  ref: boolean;
  order: readonly string[];
}

/** How many rows of `table` the workspace has. */
export async function countRows(db: SqlTarget, table: string, workspaceId: string): Promise<number> {
  const [{ n }] = await sql<{ n: number }>(db, `select count(*)::int as n from ${table} where workspace_id = ?`, [workspaceId]);
  return n;
}

/** The select of a type's columns as one jsonb per row (bytes as base64), for one workspace, in keyset order. */
function selectPage(spec: ArchivedTable, after: unknown[] | null, limit: number): { text: string; params: unknown[] } {
  const columns = spec.columns.map((c) => EXPRESSIONS[spec.table]?.[c] ?? (c === 'data' ? `encode(t.data, 'base64') as data` : `t.${c}`));
  const keys = spec.order.map((c) => `t.${c}`);
  const ids = spec.ref ? ['t.id as "__id"'] : [];
  const where = after ? `and (${keys.join(', ')}) > (${keys.map(() => '?').join(', ')})` : '';
  return {
    text: `select to_jsonb(x) as row from (select ${[...columns, ...ids, ...keys.map((k, i) => `${k} as "__k${i}"`)].join(', ')}
             from ${spec.table} t where t.workspace_id = ? ${where} order by ${keys.join(', ')} limit ${limit}) x`,
    params: after ?? [],
  };
}

/**
 * Up to `limit` rows of a type for one workspace, after the keyset position `after` if given: each
 * row one jsonb of the type's columns (bytes as base64), with `__id` when records carry a ref, and
 * the keyset position as `__k0`, `__k1`, ….
 */
export async function exportPage(
  db: SqlTarget,
  spec: ArchivedTable,
  workspaceId: string,
  after: unknown[] | null,
  limit: number,
): Promise<Record<string, unknown>[]> {
  const page = selectPage(spec, after, limit);
  const rows = await sql<{ row: Record<string, unknown> }>(db, page.text, [workspaceId, ...page.params]);
  return rows.map((r) => r.row);
}

/** Whether the workspace has any row in `table`. */
export async function hasRows(db: SqlTarget, table: string, workspaceId: string): Promise<boolean> {
  const [row] = await sql(db, `select 1 from ${table} where workspace_id = ? limit 1`, [workspaceId]);
  return Boolean(row);
}

/** Sets the workspace's memory quota counter to `used` notes. */
export async function setMemoryUsage(db: SqlTarget, workspaceId: string, used: number): Promise<void> {
  await sql(
    db,
    `insert into memory_usage (workspace_id, used) values (?, ?) on conflict (workspace_id) do update set used = excluded.used`,
    [workspaceId, used],
  );
}

/** `count` new ids from the serial sequence of `table`'s id, ascending. */
export async function reserveIds(db: SqlTarget, table: string, count: number): Promise<number[]> {
  const ids = await sql<{ id: number }>(db, `select nextval(pg_get_serial_sequence(?, 'id'))::int as id from generate_series(1, ?)`, [
    table,
    count,
  ]);
  return ids.map((r) => r.id).sort((a, b) => a - b);
}

/** Columns that hold a member's or agent key's id, and the table that holds it. */
const FOREIGN_IDS: Record<string, string> = {
  agent_key_id: 'agent_keys',
  member_id: 'members',
  reviewed_by: 'members',
  written_by_key_id: 'agent_keys',
  replaced_by_key_id: 'agent_keys',
};

/**
 * Inserts rows of `table` in one statement, each an object of `columns` (its workspace_id among
 * them); a member's or agent key's id that names none of the organization `organizationId`
 * becomes null (an archive names them; only the importing organization's survive).
 */
export async function insertArchivedRows(
  db: SqlTarget,
  table: string,
  columns: readonly string[],
  rows: readonly Record<string, unknown>[],
  organizationId: string,
): Promise<void> {
  const list = columns.map((c) => `"${c}"`).join(', ');
  const foreign = columns.filter((c) => FOREIGN_IDS[c]);
  const select = columns.map((c) =>
    FOREIGN_IDS[c] ? `(select f.id from ${FOREIGN_IDS[c]} f where f.id = r."${c}" and f.organization_id = ?::uuid) as "${c}"` : `r."${c}"`,
  );
  await sql(db, `insert into ${table} (${list}) select ${select.join(', ')} from jsonb_populate_recordset(null::${table}, ?::jsonb) r`, [
    ...foreign.map(() => organizationId),
    JSON.stringify(rows),
  ]);
}
