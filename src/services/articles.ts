import type { EntityManager } from '@mikro-orm/postgresql';
import { requirePlan, type Scope } from '../auth/authorize.js';
import type { Guard, StatusChange } from '../auth/policies.js';
import { seesRestricted } from '../auth/visibility.js';
import { RESTRICTED_VISIBILITY } from '../plans.js';
import type { RequestContext } from '../context.js';
import { Article, type ArticleStatus } from '../entities/Article.js';
import type { Visibility } from '../entities/Section.js';
import { ConflictError, InvalidRequestError, invalidField, NotFoundError, NotModifiedError, PreconditionFailedError } from '../errors.js';
import { etagMatches, versionEtag } from '../etag.js';
import { nextFreeSlug, slugify } from '../slug.js';
import { enqueueEmbedding, signalEmbeddingWork } from '../search/vectors.js';
import type { EventType } from '../webhooks/events.js';
import { eventObject, objectPayload } from '../webhooks/objects.js';
import {
  articleById,
  articleBySlug,
  articlesOfSections,
  bumpVersion,
  contentRevision,
  countSectionArticles,
  insertDraft,
  placeArticles,
  slugsLike,
  treeArticles,
  writeArticle,
  type ArticleRow,
} from '../store/articles.js';
import { setArticleChange } from '../store/articleRevisions.js';
import { lockSection, lockSectionPair } from '../store/sections.js';
import { recordAudit, type AuditInput } from './audit.js';
import { findVisibleSection, loadSections } from './sections.js';
import { entityOf, inTransaction } from '../store/unitOfWork.js';

/**
 * Allowed status transitions. DRAFT is where articles start; STABLE is published;
 * DEPRECATED is still published but discouraged; ARCHIVED is withdrawn and can only go back to DRAFT.
 */
const TRANSITIONS: Record<ArticleStatus, ArticleStatus[]> = {
  DRAFT: ['STABLE', 'ARCHIVED'],
  STABLE: ['DRAFT', 'DEPRECATED', 'ARCHIVED'],
  DEPRECATED: ['STABLE', 'ARCHIVED'],
  ARCHIVED: ['DRAFT'],
};

/** A sidebar section with its visible articles, in order: plain objects, shared by every request for one revision. */
export interface TreeSection {
  key: string;
  label: string;
  visibility: Visibility;
  articleCount: number;
  articles: Article[];
}

/**
 * Built trees by workspace and ETag (content revision, visibility, status filter), the most
 * recently used kept. A revision's tree never changes, so a process serves what it built for one
 * without asking whether another process changed anything: a change raises the revision.
 */
const TREE_CACHE_ENTRIES = 32;
const trees = new Map<string, readonly TreeSection[]>();

/**
 * The sidebar tree: visible sections in order, each with its visible articles in order. Its ETag
 * (set as a response header) names the workspace's content revision, what the caller may see and
 * the status filter; with a matching `ifNoneMatch` it answers 304 without building the tree.
 */
export async function articleTree(
  ctx: RequestContext,
  scope: Scope,
  status?: ArticleStatus | null,
  ifNoneMatch?: string | null,
): Promise<readonly TreeSection[]> {
  const revision = await contentRevision(ctx.db, scope.workspaceId);
  const etag = `"t${revision}.${seesRestricted(scope) ? 'all' : 'public'}${status ? `.${status.toLowerCase()}` : ''}"`;
  ctx.responseHeaders.ETag = etag;
  if (ifNoneMatch && etagMatches(ifNoneMatch, etag)) throw new NotModifiedError(etag);
  const key = `${scope.workspaceId} ${etag}`;
  const cached = trees.get(key);
  if (cached) {
    trees.delete(key);
    trees.set(key, cached);
    return cached;
  }
  // Built after the revision was read, so it holds at least that revision's changes.
  const tree = await buildTree(ctx.em, scope, status);
  trees.set(key, tree);
  if (trees.size > TREE_CACHE_ENTRIES) trees.delete(trees.keys().next().value!);
  return tree;
}

/** Sections and their articles in sidebar order (two queries). */
async function buildTree(em: EntityManager, scope: Scope, status?: ArticleStatus | null): Promise<TreeSection[]> {
  const sections = await loadSections(em, scope);
  const rows = await treeArticles(em, scope.workspaceId, seesRestricted(scope), status);
  const bySection = new Map<number, Article[]>();
  for (const row of rows) {
    const list = bySection.get(row.section_id) ?? [];
    list.push(plainArticle(row));
    bySection.set(row.section_id, list);
  }
  return sections.map((section) => ({
    key: section.key,
    label: section.label,
    visibility: section.visibility,
    articleCount: section.articleCount,
    articles: bySection.get(section.id) ?? [],
  }));
}

/** One article by slug; restricted ones are 404 for keys that may not see them. */
export async function getArticle(ctx: RequestContext, scope: Scope, slug: string): Promise<Article> {
  return findArticle(ctx.em, scope, slug, false);
}

/** Loads a visible article (optionally locking its row), or 404. */
export async function findArticle(em: EntityManager, scope: Scope, slug: string, lock: boolean): Promise<Article> {
  const row = await articleBySlug(em, scope.workspaceId, slug, seesRestricted(scope), lock);
  if (!row) throw new NotFoundError('Article');
  return toArticle(em, row);
}

export interface CreateArticleInput {
  title: string;
  section: string;
  markdown: string;
  visibility?: Visibility | null;
}

/** Creates a DRAFT at the end of a section, with a slug generated from the title. */
export async function createArticle(ctx: RequestContext, scope: Scope, input: CreateArticleInput): Promise<Article> {
  return inTransaction(ctx.em, async (em) => {
    await describeArticleChange(em, scope, { action: 'created' });
    const article = await insertArticle(em, scope, input);
    recordAudit(em, ctx, articleEvent('article.created', scope, article));
    return article;
  });
}

/** The insert behind createArticle and approved new-draft proposals; call inside a transaction. */
export async function insertArticle(em: EntityManager, scope: Scope, input: CreateArticleInput): Promise<Article> {
  const visibility = input.visibility ?? 'public';
  if (visibility === 'restricted') requirePlan(scope, RESTRICTED_VISIBILITY);
  const section = await findVisibleSection(em, scope, input.section);
  if (!section) throw invalidField('section', `no section with key "${input.section}" (create it first: POST /sections)`);
  // Lock the section so concurrent creates and placements agree on positions.
  await lockSection(em, section.id);
  const count = await countSectionArticles(em, section.id);
  const base = slugify(input.title);
  const slug = nextFreeSlug(base, await slugsLike(em, scope.workspaceId, base));
  const id = await insertDraft(em, {
    workspaceId: scope.workspaceId,
    sectionId: section.id,
    slug,
    title: input.title,
    markdown: input.markdown,
    visibility,
    position: count,
    now: new Date(),
  });
  await enqueueEmbedding(em, scope.workspaceId, 'article', id);
  signalEmbeddingWork();
  return findArticleById(em, id);
}

export interface UpdateArticleInput {
  title?: string;
  markdown?: string;
  visibility?: Visibility;
  status?: ArticleStatus;
}

/**
 * Edits title, markdown, visibility and status. A status change needs `article.update` AND
 * `article.publish` and must follow TRANSITIONS; restricted visibility needs a paid plan;
 * `ifMatch` (the `If-Match` header) must name the current ETag when given.
 */
export async function updateArticle(
  ctx: RequestContext,
  scope: Scope,
  slug: string,
  input: UpdateArticleInput,
  guard: Guard<StatusChange>,
  ifMatch?: string | null,
): Promise<Article> {
  if (input.visibility === 'restricted') requirePlan(scope, RESTRICTED_VISIBILITY);
  return inTransaction(ctx.em, async (em) => {
    const article = await findArticle(em, scope, slug, true);
    refuseGenerated(article);
    checkIfMatch(ifMatch, article.version);
    const before = eventObject('Article', article);
    const statusChanges = input.status !== undefined && input.status !== article.status;
    guard({ statusChanges });
    if (statusChanges) {
      const from = article.status;
      const to = input.status!;
      if (!TRANSITIONS[from].includes(to)) {
        throw new InvalidRequestError(
          `status: cannot change from ${from} to ${to}; from ${from} an article can go to ${TRANSITIONS[from].join(' or ')}.`,
          [{ field: 'status', message: `transition ${from} → ${to} is not allowed (allowed: ${TRANSITIONS[from].join(', ')})` }],
        );
      }
    }
    await describeArticleChange(em, scope, { action: statusChanges ? 'status_changed' : 'updated' });
    const now = new Date();
    const next = {
      title: input.title ?? article.title,
      markdown: input.markdown ?? article.markdown,
      visibility: input.visibility ?? article.visibility,
      status: input.status ?? article.status,
      publishedAt: article.publishedAt ?? (input.status === 'STABLE' ? now : null),
    };
    await writeArticle(em, article.id, next, now);
    if (next.title !== article.title || next.markdown !== article.markdown) {
      await enqueueEmbedding(em, scope.workspaceId, 'article', article.id);
      signalEmbeddingWork();
    }
    const updated = await findArticleById(em, article.id);
    recordAudit(em, ctx, articleEvent('article.updated', scope, updated, before));
    if (statusChanges) recordAudit(em, ctx, articleEvent('article.status_changed', scope, updated, before));
    return updated;
  });
}

/**
 * Moves an article into a section at a 0-based position (default: the end), renumbering the
 * articles of both sections in the same transaction.
 */
export async function placeArticle(
  ctx: RequestContext,
  scope: Scope,
  slug: string,
  input: { section: string; position?: number | null },
): Promise<Article> {
  return moveArticle(ctx, scope, slug, input);
}

/** The move behind placeArticle and generated-page placement (the caller has authorized). */
export async function moveArticle(
  ctx: RequestContext,
  scope: Scope,
  slug: string,
  input: { section: string; position?: number | null },
): Promise<Article> {
  return inTransaction(ctx.em, async (em) => {
    const target = await findVisibleSection(em, scope, input.section);
    if (!target) throw invalidField('section', `no section with key "${input.section}"`);
    const article = await findArticle(em, scope, slug, false);
    const before = eventObject('Article', article);
    await describeArticleChange(em, scope, { action: 'moved' });
    const sourceId = article.section.id;
    // Lock both sections in id order (no deadlock between opposite moves).
    await lockSectionPair(em, sourceId, target.id);
    const siblings = await articlesOfSections(em, sourceId, target.id);
    const source = siblings.filter((r) => r.section_id === sourceId && r.id !== article.id).map((r) => r.id);
    const dest = target.id === sourceId ? source : siblings.filter((r) => r.section_id === target.id).map((r) => r.id);
    const position = input.position ?? dest.length;
    if (position < 0 || position > dest.length)
      throw invalidField('position', `must be from 0 to ${dest.length} in section "${target.key}"`);
    dest.splice(position, 0, article.id);
    const moves: [number, number, number][] = dest.map((id, i) => [id, target.id, i]);
    if (target.id !== sourceId) source.forEach((id, i) => moves.push([id, sourceId, i]));
    await placeArticles(em, moves);
    await bumpVersion(em, article.id, new Date());
    const moved = await findArticleById(em, article.id);
    recordAudit(em, ctx, articleEvent('article.moved', scope, moved, before));
    return moved;
  });
}

/**
 * The event of an article change: its `object` is the article as REST returns it after the
 * change; with `before` (its REST form before), `previous` holds the fields that changed. The
 * audit event thereby names the revision the change made (`object.version`).
 */
export function articleEvent(action: EventType, scope: Scope, article: Article, before?: Record<string, unknown>): AuditInput {
  return {
    action,
    targetType: 'article',
    targetId: article.slug,
    workspaceId: scope.workspaceId,
    payload: objectPayload('Article', article, before),
  };
}

/** Refuses (409) to change a page generated from the attached OpenAPI spec: every sync rewrites it. */
export function refuseGenerated(article: Article): void {
  if (article.apiState !== 'generated') return;
  throw new ConflictError(
    `"${article.slug}" is generated from the attached OpenAPI spec and is rewritten by every sync; detach it first (DELETE ` +
      `/workspaces/{workspace}/openapi/pages/${article.slug}) to edit it.`,
    { state: 'generated' },
  );
}

/** How an article write can come about, as its revision records it (see describeArticleChange). */
export const ARTICLE_CHANGE_ACTIONS = [
  'created',
  'updated',
  'status_changed',
  'moved',
  'proposal_approved',
  'restored',
  'synced',
  'detached',
] as const;

/** How an article write came about, as its revision records it (see describeArticleChange). */
export interface ArticleChange {
  action: (typeof ARTICLE_CHANGE_ACTIONS)[number];
  proposalId?: number;
  restoredFrom?: number;
  summary?: string;
}

/**
 * Tells the article history who makes the transaction's next article writes and how: the revision
 * trigger reads it from a transaction-local setting, so every version written in this transaction
 * records the caller's key and member, the action and the summary. Call inside the transaction.
 */
export async function describeArticleChange(em: EntityManager, scope: Scope, change: ArticleChange): Promise<void> {
  const value = JSON.stringify({ ...change, keyId: scope.agent.keyId, memberId: scope.agent.memberId });
  await setArticleChange(em, value);
}

/** Throws 412 unless `ifMatch` is absent, `*`, or names the version (weak or strong). */
export function checkIfMatch(ifMatch: string | null | undefined, version: number): void {
  if (!ifMatch) return;
  const current = versionEtag(version);
  if (!etagMatches(ifMatch, current)) throw new PreconditionFailedError('article', current);
}

/** The article with `id`, without a visibility check: for an article the caller has just found or written. */
export async function findArticleById(em: EntityManager, id: number): Promise<Article> {
  return toArticle(em, await articleById(em, id));
}

/** A read-only article for lists: a plain object (no identity map, no change tracking), for speed. */
function plainArticle(row: ArticleRow): Article {
  return {
    id: row.id,
    slug: row.slug,
    title: row.title,
    markdown: row.markdown,
    status: row.status,
    visibility: row.visibility,
    position: row.position,
    version: row.version,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
    publishedAt: row.published_at ? new Date(row.published_at) : null,
    sectionKey: row.section_key,
  } as Article;
}

function toArticle(em: EntityManager, row: ArticleRow): Article {
  const article = entityOf(em, Article, row);
  return Object.assign(article, { sectionKey: row.section_key });
}
