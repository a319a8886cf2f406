/** Applies an OpenAPI spec to a workspace's generated pages: the sync plan, and the pages it adds, rewrites and removes. */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Scope } from '../auth/authorize.js';
import type { RequestContext } from '../context.js';
import type { ParsedSpec, SpecOperation } from '../openapi/spec.js';
import { removeEmbeddings } from '../search/vectors.js';
import type { SyncPlan } from '../types/apiReference.js';
import { nextFreeSlug, slugify } from '../slug.js';
import { describeArticleChange } from './articles.js';
import { addSection } from './sections.js';
import {
  deletePagesById,
  enqueuePageEmbeddings,
  insertPageRows,
  lockOperationPages,
  rewritePages,
  type NewPage,
} from '../store/apiPages.js';
import { recordSyncResult } from '../store/apiSpecs.js';
import { articleCountsBySection, closePositionGaps, workspaceSlugs } from '../store/articles.js';
import { lockSectionList, sectionsWithTags } from '../store/sections.js';

/** Computes and applies the difference between the stored pages and the spec's operations, in bulk. */
export async function applySync(em: EntityManager, ctx: RequestContext, scope: Scope, parsed: ParsedSpec): Promise<SyncPlan> {
  await describeArticleChange(em, scope, { action: 'synced' });
  const now = new Date();
  const existing = await lockOperationPages(em, scope.workspaceId);
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
  if (removedIds.length) await afterPagesDeleted(em, await deletePagesById(em, scope.workspaceId, removedIds));
  await rewritePages(em, changed, now);
  if (added.length) await insertPages(em, ctx, scope, added, now);
  const touched = [...changed.map((c) => c.op.key), ...added.map((a) => a.key)];
  if (touched.length) await enqueuePageEmbeddings(em, scope.workspaceId, touched);
  await recordSyncResult(em, scope.workspaceId, plan, now);
  return plan;
}

/** Inserts new pages into the sections collecting their tags (created as needed, last), after the pages already there. */
async function insertPages(em: EntityManager, ctx: RequestContext, scope: Scope, ops: SpecOperation[], now: Date) {
  await lockSectionList(em, scope.workspaceId);
  const sections = await sectionsWithTags(em, scope.workspaceId);
  const byTag = new Map(sections.filter((s) => s.api_tag).map((s) => [s.api_tag!, s.id]));
  const keys = sections.map((s) => s.key);
  for (const tag of new Set(ops.map((o) => o.tag))) {
    if (byTag.has(tag)) continue;
    const key = nextFreeSlug(slugify(tag, 'api'), keys);
    keys.push(key);
    byTag.set(tag, (await addSection(em, ctx, scope, { label: tag, key }, tag)).id);
  }
  const counts = await articleCountsBySection(em, scope.workspaceId);
  const slugs = new Set(await workspaceSlugs(em, scope.workspaceId));
  const pages = ops.map((op): NewPage => {
    const sectionId = byTag.get(op.tag)!;
    const position = counts.get(sectionId) ?? 0;
    counts.set(sectionId, position + 1);
    const slug = nextFreeSlug(slugify(op.key.replace(/([a-z0-9])([A-Z])/g, '$1 $2'), 'operation'), slugs);
    slugs.add(slug);
    return { sectionId, slug, position, op };
  });
  await insertPageRows(em, scope.workspaceId, pages, now);
}

/** After pages were deleted: removes their embeddings and closes the position gaps they leave; how many were deleted. */
export async function afterPagesDeleted(em: EntityManager, gone: { id: number; section_id: number }[]): Promise<number> {
  if (!gone.length) return 0;
  await removeEmbeddings(
    em,
    'article',
    gone.map((g) => g.id),
  );
  await closePositionGaps(em, [...new Set(gone.map((g) => g.section_id))]);
  return gone.length;
}
