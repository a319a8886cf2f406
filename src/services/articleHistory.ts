import { structuredPatch, formatPatch, type StructuredPatch } from 'diff';
import type { Scope } from '../auth/authorize.js';
import { seesRestricted } from '../auth/visibility.js';
import type { RequestContext } from '../context.js';
import type { SqlTarget } from '../db/sql.js';
import type { Article } from '../entities/Article.js';
import { invalidField, NotFoundError } from '../errors.js';
import { decodeCursor, pageSize, toPage, type Page } from '../pagination.js';
import { enqueueEmbedding, signalEmbeddingWork } from '../search/vectors.js';
import type { ArticleDiff, ArticleFieldChange, ArticleRevision, ArticleRevisionEntry } from '../types/articleHistory.js';
import { eventObject } from '../webhooks/objects.js';
import { articleEvent, checkIfMatch, describeArticleChange, findArticle, findArticleById, refuseGenerated } from './articles.js';
import { writeArticleText } from '../store/articles.js';
import { revisionsBefore, revisionWithMarkdown, type RevisionRow } from '../store/articleRevisions.js';
import { recordAudit } from './audit.js';
import { inTransaction } from '../store/unitOfWork.js';

/** Diffs stop looking for a minimal edit after this many changed lines or milliseconds, and replace every line instead. */
const DIFF_LIMITS = { maxEditLength: 400, timeout: 50 };

/** An article's versions, newest first (paginated by version), without Markdown. */
export async function articleRevisions(
  ctx: RequestContext,
  scope: Scope,
  slug: string,
  args: { limit?: number | null; cursor?: string | null },
): Promise<Page<ArticleRevisionEntry>> {
  const article = await findArticle(ctx.em, scope, slug, false);
  const size = pageSize(args.limit);
  const before = args.cursor ? decodeCursor<[number]>(args.cursor, ['number'])[0] : null;
  if (before !== null && !Number.isInteger(before)) throw invalidField('cursor', 'is not a cursor returned by this list');
  const rows = await revisionsBefore(ctx.db, {
    workspaceId: scope.workspaceId,
    articleId: article.id,
    before,
    canSee: seesRestricted(scope),
    limit: size + 1,
  });
  return toPage(rows.map(toEntry), size, (e) => [e.version]);
}

/** One version of an article with its Markdown; 404 when it has no readable version of that number. */
export async function articleRevision(ctx: RequestContext, scope: Scope, slug: string, version: number): Promise<ArticleRevision> {
  const article = await findArticle(ctx.em, scope, slug, false);
  return loadRevision(ctx.db, scope, article, version);
}

/**
 * What changed from version `from` to version `to` (default: the current one): the fields other
 * than the Markdown whose values differ, and a unified diff of the Markdown.
 */
export async function articleDiff(ctx: RequestContext, scope: Scope, slug: string, from: number, to?: number | null): Promise<ArticleDiff> {
  const article = await findArticle(ctx.em, scope, slug, false);
  const target = to ?? article.version;
  const [a, b] = await Promise.all([loadRevision(ctx.db, scope, article, from), loadRevision(ctx.db, scope, article, target)]);
  const changes: ArticleFieldChange[] = (['title', 'status', 'visibility', 'section', 'position'] as const)
    .filter((field) => a[field] !== b[field])
    .map((field) => ({ field, from: a[field], to: b[field] }));
  const names = [`${article.slug}@v${from}`, `${article.slug}@v${target}`] as const;
  const patch =
    structuredPatch(names[0], names[1], a.markdown, b.markdown, '', '', { context: 3, ...DIFF_LIMITS }) ??
    replaceAll(names, a.markdown, b.markdown);
  const lines = patch.hunks.flatMap((h) => h.lines);
  return {
    slug: article.slug,
    from,
    to: target,
    changes,
    diff: formatPatch(patch),
    additions: lines.filter((l) => l.startsWith('+')).length,
    deletions: lines.filter((l) => l.startsWith('-')).length,
  };
}

/**
 * Brings back the title and Markdown of an earlier version as a new version (status, visibility
 * and placement stay as they are). Needs `article.update`; honours `ifMatch`; pages generated from
 * the OpenAPI spec refuse it (409) like an edit.
 */
export async function restoreArticle(
  ctx: RequestContext,
  scope: Scope,
  slug: string,
  version: number,
  ifMatch?: string | null,
): Promise<Article> {
  return inTransaction(ctx.em, async (em) => {
    const article = await findArticle(em, scope, slug, true);
    refuseGenerated(article);
    checkIfMatch(ifMatch, article.version);
    const old = await loadRevision(em, scope, article, version);
    const before = eventObject('Article', article);
    await describeArticleChange(em, scope, {
      action: 'restored',
      restoredFrom: version,
      summary: `Restored the title and Markdown of version ${version}.`,
    });
    await writeArticleText(em, article.id, old.title, old.markdown, new Date());
    if (old.title !== article.title || old.markdown !== article.markdown) {
      await enqueueEmbedding(em, scope.workspaceId, 'article', article.id);
      signalEmbeddingWork();
    }
    const restored = await findArticleById(em, article.id);
    recordAudit(em, ctx, articleEvent('article.updated', scope, restored, before));
    return restored;
  });
}

/** One version of the article with its Markdown, if the caller may read it; else 404. */
async function loadRevision(db: SqlTarget, scope: Scope, article: Article, version: number): Promise<ArticleRevision> {
  const row = await revisionWithMarkdown(db, {
    workspaceId: scope.workspaceId,
    articleId: article.id,
    version,
    canSee: seesRestricted(scope),
  });
  if (!row) throw new NotFoundError('Article revision');
  return { ...toEntry(row), markdown: row.markdown! };
}

/** The patch of a diff too large to compute quickly: every old line removed, every new one added. */
function replaceAll(names: readonly [string, string], before: string, after: string): StructuredPatch {
  const split = (text: string) => (text === '' ? [] : text.replace(/\n$/, '').split('\n'));
  const [a, b] = [split(before), split(after)];
  return {
    oldFileName: names[0],
    newFileName: names[1],
    oldHeader: '',
    newHeader: '',
    hunks: [
      {
        oldStart: a.length ? 1 : 0,
        oldLines: a.length,
        newStart: b.length ? 1 : 0,
        newLines: b.length,
        lines: [...a.map((l) => `-${l}`), ...b.map((l) => `+${l}`)],
      },
    ],
  };
}

function toEntry(r: RevisionRow): ArticleRevisionEntry {
  return {
    version: r.version,
    title: r.title,
    status: r.status,
    visibility: r.visibility,
    section: r.section,
    position: r.position,
    action: r.action,
    changed: r.changed,
    summary: r.summary,
    agentKeyId: r.agent_key_id,
    memberId: r.member_id,
    proposalId: r.proposal_id,
    restoredFrom: r.restored_from,
    size: Number(r.size),
    createdAt: new Date(r.created_at),
  };
}
