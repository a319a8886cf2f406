import type { Scope } from '../auth/authorize.js';
import { documentId, documentUrl } from './documents.js';
import type { DocumentResult } from '../types/documents.js';
import { seesRestricted } from '../auth/visibility.js';
import { callerKind, type RequestContext } from '../context.js';
import { invalidField } from '../errors.js';
import { RULES } from '../contract/rules.js';
import { pageSize } from '../pagination.js';
import { readSearchCursor, searchCursor } from '../search/cursor.js';
import { EmbedderUnavailableError, type Embedder } from '../search/embedder.js';
import { safeSnippet } from '../search/snippets.js';
import { suggestQueries } from '../search/suggestions.js';
import { FEEDBACK_ITEMS, fuse, HYBRID_FULL_TEXT_DEPTH, SEMANTIC_DEPTH, withFeedback, type Candidate } from '../search/fusion.js';
import { explainHit, unanswered } from '../search/explain.js';
import { rankFullText, type FullTextResult } from '../search/fullText.js';
import type { FallbackReason, SearchExplain, SearchHit, SearchMode, SearchPage } from '../types/search.js';
import { signalEmbeddingWork, type ItemType, type Neighbour } from '../search/vectors.js';
import { visibleHits, visibleInOrder, type HitRow, type RankedItems, type SearchScope } from '../store/search.js';
import { logSearch as insertSearchLog } from '../store/searchLog.js';

/** Below this cosine similarity of its best passage a semantic hit is noise. */
const SIMILARITY_FLOOR = 0.3;
const SEARCHED: ItemType[] = ['article', 'changelog'];

/** A search's arguments, as every door sends them. */
export interface SearchArgs {
  q: string;
  semantic?: boolean | null;
  mode?: SearchMode | null;
  limit?: number | null;
  cursor?: string | null;
  explain?: boolean | null;
}

/** A ranking's page before its rows are read: the items in order, what ranked each, and whether more follow. */
interface RankedPage {
  items: Candidate[];
  more: boolean;
}

/**
 * Searches articles (not archived; restricted ones only for keys allowed to see them) and
 * published changelog entries. Full text by default (BM25F: see rankFullText); with `semantic`, by
 * embedding similarity, falling back to full text when the embedder is unavailable, items still
 * wait for embeddings, or nothing clears the similarity floor; `hybrid` fuses both (see fuse).
 * Every ranking is one ranking of a fixed depth, whatever page is asked: a page is a slice of it.
 * Every search is logged; an unanswered first page (see unanswered) feeds content gaps.
 */
export async function search(ctx: RequestContext, scope: Scope, args: SearchArgs): Promise<SearchPage> {
  const started = performance.now();
  const q = args.q.trim();
  if (!q) throw invalidField('q', 'must not be empty');
  if (args.semantic && args.mode && args.mode !== 'semantic')
    throw invalidField('semantic', `semantic=true asks for mode=semantic, but mode=${args.mode} was sent; send one of them`);
  const size = pageSize(args.limit, RULES.searchLimit);
  const { offset, ranking: cursorRanking } = args.cursor ? readSearchCursor(args.cursor) : { offset: 0, ranking: null };
  // A later page keeps the ranking its cursor was made by, whatever `mode` says.
  const mode: SearchMode = cursorRanking ?? args.mode ?? (args.semantic ? 'semantic' : 'fulltext');
  const window = { offset, size };

  let ranked: (RankedPage & { ranking: SearchMode; fullText: FullTextResult | null }) | null = null;
  let fallbackReason: FallbackReason | null = null;
  if (mode !== 'fulltext') {
    const byMeaning = await rankByMeaning(ctx, scope, q, mode, window);
    if ('reason' in byMeaning) fallbackReason = byMeaning.reason;
    else ranked = { ...byMeaning, ranking: mode };
  }
  if (!ranked) {
    const fullText = await fullTextRanking(ctx, scope, q, offset + size + 1);
    const items = fullText.ranking.hits.map((hit, i) => ({ itemType: hit.type, itemId: hit.id, score: hit.score, fullTextRank: i + 1 }));
    ranked = { items: items.slice(offset, offset + size), more: items.length > offset + size, ranking: 'fulltext', fullText };
  }
  const result: SearchPage = {
    items: await pageItems(ctx, scope, ranked.items, ranked.fullText, args.explain === true),
    nextCursor: ranked.more ? searchCursor(offset + size, ranked.ranking, mode) : null,
    ranking: ranked.ranking,
    fallbackReason,
  };
  result.results = result.items.map((hit) => connectorResult(ctx, scope, hit));
  // Did you mean: on a first page that found nothing, or whose question has a word no item the key may read holds.
  const unknownWord = ranked.fullText?.ranking.terms.some((t) => t.df === 0) ?? false;
  result.suggestions = offset === 0 && (!result.items.length || unknownWord) ? await suggestQueries(ctx.db, searcher(scope), q) : [];
  const gap = offset === 0 && unanswered(ranked.fullText, ranked.items);
  await logSearch(ctx, scope, q, result, Math.round(performance.now() - started), gap);
  return result;
}

/** The full-text ranking of a question over what this key may read, `depth` deep. */
function fullTextRanking(ctx: RequestContext, scope: Scope, q: string, depth: number): Promise<FullTextResult> {
  return rankFullText(ctx.db, ctx.search.fullText, {
    workspace: scope.workspaceId,
    corpus: 'content',
    q,
    seesRestricted: seesRestricted(scope),
    depth,
  });
}

/** The workspace searched and whether this key sees restricted articles. */
function searcher(scope: Scope): SearchScope {
  return { workspaceId: scope.workspaceId, seeRestricted: seesRestricted(scope) };
}

/**
 * The semantic ranking (the nearest SEMANTIC_DEPTH items this key may see, above the similarity
 * floor), or hybrid's fusion of it with full text's first HYBRID_FULL_TEXT_DEPTH; its page. Or why
 * embeddings cannot rank: then full text answers.
 */
async function rankByMeaning(
  ctx: RequestContext,
  scope: Scope,
  q: string,
  mode: 'semantic' | 'hybrid',
  window: { offset: number; size: number },
): Promise<(RankedPage & { fullText: FullTextResult | null }) | { reason: FallbackReason }> {
  const ranking = mode === 'hybrid' ? fullTextRanking(ctx, scope, q, HYBRID_FULL_TEXT_DEPTH) : null;
  ranking?.catch(() => undefined);
  const expand = ranking ? feedbackFrom(ctx, scope.workspaceId, ranking) : undefined;
  const [semantic, fullText] = await Promise.all([
    semanticNeighbours(ctx, scope.workspaceId, q, SEMANTIC_DEPTH, SEARCHED, expand).then(async (neighbours) =>
      'reason' in neighbours
        ? neighbours
        : { neighbours, visible: neighbours.length ? await visibleInOrder(ctx.db, searcher(scope), neighbours) : [] },
    ),
    ranking,
  ]);
  if ('reason' in semantic) return semantic;
  const byKey = new Map(semantic.neighbours.map((n) => [`${n.itemType}:${n.itemId}`, n]));
  const nearest = semantic.visible.map((v) => byKey.get(`${v.itemType}:${v.itemId}`)!);
  if (mode === 'semantic' && !nearest.length && !window.offset) return { reason: 'below_similarity_floor' };
  const items: Candidate[] =
    mode === 'semantic'
      ? nearest.map((n, i) => ({
          itemType: n.itemType,
          itemId: n.itemId,
          score: n.score,
          semanticRank: i + 1,
          similarity: n.score,
          passage: n.passage,
        }))
      : fuse(fullText!.ranking.hits, nearest);
  return { items: items.slice(window.offset, window.offset + window.size), more: items.length > window.offset + window.size, fullText };
}

/**
 * Hybrid's feedback (see withFeedback): the question's vector moved towards the mean passage
 * vectors of full text's first FEEDBACK_ITEMS hits (items the caller may read: the ranking holds no other).
 */
export function feedbackFrom(ctx: RequestContext, workspaceId: string, ranking: Promise<FullTextResult>) {
  return async (vector: number[]) => {
    const top = (await ranking).ranking.hits.slice(0, FEEDBACK_ITEMS).map((h) => ({ itemType: h.type, itemId: h.id }));
    return withFeedback(vector, await ctx.search.index.meanVectors(ctx.db, workspaceId, ctx.search.embedder.model, top));
  };
}

/**
 * The nearest items of `types` by embedding above the similarity floor (at most `k`, some possibly
 * hidden from this key), or why there are none to rank by: the embedder is unavailable, or items
 * still wait for their embeddings. `expand` moves the question's vector before it is compared (hybrid's feedback).
 */
export async function semanticNeighbours(
  ctx: RequestContext,
  workspaceId: string,
  q: string,
  k: number,
  types: ItemType[],
  expand?: (vector: number[]) => Promise<number[]>,
): Promise<Neighbour[] | { reason: FallbackReason }> {
  const { embedder, index } = ctx.search;
  // Switched off (EMBEDDINGS=off): queued items will never be embedded, so say so rather than "pending".
  if (embedder.model === 'none') return { reason: 'embedder_unavailable' };
  // The query is embedded (the slowest step) while the database is asked, at the same time,
  // whether items still wait for embeddings and what the workspace's vectors are.
  const asked = queryVector(embedder, workspaceId, q);
  const vector = expand ? asked.then(expand) : asked;
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

/**
 * A page's hits in ranking order, read in one statement that checks again that this key may see
 * each (so a page never shows what the index held a moment too long): titles, slugs and snippets
 * (of the passage that matched, for a hit the embeddings found; else marking the question's words).
 */
async function pageItems(
  ctx: RequestContext,
  scope: Scope,
  items: Candidate[],
  fullText: FullTextResult | null,
  explain: boolean,
): Promise<SearchHit[]> {
  if (!items.length) return [];
  const ranked: RankedItems = items.map((c) => ({ itemType: c.itemType, itemId: c.itemId, passage: c.passage ?? null }));
  const rows = await visibleHits(ctx.db, searcher(scope), fullText?.anyLexeme ?? null, ranked, 0, items.length);
  return rows.map((r) => {
    const candidate = items[Number(r.ord) - 1];
    const hit = toHit(scope, r, candidate.score);
    if (explain) hit.explain = explainHit(candidate, fullText) satisfies SearchExplain;
    return hit;
  });
}

/** A hit as connectors list it: `{ id, title, url }`, the id one `fetch` takes. */
function connectorResult(ctx: RequestContext, scope: Scope, hit: SearchHit): DocumentResult {
  const [kind, key] = hit.type === 'article' ? (['article', hit.slug!] as const) : (['changelog', hit.id!] as const);
  return { id: documentId(kind, key), title: hit.title, url: documentUrl(ctx.origin, scope.workspaceId, kind, key) };
}

function toHit(scope: Scope, r: HitRow, score: number): SearchHit {
  return {
    type: r.type,
    slug: r.slug ?? null,
    id: r.id ?? null,
    title: r.title,
    snippet: safeSnippet(r.snippet),
    score: Math.round(score * 1e6) / 1e6,
    url:
      r.type === 'article'
        ? `/api/v1/workspaces/${scope.workspaceId}/articles/${r.slug}`
        : `/api/v1/workspaces/${scope.workspaceId}/changelog#entry-${r.id}`,
  };
}

/**
 * Logs the search, and queues an unanswered first page for embedding so it joins a content-gap
 * group: one statement, committed without waiting for the WAL flush (a crash may lose the last
 * few log rows, which costs nothing but a line of statistics).
 */
async function logSearch(ctx: RequestContext, scope: Scope, q: string, result: SearchPage, durationMs: number, gap: boolean) {
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
