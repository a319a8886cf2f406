/**
 * Export and import of a whole workspace as an archive (src/archive/format.ts). Export reads one
 * repeatable-read snapshot into a file; import checks the whole file first (src/archive/contents.ts),
 * then writes every record in one transaction with new ids (src/archive/inserter.ts). Both are audited.
 */
import { IsolationLevel } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { archiveBounds } from './bounds.js';
import { ArchiveCheck } from './contents.js';
import {
  ArchiveWriter,
  archiveRecords,
  ARCHIVE_FORMAT,
  ARCHIVE_VERSION,
  verifyArchive,
  type ArchiveHeader,
  type Counts,
} from './format.js';
import { RecordInserter } from './inserter.js';
import { RECORD_TYPES, type RecordType } from './recordTypes.js';
import { MEMORY_QUOTA, RESTRICTED_VISIBILITY, type Plan } from '../plans.js';
import type { RequestContext } from '../context.js';
import { ConflictError, DomainError, NotFoundError, PlanRequiredError } from '../errors.js';
import { isUuid } from '../ids.js';
import { countRows, exportPage, hasRows, setMemoryUsage } from '../store/archive.js';
import { findWorkspace, insertWorkspace, lockWorkspaceWithPlan, organizationPlan } from '../store/organizations.js';
import type { EventType } from '../webhooks/events.js';
import { recordAudit, type AuditInput } from '../services/audit.js';
import { inTransaction } from '../store/unitOfWork.js';

const PAGE = 500;
/** Uploads are read a few at a time: a page of them holds up to ~13 MiB of base64 each. */
const UPLOAD_PAGE = 2;

const pageSize = (spec: RecordType) => (spec.type === 'upload' ? UPLOAD_PAGE : PAGE);

/** Writes a workspace's archive to `file` (and its `workspace.exported` event); resolves with its header. */
export async function exportWorkspace(ctx: RequestContext, workspaceId: string, file: string): Promise<ArchiveHeader> {
  if (!isUuid(workspaceId)) throw new NotFoundError('Workspace');
  return inTransaction(
    ctx.em,
    async (tx) => {
      const ws = await findWorkspace(tx, workspaceId);
      if (!ws) throw new NotFoundError('Workspace');
      const counts: Counts = {};
      for (const spec of RECORD_TYPES) {
        const n = await countRows(tx, spec.table, workspaceId);
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
      // Written as the transaction commits: an export that failed is not in the audit trail.
      recordAudit(tx, ctx, workspaceEvent('workspace.exported', { workspaceId, organizationId: ws.organization_id }));
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
    const rows = await exportPage(tx, spec, workspaceId, after, pageSize(spec));
    for (const row of rows) {
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
    if (rows.length < pageSize(spec)) return;
    const last = rows[rows.length - 1];
    after = spec.order.map((_, i) => last[`__k${i}`]);
  }
}

/** Where an import goes: an existing, empty workspace, or a new one in an organization. */
export type ImportTarget = { workspaceId: string } | { organizationId?: string; name?: string };

/** The workspace an import writes into, with its organization's plan. */
interface Target {
  workspaceId: string;
  organizationId: string;
  plan: Plan;
}

/**
 * Imports an archive: checks all of it first (format, bounds, every record against the input
 * contract, uploads from their bytes), then writes every record in one transaction, refusing what
 * the target organization's plan or note quota does not allow; resolves with the workspace and the
 * counts. Nothing is written unless everything passed.
 */
export async function importWorkspace(
  ctx: RequestContext,
  file: string,
  target: ImportTarget,
): Promise<{ workspaceId: string; counts: Counts }> {
  const bounds = archiveBounds();
  const check = new ArchiveCheck(`${file}.uploads`);
  try {
    const header = await verifyArchive(file, bounds, (record, at) => check.record(record, at)).finally(() => check.close());
    return await inTransaction(ctx.em, async (tx) => {
      const into = await targetWorkspace(tx, ctx, header, target);
      requireAllowed(into.plan, header.counts, check);
      const writer = new RecordInserter(tx, { ...into, replaceRevisions: (header.counts.article_revision ?? 0) > 0 }, check);
      for await (const record of archiveRecords(file, bounds, (at) => check.uploadLines.has(at))) await writer.add(record);
      await writer.insertUploads();
      await setMemoryUsage(tx, into.workspaceId, header.counts.memory_note ?? 0);
      recordAudit(tx, ctx, workspaceEvent('workspace.imported', into));
      return { workspaceId: into.workspaceId, counts: header.counts };
    });
  } finally {
    await rm(check.uploadsFile, { force: true });
  }
}

/** An event about a whole workspace (its organization named: the admin acts without a key). */
const workspaceEvent = (action: EventType, t: { workspaceId: string; organizationId: string }): AuditInput => ({
  action,
  targetType: 'workspace',
  targetId: t.workspaceId,
  workspaceId: t.workspaceId,
  organizationId: t.organizationId,
});

/** The plan's rules the API enforces on each write: restricted content needs a paid plan, notes stay within the quota. */
function requireAllowed(plan: Plan, counts: Counts, check: ArchiveCheck): void {
  if (check.restricted && !RESTRICTED_VISIBILITY.plans.includes(plan))
    throw new PlanRequiredError(RESTRICTED_VISIBILITY.what, RESTRICTED_VISIBILITY.plans, plan);
  const quota = MEMORY_QUOTA[plan];
  const notes = counts.memory_note ?? 0;
  if (quota !== null && notes > quota)
    throw new DomainError(
      'memory_quota_exceeded',
      `The archive holds ${notes} memory notes; the ${plan} plan holds at most ${quota} per workspace.`,
      { limit: quota, usage: notes, plan },
    );
}

async function targetWorkspace(tx: EntityManager, ctx: RequestContext, header: ArchiveHeader, target: ImportTarget): Promise<Target> {
  if ('workspaceId' in target) {
    const id = target.workspaceId;
    const ws = isUuid(id) ? await lockWorkspaceWithPlan(tx, id) : undefined;
    if (!ws) throw new NotFoundError('Workspace');
    for (const spec of RECORD_TYPES) {
      if (await hasRows(tx, spec.table, id))
        throw new ConflictError('The workspace is not empty: import into a new or empty workspace.', { found: spec.type });
    }
    return { workspaceId: id, organizationId: ws.organization_id, plan: ws.plan };
  }
  const organizationId = target.organizationId ?? header.workspace.organizationId;
  const plan = isUuid(organizationId) ? await organizationPlan(tx, organizationId) : undefined;
  if (!plan)
    throw new DomainError(
      'not_found',
      target.organizationId
        ? 'Organization was not found.'
        : `The archive's organization (${header.workspace.organizationId}) is not on this service: name one with organization= (wks import --org ` +
            `<id>), or import into an empty workspace.`,
      { organizationId },
    );
  const id = randomUUID();
  await insertWorkspace(tx, id, organizationId, target.name ?? header.workspace.name);
  recordAudit(tx, ctx, { action: 'workspace.created', targetType: 'workspace', targetId: id, organizationId, workspaceId: id });
  return { workspaceId: id, organizationId, plan };
}
