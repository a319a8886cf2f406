/** Statements on api_specs (a workspace's attached OpenAPI spec and the result of its last sync). */
import { sql, type SqlTarget } from '../db/sql.js';
import type { ParsedSpec } from '../openapi/parsedSpec.js';
import type { SyncPlan } from '../types/apiReference.js';

/** The attached spec's row, without its text. */
export interface SpecRow {
  source: string;
  url: string | null;
  title: string | null;
  version: string | null;
  openapi_version: string | null;
  operation_count: number;
  last_sync: SyncPlan | null;
  last_sync_at: string | null;
  last_sync_result: string | null;
  last_sync_error: string | null;
  warnings: string[] | null;
}

/** Attaches a spec to a workspace, replacing the one attached (its last sync's result stays until the next sync writes it). */
export async function upsertSpec(
  db: SqlTarget,
  spec: { workspaceId: string; source: 'url' | 'raw'; url: string | null; raw: string; parsed: ParsedSpec; createdAt: Date },
): Promise<void> {
  const { parsed } = spec;
  await sql(
    db,
    `insert into api_specs (workspace_id, source, url, raw, title, version, openapi_version, operation_count, warnings, created_at)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb, ?)
       on conflict (workspace_id) do update set source = excluded.source, url = excluded.url, raw = excluded.raw, title = excluded.title,
         version = excluded.version, openapi_version = excluded.openapi_version, operation_count = excluded.operation_count, warnings = excluded.warnings`,
    [
      spec.workspaceId,
      spec.source,
      spec.url,
      spec.raw,
      parsed.title,
      parsed.version,
      parsed.openapiVersion,
      parsed.operations.length,
      JSON.stringify(parsed.warnings),
      spec.createdAt,
    ],
  );
}

/** Where the attached spec comes from and its stored text, if one is attached. */
export async function specSource(
  db: SqlTarget,
  workspaceId: string,
): Promise<{ source: string; url: string | null; raw: string } | undefined> {
  const [spec] = await sql<{ source: string; url: string | null; raw: string }>(
    db,
    'select source, url, raw from api_specs where workspace_id = ?',
    [workspaceId],
  );
  return spec;
}

/** Records a sync that failed (the spec could not be fetched or parsed), with its error. */
export async function recordSyncFailure(db: SqlTarget, workspaceId: string, now: Date, message: string): Promise<void> {
  await sql(db, `update api_specs set last_sync_at = ?, last_sync_result = 'failed', last_sync_error = ? where workspace_id = ?`, [
    now,
    message,
    workspaceId,
  ]);
}

/** Stores the text a sync read and what the parser found in it. */
export async function updateSpecText(db: SqlTarget, workspaceId: string, raw: string, parsed: ParsedSpec): Promise<void> {
  await sql(
    db,
    'update api_specs set raw = ?, title = ?, version = ?, openapi_version = ?, operation_count = ?, warnings = ?::jsonb where workspace_id = ?',
    [raw, parsed.title, parsed.version, parsed.openapiVersion, parsed.operations.length, JSON.stringify(parsed.warnings), workspaceId],
  );
}

/** Records a sync that was applied, with its plan. */
export async function recordSyncResult(db: SqlTarget, workspaceId: string, plan: SyncPlan, now: Date): Promise<void> {
  await sql(
    db,
    `update api_specs set last_sync = ?::jsonb, last_sync_at = ?, last_sync_result = 'ok', last_sync_error = null where workspace_id = ?`,
    [JSON.stringify(plan), now, workspaceId],
  );
}

/** The attached spec's id, its row locked for the rest of the transaction, if one is attached. */
export async function lockSpec(db: SqlTarget, workspaceId: string): Promise<{ id: number } | undefined> {
  const [spec] = await sql<{ id: number }>(db, 'select id from api_specs where workspace_id = ? for update', [workspaceId]);
  return spec;
}

/** Removes the attached spec. */
export async function deleteSpec(db: SqlTarget, workspaceId: string): Promise<void> {
  await sql(db, 'delete from api_specs where workspace_id = ?', [workspaceId]);
}

/** The attached spec without its text, if one is attached. */
export async function specStatusRow(db: SqlTarget, workspaceId: string): Promise<SpecRow | undefined> {
  const [row] = await sql<SpecRow>(
    db,
    'select source, url, title, version, openapi_version, operation_count, last_sync, last_sync_at, last_sync_result, last_sync_error, warnings from api_specs where workspace_id = ?',
    [workspaceId],
  );
  return row;
}
