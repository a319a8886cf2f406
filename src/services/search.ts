import { authorize, canSeeRestricted, type Scope } from '../auth/authorize.js';
import type { RequestContext } from '../context.js';
import { pgArray, sql, sqlRelaxed } from '../db/sql.js';
import { invalidField } from '../errors.js';
import { ARTICLE_VISIBLE } from './articles.js';
import { LIMITS } from '../limits.js';
import { decodeCursor, encodeCursor, pageSize } from '../pagination.js';
import { EmbedderUnavailableError, type Embedder } from '../search/embedder.js';
import { ENQUEUE_EMBEDDING, signalEmbeddingWork, type ItemType, type Neighbour } from '../search/vectors.js';

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

/**
 * Full-text search, best first (ts_rank over title A and markdown B).
 *
 * A query of one word has a shortcut that gives exactly the same answer: with ts_rank's default
 * weights, a document with the word in its title (weight A, the first positions) scores at least
 * 1/1.645 ≈ 0.61, one with it only in the body (weight B) less than 0.4. So when enough titles
 * contain the word to fill the page, the page is found among those titles alone (a small GIN
 * index on the titles) instead of ranking every matching document — for a common word, most of
 * the workspace. Otherwise, and for any other query, every match is ranked.
 *
 * The tsquery is written inline (not in a CTE) so the planner sees its value: a common word is
 * then a sequential scan, a rare one the GIN index, and a query of several words drops the
 * shortcut at plan time. Ranking runs on narrow rows; snippets are made for the page only.
 */
async function fullTextSearch(ctx: RequestContext, scope: Scope, q: string, size: number, offset: number) {
  const query = `websearch_to_tsquery('english', ?)`;
  const matches = (where: (table: 'a' | 'c') => string) => `
       select 'article' as type, a.id as item_id, ts_rank(a.search, ${query}) as score, a.title, a.slug
         from articles a join sections s on s.id = a.section_id
        where ${where('a')} and a.workspace_id = ? and a.status <> 'ARCHIVED' and ${ARTICLE_VISIBLE}
       union all
       select 'changelog', c.id, ts_rank(c.search, ${query}), c.title, null
         from changelog_entries c
        where ${where('c')} and c.workspace_id = ? and c.status = 'published'
       order by score desc, title, slug, item_id`;
  const seeRestricted = canSeeRestricted(scope);
  const needed = offset + size + 1; // the page, and one more to know whether another page follows
  const rows = await sql(
    ctx.db,
    `with title_hits as (${matches((t) => `numnode(${query}) = 1 and to_tsvector('english'::regconfig, ${t}.title) @@ ${query}`)} limit ?),
     hits as (
       (select * from title_hits where (select count(*) from title_hits) >= ? order by score desc, title, slug, item_id offset ?)
       union all
       (${matches((t) => `(select count(*) from title_hits) < ? and ${t}.search @@ ${query}`)} limit ? offset ?)),
     numbered as (select h.*, row_number() over (order by h.score desc, h.title, h.slug, h.item_id) as n from hits h)
     select h.type, h.slug, case when h.type = 'changelog' then h.item_id end as id, h.title, h.score,
            case when h.n <= ? then ts_headline('english', coalesce(a.markdown, c.markdown), ${query}, ${HEADLINE}) end as snippet
       from numbered h
       left join articles a on h.type = 'article' and a.id = h.item_id
       left join changelog_entries c on h.type = 'changelog' and c.id = h.item_id
      order by h.n`,
    [
      q, q, q, scope.workspaceId, seeRestricted, q, q, q, scope.workspaceId, needed,
      needed, offset,
      q, needed, q, scope.workspaceId, seeRestricted, q, needed, q, scope.workspaceId, size + 1, offset,
      size, q,
    ],
  );
  return page(scope, rows, size, offset, 'fulltext');
}

async function semanticSearch(ctx: RequestContext, scope: Scope, q: string, size: number, offset: number): Promise<Omit<SearchResult, 'ranking' | 'fallbackReason'> | { reason: FallbackReason }> {
  const { embedder, index } = ctx.search;
  // The query is embedded (the slowest step) while the database is asked, at the same time,
  // whether items still wait for embeddings and what the workspace's vectors are.
  const vector = queryVector(embedder, q);
  vector.catch(() => undefined);
  // Over-fetch: some neighbours may be hidden from this key or archived.
  const nearest = index.nearest(ctx.db, scope.workspaceId, SEARCHED, vector, embedder.model, offset + size + 50);
  nearest.catch(() => undefined);
  if (await index.pending(ctx.db, scope.workspaceId, SEARCHED)) return { reason: 'embeddings_pending' };
  let found: Neighbour[];
  try {
    found = await nearest;
  } catch (error) {
    if (error instanceof EmbedderUnavailableError) return { reason: 'embedder_unavailable' };
    throw error;
  }
  const neighbours = found.filter((n) => n.similarity >= SIMILARITY_FLOOR);
  if (!neighbours.length) return offset ? { items: [], nextCursor: null } : { reason: 'below_similarity_floor' };
  // In one statement: which neighbours this key may see (in similarity order), how many, and
  // snippets for the page alone.
  const rows = await sql(
    ctx.db,
    `with n as (select * from unnest(?::text[], ?::int[]) with ordinality as n(type, id, ord)),
     visible as (
       select n.type, n.id, n.ord, a.slug, a.title, a.markdown from n
         join articles a on n.type = 'article' and a.id = n.id join sections s on s.id = a.section_id
        where a.workspace_id = ? and a.status <> 'ARCHIVED' and ${ARTICLE_VISIBLE}
       union all
       select n.type, n.id, n.ord, null, c.title, c.markdown from n
         join changelog_entries c on n.type = 'changelog' and c.id = n.id
        where c.workspace_id = ? and c.status = 'published'),
     page as (select * from visible order by ord offset ? limit ?)
     select p.type, p.id as item_id, p.slug, case when p.type = 'changelog' then p.id end as id, p.title, p.ord,
            ts_headline('english', p.markdown, websearch_to_tsquery('english', ?), ${HEADLINE}) as snippet,
            (select count(*) from visible)::int as visible
       from page p order by p.ord`,
    [pgArray(neighbours.map((n) => n.itemType)), `{${neighbours.map((n) => n.itemId).join(',')}}`, scope.workspaceId, canSeeRestricted(scope), scope.workspaceId, offset, size, q],
  );
  const visible = rows[0]?.visible ?? 0;
  if (!rows.length && !offset) return { reason: 'below_similarity_floor' };
  const hits = rows.map((r) => ({ ...r, score: neighbours[Number(r.ord) - 1].similarity }));
  return page(scope, hits, size, offset, 'semantic', visible > offset + size);
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

/**
 * Logs the search, and queues a zero-result first page for embedding so it joins a content-gap
 * group: one statement, committed without waiting for the WAL flush (a crash may lose the last
 * few log rows, which costs nothing but a line of statistics).
 */
async function logSearch(ctx: RequestContext, scope: Scope, q: string, result: SearchResult, durationMs: number, firstPage: boolean) {
  const gap = result.items.length === 0 && firstPage;
  await sqlRelaxed(
    ctx.db,
    `with logged as (
       insert into search_log (workspace_id, agent_key_id, query, result_count, ranking, duration_ms, created_at) values (?, ?, ?, ?, ?, ?, ?) returning id)
     ${ENQUEUE_EMBEDDING('search', 'select id from logged where ?::boolean')}`,
    [scope.workspaceId, scope.agent.keyId, q, result.items.length, result.ranking, durationMs, new Date(), scope.workspaceId, gap],
  );
  if (gap) signalEmbeddingWork();
}
