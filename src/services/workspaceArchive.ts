/**
 * Export and import of a whole workspace as an archive (src/archive/format.ts). Export reads one
 * repeatable-read snapshot into a file; import checks the whole file first, then writes every
 * record in one transaction with new ids, references translated through the archive's refs.
 */
import { IsolationLevel } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { randomBytes, randomUUID } from 'node:crypto';
import {
  ArchiveWriter,
  archiveRecords,
  ARCHIVE_FORMAT,
  ARCHIVE_VERSION,
  verifyArchive,
  type ArchiveHeader,
  type Counts,
} from '../archive/format.js';
import { RECORD_TYPES, type RecordType } from '../archive/recordTypes.js';
import type { RequestContext } from '../context.js';
import { sql } from '../db/sql.js';
import { ConflictError, DomainError, InvalidRequestError, NotFoundError } from '../errors.js';
import { isUuid } from '../ids.js';
import { ENQUEUE_EMBEDDING } from '../search/vectors.js';
import { auditedWrite } from './audit.js';

const PAGE = 500;

/** The select of a type's columns as one jsonb per row (bytes as base64), for one workspace, in keyset order. */
function selectPage(spec: RecordType, after: unknown[] | null): { text: string; params: unknown[] } {
  const columns = spec.columns.map((c) => (c === 'data' ? `encode(t.data, 'base64') as data` : `t.${c}`));
  const keys = spec.order.map((c) => `t.${c}`);
  const ids = spec.ref ? ['t.id as "__id"'] : [];
  const where = after ? `and (${keys.join(', ')}) > (${keys.map(() => '?').join(', ')})` : '';
  return {
    text: `select to_jsonb(x) as row from (select ${[...columns, ...ids, ...keys.map((k, i) => `${k} as "__k${i}"`)].join(', ')}
             from ${spec.table} t where t.workspace_id = ? ${where} order by ${keys.join(', ')} limit ${PAGE}) x`,
    params: after ?? [],
  };
}

/** Writes a workspace's archive to `file`; resolves with its header. */
export async function exportWorkspace(em: EntityManager, workspaceId: string, file: string): Promise<ArchiveHeader> {
  if (!isUuid(workspaceId)) throw new NotFoundError('Workspace');
  return em.transactional(
    async (tx) => {
      const [ws] = await sql<{ id: string; name: string; organization_id: string }>(
        tx,
        'select id, name, organization_id from workspaces where id = ?',
        [workspaceId],
      );
      if (!ws) throw new NotFoundError('Workspace');
      const counts: Counts = {};
      for (const spec of RECORD_TYPES) {
        const [{ n }] = await sql<{ n: number }>(tx, `select count(*)::int as n from ${spec.table} where workspace_id = ?`, [workspaceId]);
        if (n) counts[spec.type] = n;
      }
      const header: ArchiveHeader = {
        format: ARCHIVE_FORMAT,
        version: ARCHIVE_VERSION,
        workspace: { id: ws.id, name: ws.name, organizationId: ws.organization_id },
        createdAt: new Date().toISOString(),
        counts,
      };
      const writer = new ArchiveWriter(file);
      await writer.line(header);
      const refsOf = new Map<string, Map<number, number>>();
      for (const spec of RECORD_TYPES) await exportType(tx, spec, workspaceId, writer, refsOf);
      await writer.finish();
      return header;
    },
    { isolationLevel: IsolationLevel.REPEATABLE_READ },
  );
}

async function exportType(
  tx: EntityManager,
  spec: RecordType,
  workspaceId: string,
  writer: ArchiveWriter,
  refsOf: Map<string, Map<number, number>>,
) {
  const own = new Map<number, number>();
  refsOf.set(spec.type, own);
  let after: unknown[] | null = null;
  for (;;) {
    const page = selectPage(spec, after);
    const rows = await sql<{ row: Record<string, unknown> }>(tx, page.text, [workspaceId, ...page.params]);
    for (const { row } of rows) {
      const data: Record<string, unknown> = {};
      for (const column of spec.columns) data[column] = row[column];
      for (const [column, target] of Object.entries(spec.refs ?? {})) {
        if (data[column] === null) continue;
        const ref = refsOf.get(target)!.get(data[column] as number);
        if (ref === undefined) throw new Error(`${spec.type} refers to a ${target} that is not in the workspace`);
        data[column] = ref;
      }
      if (spec.ref) {
        own.set(row.__id as number, own.size + 1);
        data.ref = own.size;
      }
      await writer.line({ type: spec.type, data });
    }
    if (rows.length < PAGE) return;
    const last = rows[rows.length - 1].row;
    after = spec.order.map((_, i) => last[`__k${i}`]);
  }
}

/** Where an import goes: an existing, empty workspace, or a new one in an organization. */
export type ImportTarget = { workspaceId: string } | { organizationId?: string; name?: string };

const UPLOAD_LINK = /\/uploads\/([A-Za-z0-9_-]{16,64})\./g;

/**
 * Imports a verified archive in one transaction; resolves with the workspace and the counts.
 * Nothing is written unless the whole archive passed verifyArchive.
 */
export async function importWorkspace(
  ctx: RequestContext,
  file: string,
  target: ImportTarget,
): Promise<{ workspaceId: string; counts: Counts }> {
  const uploadIds = new Map<string, string>();
  const header = await verifyArchive(file, (record) => {
    if (record.type === 'upload') uploadIds.set(String(record.data.id), randomBytes(16).toString('base64url'));
  });
  return ctx.em.transactional(async (tx) => {
    const workspaceId = await targetWorkspace(tx, ctx, header, target);
    const writer = new RecordInserter(tx, workspaceId, uploadIds);
    for await (const record of archiveRecords(file)) await writer.add(record.type, record.data);
    await writer.flush();
    // Revisions came from the archive: drop the ones the insert trigger recorded for the new rows first.
    await finish(tx, workspaceId);
    return { workspaceId, counts: header.counts };
  });
}

async function targetWorkspace(tx: EntityManager, ctx: RequestContext, header: ArchiveHeader, target: ImportTarget): Promise<string> {
  if ('workspaceId' in target) {
    const id = target.workspaceId;
    const [ws] = isUuid(id) ? await sql(tx, 'select id from workspaces where id = ? for update', [id]) : [];
    if (!ws) throw new NotFoundError('Workspace');
    for (const spec of RECORD_TYPES) {
      const [row] = await sql(tx, `select 1 from ${spec.table} where workspace_id = ? limit 1`, [id]);
      if (row) throw new ConflictError('The workspace is not empty: import into a new or empty workspace.', { found: spec.type });
    }
    return id;
  }
  const organizationId = target.organizationId ?? header.workspace.organizationId;
  const [org] = isUuid(organizationId) ? await sql(tx, 'select id from organizations where id = ?', [organizationId]) : [];
  if (!org)
    throw new DomainError(
      'not_found',
      target.organizationId
        ? 'Organization was not found.'
        : `The archive's organization (${header.workspace.organizationId}) is not on this service: name one with organization= (wks import --org <id>), or import into an empty workspace.`,
      { organizationId },
    );
  const id = randomUUID();
  await auditedWrite(
    tx,
    ctx,
    { action: 'workspace.created', targetType: 'workspace', targetId: id, organizationId, workspaceId: id },
    { write: 'insert into workspaces (id, organization_id, name, created_at) values (?, ?, ?, clock_timestamp()) returning id' },
    [id, organizationId, target.name ?? header.workspace.name],
  );
  return id;
}

/** After the records: the archive's article revisions replace the trigger's, usage is counted, content is queued for embedding. */
const ENQUEUE_NOTES_OF_FLAGGED = ENQUEUE_EMBEDDING(
  'note',
  `select n.id, n.workspace_id from memory_notes n join embedding_stamps s on s.workspace_id = n.workspace_id and s.notes_embedded
    where n.workspace_id = ?`,
);

async function finish(tx: EntityManager, workspaceId: string): Promise<void> {
  await sql(
    tx,
    `insert into memory_usage (workspace_id, used) select ?::uuid, count(*) from memory_notes where workspace_id = ?
     on conflict (workspace_id) do update set used = excluded.used`,
    [workspaceId, workspaceId],
  );
  await sql(tx, ENQUEUE_EMBEDDING('article', 'select id, workspace_id from articles where workspace_id = ?'), [workspaceId]);
  await sql(tx, ENQUEUE_EMBEDDING('changelog', 'select id, workspace_id from changelog_entries where workspace_id = ?'), [workspaceId]);
  // Notes only where the workspace already searches them by meaning (else its first such search queues them).
  await sql(tx, ENQUEUE_NOTES_OF_FLAGGED, [workspaceId]);
}

/** Inserts records in batches with fresh ids; keeps each ref-carrying type's ref → new id. */
class RecordInserter {
  private readonly ids = new Map<string, number[]>();
  private batch: { spec: RecordType; rows: Record<string, unknown>[]; bytes: number } | null = null;
  private revisionsCleared = false;

  constructor(
    private readonly tx: EntityManager,
    private readonly workspaceId: string,
    private readonly uploadIds: Map<string, string>,
  ) {}

  async add(type: string, data: Record<string, unknown>): Promise<void> {
    const spec = RECORD_TYPES.find((t) => t.type === type)!;
    if (this.batch && (this.batch.spec !== spec || this.batch.rows.length >= 200 || this.batch.bytes > 4 * 1024 * 1024)) await this.flush();
    const row: Record<string, unknown> = { workspace_id: this.workspaceId };
    for (const column of spec.columns) row[column] = data[column];
    for (const [column, targetType] of Object.entries(spec.refs ?? {}))
      if (row[column] !== null) row[column] = this.ids.get(targetType)![(row[column] as number) - 1];
    for (const column of spec.text ?? []) if (typeof row[column] === 'string') row[column] = this.relink(row[column]);
    if (spec.type === 'upload') {
      row.id = this.uploadIds.get(String(row.id));
      row.data = `\\x${Buffer.from(String(row.data), 'base64').toString('hex')}`;
    }
    this.batch ??= { spec, rows: [], bytes: 0 };
    this.batch.rows.push(row);
    this.batch.bytes += typeof row.data === 'string' ? row.data.length : 1024;
  }

  private relink(text: string): string {
    return this.uploadIds.size
      ? text.replace(UPLOAD_LINK, (whole, id: string) => (this.uploadIds.has(id) ? `/uploads/${this.uploadIds.get(id)}.` : whole))
      : text;
  }

  async flush(): Promise<void> {
    const batch = this.batch;
    this.batch = null;
    if (!batch?.rows.length) return;
    const { spec, rows } = batch;
    const columns = ['workspace_id', ...spec.columns];
    if (spec.ref) {
      const ids = await sql<{ id: number }>(
        this.tx,
        `select nextval(pg_get_serial_sequence(?, 'id'))::int as id from generate_series(1, ?)`,
        [spec.table, rows.length],
      );
      const fresh = ids.map((r) => r.id).sort((a, b) => a - b);
      rows.forEach((row, i) => (row.id = fresh[i]));
      columns.unshift('id');
      const known = this.ids.get(spec.type) ?? [];
      this.ids.set(spec.type, known.concat(fresh));
    }
    if (spec.type === 'article_revision' && !this.revisionsCleared) {
      this.revisionsCleared = true;
      await sql(this.tx, 'delete from article_revisions where workspace_id = ?', [this.workspaceId]);
    }
    const list = columns.map((c) => `"${c}"`).join(', ');
    try {
      await sql(
        this.tx,
        `insert into ${spec.table} (${list}) select ${list} from jsonb_populate_recordset(null::${spec.table}, ?::jsonb)`,
        [JSON.stringify(rows)],
      );
    } catch (error) {
      // A well-formed archive (checksum, counts, refs) whose values the database refuses: the
      // archive is at fault, not the service (a 400; the transaction rolls back, nothing is written).
      const e = error as { code?: string; sqlState?: string; message?: string };
      const state = e.sqlState ?? e.code ?? '';
      if (!/^2[23]/.test(state)) throw error;
      const reason = (e.message ?? '').split('\n')[0].replace(/^.* - /, '');
      throw new InvalidRequestError(`A ${spec.type} record of the archive does not fit this service's database: ${reason}`, [
        { field: spec.type, message: reason },
      ]);
    }
  }
}
