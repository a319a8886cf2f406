import type { EntityManager } from '@mikro-orm/postgresql';
import type { Scope } from '../auth/authorize.js';
import { articleVisible, seesRestricted } from '../auth/visibility.js';
import type { RequestContext } from '../context.js';
import { pgArray, sql } from '../db/sql.js';
import { ConflictError, InvalidRequestError, invalidField, NotFoundError } from '../errors.js';
import { UnsafeTargetError, safeFetch } from '../net/safeFetch.js';
import { parseSpecDocument, type ParsedSpec, type SpecOperation } from '../openapi/spec.js';
import { ENQUEUE_EMBEDDING, signalEmbeddingWork } from '../search/vectors.js';
import type { ApiPage, ApiSpecStatus, SyncPlan } from '../types/apiReference.js';
import { nextFreeSlug, slugify } from '../slug.js';
import { describeArticleChange, moveArticle } from './articles.js';
import { recordAudit } from './audit.js';
import { addSection, insertSection, lockSectionList } from './sections.js';
import { removeEmbeddings } from '../search/vectors.js';

export const SPEC_MAX_BYTES = 5 * 1024 * 1024;
/**
 * Pages are written a few at a time: on the embedded database every statement runs on the main
 * thread, and a statement of 5 pages or ~25 KB of Markdown (each page write also records its
 * revision) stays well under the 50 ms the event loop may stall even on a loaded machine (10 pages
 * and 50 KB reached 53 ms under a full parallel suite on two busy cores; 20 pages 61 ms; 200 pages
 * up to 300 ms before revisions were recorded). More statements cost little: they share one transaction.
 */
const BATCH = { rows: 5, bytes: 25_000 };

/** `items` cut into batches of at most BATCH.rows items and about BATCH.bytes of `size`. */
function batches<T>(items: T[], size: (item: T) => number): T[][] {
  const out: T[][] = [];
  let current: T[] = [];
  let bytes = 0;
  for (const item of items) {
    if (current.length && (current.length >= BATCH.rows || bytes + size(item) > BATCH.bytes)) {
      out.push(current);
      current = [];
      bytes = 0;
    }
    current.push(item);
    bytes += size(item);
  }
  if (current.length) out.push(current);
  return out;
}

/** How the service reaches spec URLs (OUTBOUND_ALLOW_LOOPBACK). */
export interface OutboundPolicy {
  allowLoopback: boolean;
}

/** A generated (or detached) page as the database gives it. */
interface ApiPageRow {
  slug: string;
  title: string;
  section: string;
  position: number;
  api_operation_key: string;
  api_method: string | null;
  api_path: string | null;
  api_state: string;
}

/** The attached spec's row, without its text. */
interface SpecRow {
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
  await ctx.em.transactional(async (em) => {
    await sql(
      em,
      `insert into api_specs (workspace_id, source, url, raw, title, version, openapi_version, operation_count, warnings, created_at)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb, ?)
       on conflict (workspace_id) do update set source = excluded.source, url = excluded.url, raw = excluded.raw, title = excluded.title,
         version = excluded.version, openapi_version = excluded.openapi_version, operation_count = excluded.operation_count, warnings = excluded.warnings`,
      [
        scope.workspaceId,
        hasUrl ? 'url' : 'raw',
        hasUrl ? input.url : null,
        raw,
        parsed.title,
        parsed.version,
        parsed.openapiVersion,
        parsed.operations.length,
        JSON.stringify(parsed.warnings),
        new Date(),
      ],
    );
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
  const [spec] = await sql<{ source: string; url: string | null; raw: string }>(
    ctx.em,
    'select source, url, raw from api_specs where workspace_id = ?',
    [scope.workspaceId],
  );
  if (!spec) throw new NotFoundError('Attached OpenAPI spec');
  let parsed: ParsedSpec;
  let raw = spec.raw;
  try {
    if (spec.source === 'url' && spec.url) raw = await fetchSpec(spec.url, outbound);
    parsed = await parseSpecDocument(raw);
  } catch (error) {
    await sql(ctx.em, `update api_specs set last_sync_at = ?, last_sync_result = 'failed', last_sync_error = ? where workspace_id = ?`, [
      new Date(),
      (error as Error).message,
      scope.workspaceId,
    ]);
    throw error;
  }
  const plan = await ctx.em.transactional(async (em) => {
    await sql(
      em,
      'update api_specs set raw = ?, title = ?, version = ?, openapi_version = ?, operation_count = ?, warnings = ?::jsonb where workspace_id = ?',
      [
        raw,
        parsed.title,
        parsed.version,
        parsed.openapiVersion,
        parsed.operations.length,
        JSON.stringify(parsed.warnings),
        scope.workspaceId,
      ],
    );
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
  return ctx.em.transactional(async (em) => {
    const [spec] = await sql<{ id: number }>(em, 'select id from api_specs where workspace_id = ? for update', [scope.workspaceId]);
    if (!spec) throw new NotFoundError('Attached OpenAPI spec');
    const removed = await deletePages(em, scope, `api_state = 'generated'`, []);
    await sql(em, 'delete from api_specs where workspace_id = ?', [scope.workspaceId]);
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
  const rows = await sql<ApiPageRow>(
    ctx.em,
    `select a.slug, a.title, s.key as section, a.position, a.api_operation_key, a.api_method, a.api_path, a.api_state
       from articles a join sections s on s.id = a.section_id
      where a.workspace_id = ? and a.api_state is not null and ${articleVisible('a', 's')} order by s.position, s.id, a.position, a.id`,
    [scope.workspaceId, seesRestricted(scope)],
  );
  return rows.map(toApiPage);
}

/** Detaches one generated page: sync never rewrites it again, but reports drift. */
export async function detachPage(ctx: RequestContext, scope: Scope, slug: string): Promise<ApiPage> {
  return ctx.em.transactional(async (em) => {
    const [row] = await sql<{ id: number; api_state: string }>(
      em,
      `select id, api_state from articles where workspace_id = ? and slug = ? and api_state is not null for update`,
      [scope.workspaceId, slug],
    );
    if (!row) throw new NotFoundError('Generated page');
    if (row.api_state === 'detached') throw new ConflictError(`"${slug}" is already detached.`, { state: 'detached' });
    await describeArticleChange(em, scope, { action: 'detached' });
    await sql(em, `update articles set api_state = 'detached', version = version + 1, updated_at = ? where id = ?`, [new Date(), row.id]);
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
  const [row] = await sql<{ key: string }>(
    ctx.em,
    `select s.key from articles a join sections s on s.id = a.section_id where a.workspace_id = ? and a.slug = ? and a.api_state is not null`,
    [scope.workspaceId, slug],
  );
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
  const [taken] = await sql<{ key: string }>(ctx.em, 'select key from sections where workspace_id = ? and api_tag = ?', [
    scope.workspaceId,
    tag,
  ]);
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

/** Computes and applies the difference between the stored pages and the spec's operations, in bulk. */
async function applySync(em: EntityManager, ctx: RequestContext, scope: Scope, parsed: ParsedSpec): Promise<SyncPlan> {
  await describeArticleChange(em, scope, { action: 'synced' });
  const now = new Date();
  const existing = await sql<{ id: number; slug: string; key: string; hash: string; state: string }>(
    em,
    `select id, slug, api_operation_key as key, api_operation_hash as hash, api_state as state from articles
      where workspace_id = ? and api_operation_key is not null for update`,
    [scope.workspaceId],
  );
  const byKey = new Map(existing.map((e) => [e.key, e]));
  const plan: SyncPlan = { added: [], changed: [], removed: [], unchanged: 0, drifted: [] };
  const added: SpecOperation[] = [];
  const changed: { id: number; op: SpecOperation }[] = [];
  const live = new Set<string>();
  for (const op of parsed.operations) {
    live.add(op.key);
    const page = byKey.get(op.key);
    if (!page) {
      added.push(op);
      plan.added.push(op.key);
    } else if (page.state === 'detached') {
      if (page.hash !== op.hash) plan.drifted.push({ slug: page.slug, operationKey: op.key, reason: 'changed' });
    } else if (page.hash !== op.hash) {
      changed.push({ id: page.id, op });
      plan.changed.push(op.key);
    } else plan.unchanged++;
  }
  const removedIds: number[] = [];
  for (const page of existing) {
    if (live.has(page.key)) continue;
    if (page.state === 'detached') plan.drifted.push({ slug: page.slug, operationKey: page.key, reason: 'removed' });
    else {
      removedIds.push(page.id);
      plan.removed.push(page.key);
    }
  }
  if (removedIds.length) await deletePages(em, scope, 'id = any(?::int[])', [pgArray(removedIds)]);
  for (const part of batches(changed, (c) => c.op.markdown.length)) {
    await sql(
      em,
      `update articles a set title = v.title, markdown = v.markdown, api_operation_hash = v.hash, api_method = v.method, api_path = v.path, version = a.version + 1, updated_at = ?
         from (values ${part.map(() => '(?::int, ?, ?, ?, ?, ?)').join(', ')}) as v(id, title, markdown, hash, method, path) where a.id = v.id`,
      [now, ...part.flatMap(({ id, op }) => [id, op.title, op.markdown, op.hash, op.method, op.path])],
    );
  }
  if (added.length) await insertPages(em, ctx, scope, added, now);
  const touched = [...changed.map((c) => c.op.key), ...added.map((a) => a.key)];
  if (touched.length) {
    await sql(
      em,
      ENQUEUE_EMBEDDING('article', 'select id, workspace_id from articles where workspace_id = ? and api_operation_key = any(?::text[])'),
      [scope.workspaceId, pgArray(touched)],
    );
  }
  await sql(
    em,
    `update api_specs set last_sync = ?::jsonb, last_sync_at = ?, last_sync_result = 'ok', last_sync_error = null where workspace_id = ?`,
    [JSON.stringify(plan), now, scope.workspaceId],
  );
  return plan;
}

/** Inserts new pages into the sections collecting their tags (created as needed, last), after the pages already there. */
async function insertPages(em: EntityManager, ctx: RequestContext, scope: Scope, ops: SpecOperation[], now: Date) {
  await lockSectionList(em, scope.workspaceId);
  const sections = await sql<{ id: number; key: string; api_tag: string | null }>(
    em,
    'select id, key, api_tag from sections where workspace_id = ? order by position',
    [scope.workspaceId],
  );
  const byTag = new Map(sections.filter((s) => s.api_tag).map((s) => [s.api_tag!, s.id]));
  const keys = sections.map((s) => s.key);
  for (const tag of new Set(ops.map((o) => o.tag))) {
    if (byTag.has(tag)) continue;
    const key = nextFreeSlug(slugify(tag, 'api'), keys);
    keys.push(key);
    byTag.set(tag, (await addSection(em, ctx, scope, { label: tag, key }, tag)).id);
  }
  const counts = new Map(
    (
      await sql<{ section_id: number; n: number }>(
        em,
        'select section_id, count(*)::int as n from articles where workspace_id = ? group by section_id',
        [scope.workspaceId],
      )
    ).map((r) => [r.section_id, r.n]),
  );
  const slugs = new Set(
    (await sql<{ slug: string }>(em, 'select slug from articles where workspace_id = ?', [scope.workspaceId])).map((r) => r.slug),
  );
  const rows = ops.map((op) => {
    const sectionId = byTag.get(op.tag)!;
    const position = counts.get(sectionId) ?? 0;
    counts.set(sectionId, position + 1);
    const slug = nextFreeSlug(slugify(op.key.replace(/([a-z0-9])([A-Z])/g, '$1 $2'), 'operation'), slugs);
    slugs.add(slug);
    return [scope.workspaceId, sectionId, slug, op.title, op.markdown, position, now, now, now, op.key, op.hash, op.method, op.path];
  });
  for (const part of batches(rows, (row) => (row[4] as string).length)) {
    await sql(
      em,
      `insert into articles (workspace_id, section_id, slug, title, markdown, status, visibility, position, version, created_at, updated_at, published_at, api_operation_key, api_operation_hash, api_state, api_method, api_path)
       values ${part.map(() => `(?, ?, ?, ?, ?, 'STABLE', 'public', ?, 1, ?, ?, ?, ?, ?, 'generated', ?, ?)`).join(', ')}`,
      part.flat(),
    );
  }
}

/** Deletes pages (and their embeddings), closing the position gaps they leave. */
async function deletePages(em: EntityManager, scope: Scope, where: string, params: unknown[]): Promise<number> {
  const gone = await sql<{ id: number; section_id: number }>(
    em,
    `delete from articles where workspace_id = ? and ${where} returning id, section_id`,
    [scope.workspaceId, ...params],
  );
  if (!gone.length) return 0;
  await removeEmbeddings(
    em,
    'article',
    gone.map((g) => g.id),
  );
  const sectionIds = pgArray([...new Set(gone.map((g) => g.section_id))]);
  await sql(
    em,
    `update articles a set position = r.pos from (select id, row_number() over (partition by section_id order by position, id) - 1 as pos
      from articles where section_id = any(?::int[])) r
      where a.id = r.id and a.position <> r.pos`,
    [sectionIds],
  );
  return gone.length;
}

async function loadStatus(em: EntityManager, scope: Scope): Promise<ApiSpecStatus> {
  const [row] = await sql<SpecRow>(
    em,
    'select source, url, title, version, openapi_version, operation_count, last_sync, last_sync_at, last_sync_result, last_sync_error, warnings from api_specs where workspace_id = ?',
    [scope.workspaceId],
  );
  if (!row) throw new NotFoundError('Attached OpenAPI spec');
  // Pages this key may not see do not exist for it: not in the count, not in the last sync's plan.
  const pages = await sql<{ key: string; slug: string; visible: boolean }>(
    em,
    `select a.api_operation_key as key, a.slug, ${articleVisible('a', 's')} as visible from articles a join sections s on s.id = a.section_id
      where a.workspace_id = ? and a.api_state is not null`,
    [seesRestricted(scope), scope.workspaceId],
  );
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
  const [row] = await sql<ApiPageRow>(
    em,
    `select a.slug, a.title, s.key as section, a.position, a.api_operation_key, a.api_method, a.api_path, a.api_state from articles a
      join sections s on s.id = a.section_id where a.workspace_id = ? and a.slug = ?`,
    [scope.workspaceId, slug],
  );
  return toApiPage(row);
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
