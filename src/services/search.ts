import type { Scope } from '../auth/authorize.js';
import { seesRestricted } from '../auth/visibility.js';
import { callerKind, type RequestContext } from '../context.js';
import { invalidField } from '../errors.js';
import { RULES } from '../contract/rules.js';
import { pageSize } from '../pagination.js';
import { readSearchCursor, searchCursor } from '../search/cursor.js';
import { EmbedderUnavailableError, type Embedder } from '../search/embedder.js';
import { safeSnippet } from '../search/snippets.js';
import { suggestQueries } from '../search/suggestions.js';
import { fuseRankings, HYBRID_DEPTH, hybridRankings } from '../search/fusion.js';
import { fullTextCap } from '../search/fullTextCap.js';
import type { FallbackReason, SearchHit, SearchMode, SearchPage } from '../types/search.js';
import { signalEmbeddingWork, type ItemType, type Neighbour } from '../search/vectors.js';
import {
  anyWordHits,
  fullTextHits,
  visibleHits,
  visibleInOrder,
  type FullTextRow,
  type HitRow,
  type RankedItems,
  type SearchScope,
} from '../store/search.js';
import { logSearch as insertSearchLog } from '../store/searchLog.js';

/** Below this cosine similarity of its best passage a semantic hit is noise. */
const SIMILARITY_FLOOR = 0.3;
const SEARCHED: ItemType[] = ['article', 'changelog'];

/**
 * Searches articles (not archived; restricted ones only for keys allowed to see them) and
 * published changelog entries. Full text by default; with `semantic`, by embedding similarity,
 * falling back to full text when the embedder is unavailable, items still wait for embeddings, or
 * nothing clears the similarity floor. Every search is logged; zero-result ones feed content gaps.
 */
export async function search(
  ctx: RequestContext,
  scope: Scope,
  args: { q: string; semantic?: boolean | null; mode?: SearchMode | null; limit?: number | null; cursor?: string | null },
): Promise<SearchPage> {
  const started = performance.now();
  const q = args.q.trim();
  if (!q) throw invalidField('q', 'must not be empty');
  if (args.semantic && args.mode && args.mode !== 'semantic')
    throw invalidField('semantic', `semantic=true asks for mode=semantic, but mode=${args.mode} was sent; send one of them`);
  const size = pageSize(args.limit, RULES.searchLimit);
  const { offset, ranking: cursorRanking } = args.cursor ? readSearchCursor(args.cursor) : { offset: 0, ranking: null };
  // A later page keeps the ranking its cursor was made by, whatever `mode` says.
  const mode: SearchMode = cursorRanking ?? args.mode ?? (args.semantic ? 'semantic' : 'fulltext');

  let result: SearchPage | null = null;
  let fallbackReason: FallbackReason | null = null;
  if (mode !== 'fulltext') {
    const ranked = mode === 'hybrid' ? await hybridSearch(ctx, scope, q, size, offset) : await semanticSearch(ctx, scope, q, size, offset);
    if ('reason' in ranked) fallbackReason = ranked.reason;
    else result = { ...ranked, ranking: mode, fallbackReason: null };
  }
  result ??= { ...(await fullTextSearch(ctx, scope, q, size, offset, mode)), fallbackReason };
  result.suggestions = !result.items.length && offset === 0 ? await suggestQueries(ctx.db, scope, q) : [];
  await logSearch(ctx, scope, q, result, Math.round(performance.now() - started), offset === 0);
  return result;
}

/**
 * Full-text search, best first (ts_rank over title A and markdown B; see fullTextHits for its
 * one-word shortcut and its bounded ranking of a query matching more than the cap, which answers
 * as ranking `fulltext_bounded`; its cursor is a full-text one, and the next page is bounded too).
 */
async function fullTextSearch(ctx: RequestContext, scope: Scope, q: string, size: number, offset: number, asked: SearchMode) {
  const rows = await fullTextRows(ctx, scope, q, size, offset, true);
  const ranked = page(scope, rows, size, offset, 'fulltext', rows.length > size, asked);
  return { ...ranked, ranking: rows[0]?.bounded ? ('fulltext_bounded' as const) : ('fulltext' as const) };
}

/** The full-text ranking's rows from `offset`: `size` of them and one more, with snippets when asked. */
function fullTextRows(ctx: RequestContext, scope: Scope, q: string, size: number, offset: number, snippets: boolean) {
  return fullTextHits(ctx.db, searcher(scope), { q, size, offset, snippets, cap: fullTextCap() });
}

/** The workspace searched and whether this key sees restricted articles. */
function searcher(scope: Scope): SearchScope {
  return { workspaceId: scope.workspaceId, seeRestricted: seesRestricted(scope) };
}

async function semanticSearch(
  ctx: RequestContext,
  scope: Scope,
  q: string,
  size: number,
  offset: number,
): Promise<Omit<SearchPage, 'ranking' | 'fallbackReason'> | { reason: FallbackReason }> {
  const neighbours = await semanticNeighbours(ctx, scope.workspaceId, q, offset + size + 50, SEARCHED);
  if ('reason' in neighbours) return neighbours;
  if (!neighbours.length) return offset ? { items: [], nextCursor: null } : { reason: 'below_similarity_floor' };
  const rows = await visibleHits(ctx.db, searcher(scope), q, neighbours, offset, size);
  const visible = rows[0]?.visible ?? 0;
  if (!rows.length && !offset) return { reason: 'below_similarity_floor' };
  const hits = rows.map((r) => ({ ...r, score: neighbours[Number(r.ord) - 1].score }));
  return page(scope, hits, size, offset, 'semantic', visible > offset + size);
}

/**
 * The nearest items of `types` by embedding above the similarity floor (at most `k`, some possibly
 * hidden from this key), or why there are none to rank by: the embedder is unavailable, or items
 * still wait for their embeddings.
 */
export async function semanticNeighbours(
  ctx: RequestContext,
  workspaceId: string,
  q: string,
  k: number,
  types: ItemType[],
): Promise<Neighbour[] | { reason: FallbackReason }> {
  const { embedder, index } = ctx.search;
  // The query is embedded (the slowest step) while the database is asked, at the same time,
  // whether items still wait for embeddings and what the workspace's vectors are.
  const vector = queryVector(embedder, workspaceId, q);
  vector.catch(() => undefined);
  const nearest = index.nearest(ctx.db, workspaceId, types, vector, embedder.model, k);
  nearest.catch(() => undefined);
  if (await index.pending(ctx.db, workspaceId, types)) return { reason: 'embeddings_pending' };
  try {
    return (await nearest).filter((n) => n.similarity >= SIMILARITY_FLOOR);
  } catch (error) {
    if (error instanceof EmbedderUnavailableError) return { reason: 'embedder_unavailable' };
    throw error;
  }
}

/**
 * Hybrid ranking: the full-text ranking, the embeddings' and the any-word ranking (anyWordHits:
 * pages whose title or headings hold any of the query's words, by their rank for any of them) fused
 * by fuseRankings (weighted reciprocal rank fusion, as memory search fuses), then paged like any
 * ranking. Falls back to full text only when embeddings cannot be used at all (embedder
 * unavailable, items pending); a query nothing is semantically close to fuses the other two.
 *
 * The three rankings are asked at once (full text while the question is embedded); the semantic
 * neighbours this key may see are kept, in their order; the page of the fused ranking then gets
 * its titles, slugs and snippets.
 */
async function hybridSearch(
  ctx: RequestContext,
  scope: Scope,
  q: string,
  size: number,
  offset: number,
): Promise<Omit<SearchPage, 'ranking' | 'fallbackReason'> | { reason: FallbackReason }> {
  const depth = offset + size + HYBRID_DEPTH;
  // The neighbours this key may see are sorted out while full text still ranks.
  const [fullText, semantic, anyWord] = await Promise.all([
    fullTextRows(ctx, scope, q, depth, 0, false),
    semanticNeighbours(ctx, scope.workspaceId, q, depth, SEARCHED).then(async (neighbours) =>
      'reason' in neighbours
        ? neighbours
        : { neighbours, visible: neighbours.length ? await visibleInOrder(ctx.db, searcher(scope), neighbours) : [] },
    ),
    anyWordHits(ctx.db, searcher(scope), { q, size: depth }),
  ]);
  if ('reason' in semantic) return semantic;
  const { neighbours, visible: semanticRanking } = semantic;
  const ranking = (rows: FullTextRow[]): RankedItems => rows.slice(0, depth).map((r) => ({ itemType: r.type, itemId: Number(r.item_id) }));
  const fused = fuseRankings(hybridRankings(ranking(fullText), semanticRanking, ranking(anyWord)), (i) => `${i.itemType} ${i.itemId}`);
  const pageItems = fused.slice(offset, offset + size);
  if (!pageItems.length) return { items: [], nextCursor: null };
  // A hit the embeddings found shows the passage that matched.
  const passages = new Map(neighbours.map((n) => [`${n.itemType} ${n.itemId}`, n.passage]));
  const rows = await visibleHits(
    ctx.db,
    searcher(scope),
    q,
    pageItems.map(({ item }) => ({ ...item, passage: passages.get(`${item.itemType} ${item.itemId}`) ?? null })),
    0,
    size,
  );
  const hits = rows.map((r) => ({ ...r, score: pageItems[Number(r.ord) - 1].score }));
  return page(scope, hits, size, offset, 'hybrid', fused.length > offset + size);
}

/**
 * Query vectors of recent searches, per process (agents repeat searches; the model is
 * deterministic, so a repeated query needs no second inference). Least recently used goes first.
 * Kept per workspace: a fast answer must not tell one tenant that another asked the same question.
 */
const recentQueryVectors = new Map<string, number[]>();
const RECENT_QUERY_VECTORS = 1000; // ~4 MB of 512-dimension vectors

async function queryVector(embedder: Embedder, workspaceId: string, q: string): Promise<number[]> {
  const key = `${workspaceId}\u0000${embedder.model}\u0000${q}`;
  const hit = recentQueryVectors.get(key);
  if (hit) {
    recentQueryVectors.delete(key);
    recentQueryVectors.set(key, hit);
    return hit;
  }
  const [vector] = await embedder.embed([q]);
  recentQueryVectors.set(key, vector);
  if (recentQueryVectors.size > RECENT_QUERY_VECTORS) recentQueryVectors.delete(recentQueryVectors.keys().next().value!);
  return vector;
}

/** A page of hits: `more` says whether another page follows; `asked` is the ranking the request asked for (see searchCursor). */
function page(scope: Scope, rows: HitRow[], size: number, offset: number, ranking: SearchMode, more: boolean, asked: SearchMode = ranking) {
  const items: SearchHit[] = rows.slice(0, size).map((r) => ({
    type: r.type,
    slug: r.slug ?? null,
    id: r.id ?? null,
    title: r.title,
    snippet: safeSnippet(r.snippet),
    score: Math.round(Number(r.score) * 1e6) / 1e6,
    url:
      r.type === 'article'
        ? `/api/v1/workspaces/${scope.workspaceId}/articles/${r.slug}`
        : `/api/v1/workspaces/${scope.workspaceId}/changelog#entry-${r.id}`,
  }));
  return { items, nextCursor: more ? searchCursor(offset + size, ranking, asked) : null };
}

/**
 * Logs the search, and queues a zero-result first page for embedding so it joins a content-gap
 * group: one statement, committed without waiting for the WAL flush (a crash may lose the last
 * few log rows, which costs nothing but a line of statistics).
 */
async function logSearch(ctx: RequestContext, scope: Scope, q: string, result: SearchPage, durationMs: number, firstPage: boolean) {
  const gap = result.items.length === 0 && firstPage;
  await insertSearchLog(
    ctx.db,
    {
      workspaceId: scope.workspaceId,
      agentKeyId: scope.agent.keyId,
      query: q,
      resultCount: result.items.length,
      ranking: result.ranking,
      durationMs,
      door: ctx.via,
      caller: callerKind(ctx.principal),
    },
    gap,
  );
  if (gap) signalEmbeddingWork();
}
