import type { EntityManager } from '@mikro-orm/postgresql';
import type { Scope } from '../auth/authorize.js';
import { seesRestricted } from '../auth/visibility.js';
import type { RequestContext } from '../context.js';
import { ConflictError, InvalidRequestError, invalidField, NotFoundError } from '../errors.js';
import { UnsafeTargetError, safeFetch } from '../net/safeFetch.js';
import { parseSpecDocument, type ParsedSpec } from '../openapi/spec.js';
import { signalEmbeddingWork } from '../search/vectors.js';
import type { ApiPage, ApiSpecStatus, SyncPlan } from '../types/apiReference.js';
import { describeArticleChange, moveArticle } from './articles.js';
import { recordAudit } from './audit.js';
import { afterPagesDeleted, applySync } from './apiSync.js';
import { insertSection } from './sections.js';
import {
  deleteGeneratedPages,
  lockPage,
  markPageDetached,
  pageRowBySlug,
  pageSectionKey,
  pageVisibility,
  visiblePageRows,
  type ApiPageRow,
} from '../store/apiPages.js';
import { deleteSpec, lockSpec, recordSyncFailure, specSource, specStatusRow, updateSpecText, upsertSpec } from '../store/apiSpecs.js';
import { sectionOfTag } from '../store/sections.js';
import { inTransaction } from '../store/unitOfWork.js';

export const SPEC_MAX_BYTES = 5 * 1024 * 1024;

/** How the service reaches spec URLs (OUTBOUND_ALLOW_LOOPBACK). */
export interface OutboundPolicy {
  allowLoopback: boolean;
}

/**
 * Attaches (or replaces) the workspace's spec, given raw (JSON/YAML text or an object) or by URL,
 * and generates its pages. An invalid spec is a 400 with the parser's findings and changes nothing.
 */
export async function attachSpec(
  ctx: RequestContext,
  scope: Scope,
  input: { url?: string | null; spec?: unknown },
  outbound: OutboundPolicy,
): Promise<ApiSpecStatus> {
  const hasUrl = input.url != null && input.url !== '';
  const hasSpec = input.spec != null && input.spec !== '';
  if (hasUrl === hasSpec) {
    throw new InvalidRequestError('Send exactly one of "url" (fetched) or "spec" (JSON or YAML text, or an object).', [
      { field: hasUrl ? 'spec' : 'url', message: 'send exactly one of url and spec' },
    ]);
  }
  if (hasSpec && typeof input.spec !== 'string' && (typeof input.spec !== 'object' || Array.isArray(input.spec)))
    throw invalidField('spec', 'must be JSON or YAML text, or an object');
  const raw = hasUrl ? await fetchSpec(input.url!, outbound) : typeof input.spec === 'string' ? input.spec : JSON.stringify(input.spec);
  const parsed = await parseSpecDocument(raw);
  await inTransaction(ctx.em, async (em) => {
    await upsertSpec(em, {
      workspaceId: scope.workspaceId,
      source: hasUrl ? 'url' : 'raw',
      url: hasUrl ? input.url! : null,
      raw,
      parsed,
      createdAt: new Date(),
    });
    await applySync(em, ctx, scope, parsed);
    recordAudit(em, ctx, {
      action: 'openapi.attached',
      targetType: 'api_spec',
      targetId: scope.workspaceId,
      workspaceId: scope.workspaceId,
    });
  });
  signalEmbeddingWork();
  return loadStatus(ctx.em, scope);
}

/** Re-reads the attached spec (re-fetching a URL) and applies the difference; answers the plan. */
export async function syncSpec(ctx: RequestContext, scope: Scope, outbound: OutboundPolicy): Promise<SyncPlan> {
  const spec = await specSource(ctx.em, scope.workspaceId);
  if (!spec) throw new NotFoundError('Attached OpenAPI spec');
  let parsed: ParsedSpec;
  let raw = spec.raw;
  try {
    if (spec.source === 'url' && spec.url) raw = await fetchSpec(spec.url, outbound);
    parsed = await parseSpecDocument(raw);
  } catch (error) {
    await recordSyncFailure(ctx.em, scope.workspaceId, new Date(), (error as Error).message);
    throw error;
  }
  const plan = await inTransaction(ctx.em, async (em) => {
    await updateSpecText(em, scope.workspaceId, raw, parsed);
    const result = await applySync(em, ctx, scope, parsed);
    recordAudit(em, ctx, { action: 'openapi.synced', targetType: 'api_spec', targetId: scope.workspaceId, workspaceId: scope.workspaceId });
    return result;
  });
  signalEmbeddingWork();
  return plan;
}

/** The attached spec's status, or 404 when none is attached. */
export async function specStatus(ctx: RequestContext, scope: Scope): Promise<ApiSpecStatus> {
  return loadStatus(ctx.em, scope);
}

/** Removes the spec and every still-generated page; detached pages stay as ordinary articles. */
export async function detachSpec(ctx: RequestContext, scope: Scope): Promise<{ detached: true; removedPages: number }> {
  return inTransaction(ctx.em, async (em) => {
    if (!(await lockSpec(em, scope.workspaceId))) throw new NotFoundError('Attached OpenAPI spec');
    const removed = await afterPagesDeleted(em, await deleteGeneratedPages(em, scope.workspaceId));
    await deleteSpec(em, scope.workspaceId);
    recordAudit(em, ctx, {
      action: 'openapi.detached',
      targetType: 'api_spec',
      targetId: scope.workspaceId,
      workspaceId: scope.workspaceId,
    });
    return { detached: true as const, removedPages: removed };
  });
}

/** Generated and detached pages with their sections, in sidebar order (restricted ones only for keys that may see them). */
export async function listPages(ctx: RequestContext, scope: Scope): Promise<ApiPage[]> {
  const rows = await visiblePageRows(ctx.em, scope.workspaceId, seesRestricted(scope));
  return rows.map(toApiPage);
}

/** Detaches one generated page: sync never rewrites it again, but reports drift. */
export async function detachPage(ctx: RequestContext, scope: Scope, slug: string): Promise<ApiPage> {
  return inTransaction(ctx.em, async (em) => {
    const row = await lockPage(em, scope.workspaceId, slug);
    if (!row) throw new NotFoundError('Generated page');
    if (row.api_state === 'detached') throw new ConflictError(`"${slug}" is already detached.`, { state: 'detached' });
    await describeArticleChange(em, scope, { action: 'detached' });
    await markPageDetached(em, row.id, new Date());
    recordAudit(em, ctx, { action: 'openapi.page_detached', targetType: 'article', targetId: slug, workspaceId: scope.workspaceId });
    return pageBySlug(em, scope, slug);
  });
}

/** Moves a generated (or detached) page within a section (default: its current one). */
export async function placePage(
  ctx: RequestContext,
  scope: Scope,
  slug: string,
  input: { section?: string | null; position?: number | null },
): Promise<ApiPage> {
  const row = await pageSectionKey(ctx.em, scope.workspaceId, slug);
  if (!row) throw new NotFoundError('Generated page');
  await moveArticle(ctx, scope, slug, { section: input.section ?? row.key, position: input.position });
  return pageBySlug(ctx.em, scope, slug);
}

/** A section that collects the generated pages of one OpenAPI tag (default: the label). */
export async function createApiSection(
  ctx: RequestContext,
  scope: Scope,
  input: { label: string; key?: string | null; tag?: string | null; position?: number | null },
) {
  const tag = (input.tag ?? input.label).trim();
  if (!tag) throw invalidField('tag', 'must not be empty');
  const taken = await sectionOfTag(ctx.em, scope.workspaceId, tag);
  if (taken) throw new ConflictError(`Section "${taken.key}" already collects the tag "${tag}".`, { field: 'tag', section: taken.key });
  return insertSection(ctx, scope, { label: input.label, key: input.key, position: input.position }, tag);
}

async function fetchSpec(url: string, outbound: OutboundPolicy): Promise<string> {
  try {
    const res = await safeFetch(url, {
      allowLoopback: outbound.allowLoopback,
      timeoutMs: 10_000,
      maxBytes: SPEC_MAX_BYTES,
      headers: { accept: 'application/json, application/yaml, text/yaml, */*' },
    });
    if (res.status !== 200) throw new UnsafeTargetError(`the URL answered HTTP ${res.status}`);
    return res.body.toString('utf8');
  } catch (error) {
    if (error instanceof UnsafeTargetError) throw invalidField('url', `could not fetch the spec: ${error.message}`);
    throw error;
  }
}

async function loadStatus(em: EntityManager, scope: Scope): Promise<ApiSpecStatus> {
  const row = await specStatusRow(em, scope.workspaceId);
  if (!row) throw new NotFoundError('Attached OpenAPI spec');
  // Pages this key may not see do not exist for it: not in the count, not in the last sync's plan.
  const pages = await pageVisibility(em, scope.workspaceId, seesRestricted(scope));
  const hidden = pages.filter((p) => !p.visible);
  return {
    source: row.source,
    url: row.url,
    title: row.title,
    version: row.version,
    openapiVersion: row.openapi_version,
    operationCount: row.operation_count,
    pageCount: pages.length - hidden.length,
    lastSyncAt: row.last_sync_at ? new Date(row.last_sync_at) : null,
    lastSyncResult: row.last_sync_result,
    lastSyncError: row.last_sync_error,
    lastSync: row.last_sync && hidden.length ? withoutPages(row.last_sync, hidden) : row.last_sync,
    warnings: row.warnings ?? [],
  };
}

/** A sync plan without the operations and pages in `hidden`. */
function withoutPages(plan: SyncPlan, hidden: { key: string; slug: string }[]): SyncPlan {
  const keys = new Set(hidden.map((h) => h.key));
  const slugs = new Set(hidden.map((h) => h.slug));
  const keep = (list: string[]) => list.filter((k) => !keys.has(k));
  return {
    ...plan,
    added: keep(plan.added),
    changed: keep(plan.changed),
    removed: keep(plan.removed),
    drifted: plan.drifted.filter((d) => !slugs.has(d.slug)),
  };
}

async function pageBySlug(em: EntityManager, scope: Scope, slug: string): Promise<ApiPage> {
  return toApiPage(await pageRowBySlug(em, scope.workspaceId, slug));
}

function toApiPage(r: ApiPageRow): ApiPage {
  return {
    slug: r.slug,
    title: r.title,
    section: r.section,
    position: r.position,
    operationKey: r.api_operation_key,
    method: r.api_method,
    path: r.api_path,
    state: r.api_state,
  };
}
