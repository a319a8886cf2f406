import { authorize, canSeeRestricted, type Scope } from '../auth/authorize.js';
import type { RequestContext } from '../context.js';
import { sql } from '../db/sql.js';
import { invalidField } from '../errors.js';
import { LIMITS } from '../limits.js';
import { decodeCursor, encodeCursor, pageSize } from '../pagination.js';
import { EmbedderUnavailableError, type Embedder } from '../search/embedder.js';
import { enqueueEmbedding, signalEmbeddingWork, type ItemType, type Neighbour } from '../search/vectors.js';

/** Below this cosine similarity a semantic hit is noise. */
export const SIMILARITY_FLOOR = 0.3;
const SEARCHED: ItemType[] = ['article', 'changelog'];
const HEADLINE = `'StartSel=<mark>, StopSel=</mark>, MaxWords=35, MinWords=12, MaxFragments=2, FragmentDelimiter=" … "'`;

export interface SearchHit {
  type: 'article' | 'changelog';
  slug: string | null;
  id: number | null;
  title: string;
  snippet: string;
  score: number;
  url: string;
}

export type Ranking = 'fulltext' | 'semantic';
export type FallbackReason = 'embedder_unavailable' | 'embeddings_pending' | 'below_similarity_floor';

export interface SearchResult {
  items: SearchHit[];
  nextCursor: string | null;
  ranking: Ranking;
  fallbackReason: FallbackReason | null;
}

/**
 * Searches articles (not archived; restricted ones only for keys allowed to see them) and
 * published changelog entries. Full text by default; with `semantic`, by embedding similarity,
 * falling back to full text when the embedder is unavailable, items still wait for embeddings, or
 * nothing clears the similarity floor. Every search is logged; zero-result ones feed content gaps.
 */
export async function search(ctx: RequestContext, workspace: string, args: { q: string; semantic?: boolean | null; limit?: number | null; cursor?: string | null }): Promise<SearchResult> {
  const started = performance.now();
  const scope = await authorize(ctx, workspace, ['search.read']);
  const q = args.q.trim();
  if (!q) throw invalidField('q', 'must not be empty');
  if (q.length > LIMITS.searchQueryLength) throw invalidField('q', `must be at most ${LIMITS.searchQueryLength} characters`);
  const size = pageSize(args.limit, LIMITS.searchPageMax, LIMITS.searchPageDefault);
  const [offset, cursorRanking] = args.cursor ? decodeCursor<[number, string]>(args.cursor, ['number', 'string']) : [0, null];
  if (!Number.isInteger(offset) || offset < 0) throw invalidField('cursor', 'is not a cursor returned by this search');

  let result: SearchResult | null = null;
  let fallbackReason: FallbackReason | null = null;
  if (args.semantic && cursorRanking !== 'fulltext') {
    const semantic = await semanticSearch(ctx, scope, q, size, offset);
    if ('reason' in semantic) fallbackReason = semantic.reason;
    else result = { ...semantic, ranking: 'semantic', fallbackReason: null };
  }
  result ??= { ...(await fullTextSearch(ctx, scope, q, size, offset)), ranking: 'fulltext', fallbackReason };
  await logSearch(ctx, scope, q, result, Math.round(performance.now() - started), offset === 0);
  return result;
}

async function fullTextSearch(ctx: RequestContext, scope: Scope, q: string, size: number, offset: number) {
  // The tsquery is written inline (not in a CTE) so the planner estimates its selectivity: a
  // common word is then a sequential scan, a rare one the GIN index. Ranking runs on narrow rows
  // (no text carried through the sort); snippets are made for the page only.
  const query = `websearch_to_tsquery('english', ?)`;
  const rows = await sql(
    ctx.em,
    `with hits as (
       select 'article' as type, a.id as item_id, ts_rank(a.search, ${query}) as score, a.title, a.slug
         from articles a join sections s on s.id = a.section_id
        where a.workspace_id = ? and a.status <> 'ARCHIVED' and a.search @@ ${query}
          and (?::boolean or (a.visibility = 'public' and s.visibility = 'public'))
       union all
       select 'changelog', c.id, ts_rank(c.search, ${query}), c.title, null
         from changelog_entries c
        where c.workspace_id = ? and c.status = 'published' and c.search @@ ${query}
       order by score desc, title, slug, item_id
       limit ? offset ?),
     numbered as (select h.*, row_number() over (order by h.score desc, h.title, h.slug, h.item_id) as n from hits h)
     select h.type, h.slug, case when h.type = 'changelog' then h.item_id end as id, h.title, h.score,
            case when h.n <= ? then ts_headline('english', coalesce(a.markdown, c.markdown), ${query}, ${HEADLINE}) end as snippet
       from numbered h
       left join articles a on h.type = 'article' and a.id = h.item_id
       left join changelog_entries c on h.type = 'changelog' and c.id = h.item_id
      order by h.n`,
    [q, scope.workspaceId, q, canSeeRestricted(scope), q, scope.workspaceId, q, size + 1, offset, size, q],
  );
  return page(scope, rows, size, offset, 'fulltext');
}

async function semanticSearch(ctx: RequestContext, scope: Scope, q: string, size: number, offset: number): Promise<Omit<SearchResult, 'ranking' | 'fallbackReason'> | { reason: FallbackReason }> {
  const { embedder, index } = ctx.search;
  // The query is embedded (the slowest step) while the database is asked what it needs to know.
  const vector = queryVector(embedder, q);
  vector.catch(() => undefined);
  if (await index.pending(ctx.em, scope.workspaceId, SEARCHED)) return { reason: 'embeddings_pending' };
  let found: Neighbour[];
  try {
    // Over-fetch: some neighbours may be hidden from this key or archived.
    found = await index.nearest(ctx.em, scope.workspaceId, SEARCHED, vector, embedder.model, offset + size + 50);
  } catch (error) {
    if (error instanceof EmbedderUnavailableError) return { reason: 'embedder_unavailable' };
    throw error;
  }
  const neighbours = found.filter((n) => n.similarity >= SIMILARITY_FLOOR);
  if (!neighbours.length) return offset ? { items: [], nextCursor: null } : { reason: 'below_similarity_floor' };
  // Which neighbours this key may see (cheap columns only), then snippets for the page alone.
  const ids = (list: Neighbour[], type: ItemType) => `{${list.filter((n) => n.itemType === type).map((n) => n.itemId).join(',')}}`;
  const visible = await sql(
    ctx.em,
    `select 'article' as type, a.id from articles a join sections s on s.id = a.section_id
      where a.id = any(?::int[]) and a.workspace_id = ? and a.status <> 'ARCHIVED' and (?::boolean or (a.visibility = 'public' and s.visibility = 'public'))
     union all
     select 'changelog', c.id from changelog_entries c where c.id = any(?::int[]) and c.workspace_id = ? and c.status = 'published'`,
    [ids(neighbours, 'article'), scope.workspaceId, canSeeRestricted(scope), ids(neighbours, 'changelog'), scope.workspaceId],
  );
  const seen = new Set(visible.map((r) => `${r.type}:${r.id}`));
  const ranked = neighbours.filter((n) => seen.has(`${n.itemType}:${n.itemId}`));
  if (!ranked.length && !offset) return { reason: 'below_similarity_floor' };
  const pageOf = ranked.slice(offset, offset + size);
  const rows = await sql(
    ctx.em,
    `with q as (select websearch_to_tsquery('english', ?) as query)
     select 'article' as type, a.id as item_id, a.slug, null::int as id, a.title, ts_headline('english', a.markdown, q.query, ${HEADLINE}) as snippet
       from articles a, q where a.id = any(?::int[]) and a.workspace_id = ?
     union all
     select 'changelog', c.id, null, c.id, c.title, ts_headline('english', c.markdown, q.query, ${HEADLINE})
       from changelog_entries c, q where c.id = any(?::int[]) and c.workspace_id = ?`,
    [q, ids(pageOf, 'article'), scope.workspaceId, ids(pageOf, 'changelog'), scope.workspaceId],
  );
  const byKey = new Map(rows.map((r) => [`${r.type}:${r.item_id}`, r]));
  const hits = pageOf.flatMap((n) => {
    const row = byKey.get(`${n.itemType}:${n.itemId}`);
    return row ? [{ ...row, score: n.similarity }] : [];
  });
  return page(scope, hits, size, offset, 'semantic', ranked.length > offset + size);
}

/**
 * Query vectors of recent searches, per process (agents repeat searches; the model is
 * deterministic, so a repeated query needs no second inference). Least recently used goes first.
 */
const recentQueryVectors = new Map<string, number[]>();
const RECENT_QUERY_VECTORS = 1000; // ~4 MB of 512-dimension vectors

async function queryVector(embedder: Embedder, q: string): Promise<number[]> {
  const key = `${embedder.model}\u0000${q}`;
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

/** A page of hits; `more` (default: a row beyond `size` was fetched) decides the next cursor. */
function page(scope: Scope, rows: Record<string, any>[], size: number, offset: number, ranking: Ranking, more = rows.length > size) {
  const items: SearchHit[] = rows.slice(0, size).map((r) => ({
    type: r.type,
    slug: r.slug ?? null,
    id: r.id ?? null,
    title: r.title,
    snippet: r.snippet,
    score: Math.round(Number(r.score) * 1e6) / 1e6,
    url: r.type === 'article' ? `/api/v1/workspaces/${scope.workspaceId}/articles/${r.slug}` : `/api/v1/workspaces/${scope.workspaceId}/changelog#entry-${r.id}`,
  }));
  return { items, nextCursor: more ? encodeCursor([offset + size, ranking]) : null };
}

/** Logs the search; a zero-result search is queued for embedding so it joins a content-gap group. */
async function logSearch(ctx: RequestContext, scope: Scope, q: string, result: SearchResult, durationMs: number, firstPage: boolean) {
  const [row] = await sql(
    ctx.em,
    'insert into search_log (workspace_id, agent_key_id, query, result_count, ranking, duration_ms, created_at) values (?, ?, ?, ?, ?, ?, ?) returning id',
    [scope.workspaceId, scope.agent.keyId, q, result.items.length, result.ranking, durationMs, new Date()],
  );
  if (result.items.length === 0 && firstPage) {
    await enqueueEmbedding(ctx.em, scope.workspaceId, 'search', row.id);
    signalEmbeddingWork();
  }
}
