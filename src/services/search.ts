import type { Scope } from '../auth/authorize.js';
import { articleVisible, seesRestricted } from '../auth/visibility.js';
import type { RequestContext } from '../context.js';
import { pgArray, sql, sqlRelaxed } from '../db/sql.js';
import { invalidField } from '../errors.js';
import { RULES } from '../contract/rules.js';
import { pageSize } from '../pagination.js';
import { readSearchCursor, searchCursor } from '../search/cursor.js';
import { EmbedderUnavailableError, type Embedder } from '../search/embedder.js';
import { headlineSql, safeSnippet } from '../search/snippets.js';
import { suggestQueries } from '../search/suggestions.js';
import { fuseRankings, HYBRID_DEPTH } from '../search/fusion.js';
import type { FallbackReason, Ranking, SearchHit, SearchMode, SearchPage } from '../types/search.js';
import { ENQUEUE_EMBEDDING, signalEmbeddingWork, type ItemType, type Neighbour } from '../search/vectors.js';

/** Below this cosine similarity a semantic hit is noise. */
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
  result ??= { ...(await fullTextSearch(ctx, scope, q, size, offset, mode)), ranking: 'fulltext', fallbackReason };
  result.suggestions = !result.items.length && offset === 0 ? await suggestQueries(ctx.db, scope, q) : [];
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
async function fullTextSearch(ctx: RequestContext, scope: Scope, q: string, size: number, offset: number, asked: SearchMode) {
  const rows = await fullTextRows(ctx, scope, q, size, offset, true);
  return page(scope, rows, size, offset, 'fulltext', rows.length > size, asked);
}

/** The full-text ranking's rows from `offset`: `size` of them and one more, with snippets when asked. */
async function fullTextRows(ctx: RequestContext, scope: Scope, q: string, size: number, offset: number, snippets: boolean) {
  const query = `websearch_to_tsquery('english', :q)`;
  const matches = (where: (table: 'a' | 'c') => string) => `
       select 'article' as type, a.id as item_id, ts_rank(a.search, ${query}) as score, a.title, a.slug
         from articles a join sections s on s.id = a.section_id
        where ${where('a')} and a.workspace_id = :workspace and a.status <> 'ARCHIVED' and ${articleVisible('a', 's', ':see_restricted')}
       union all
       select 'changelog', c.id, ts_rank(c.search, ${query}), c.title, null
         from changelog_entries c
        where ${where('c')} and c.workspace_id = :workspace and c.status = 'published'
       order by score desc, title, slug, item_id`;
  const rows = await sql<HitRow>(
    ctx.db,
    `with title_hits as (${matches((t) => `numnode(${query}) = 1 and to_tsvector('english'::regconfig, ${t}.title) @@ ${query}`)} limit :needed),
     hits as (
       (select * from title_hits where (select count(*) from title_hits) >= :needed order by score desc, title, slug, item_id offset :offset)
       union all
       (${matches((t) => `(select count(*) from title_hits) < :needed and ${t}.search @@ ${query}`)} limit :page_and_one offset :offset)),
     numbered as (select h.*, row_number() over (order by h.score desc, h.title, h.slug, h.item_id) as n from hits h)
     select h.type, h.slug, case when h.type = 'changelog' then h.item_id end as id, h.title, h.score,
            case when :snippets::boolean and h.n <= :size then ${headlineSql('coalesce(a.markdown, c.markdown)', query)} end as snippet,
            h.item_id
       from numbered h
       left join articles a on h.type = 'article' and a.id = h.item_id
       left join changelog_entries c on h.type = 'changelog' and c.id = h.item_id
      order by h.n`,
    {
      q,
      workspace: scope.workspaceId,
      see_restricted: seesRestricted(scope),
      needed: offset + size + 1, // the page, and one more to know whether another page follows
      offset,
      page_and_one: size + 1,
      size,
      snippets,
    },
  );
  return rows;
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
  const rows = await visibleHits(ctx, scope, q, neighbours, offset, size);
  const visible = rows[0]?.visible ?? 0;
  if (!rows.length && !offset) return { reason: 'below_similarity_floor' };
  const hits = rows.map((r) => ({ ...r, score: neighbours[Number(r.ord) - 1].similarity }));
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
 * SQL: the rows of the CTE `n` (type, id, ord: items in some order) that name an item this key may
 * see — an article not archived and visible (`:see_restricted`), or a published changelog entry, of
 * `:workspace` — with `extra` columns of the article (`a`) or entry (`c`), the same for both.
 */
function visibleItems(extra: { article: string; changelog: string } = { article: '', changelog: '' }): string {
  return `
       select n.type, n.id, n.ord${extra.article} from n
         join articles a on n.type = 'article' and a.id = n.id join sections s on s.id = a.section_id
        where a.workspace_id = :workspace and a.status <> 'ARCHIVED' and ${articleVisible('a', 's', ':see_restricted')}
       union all
       select n.type, n.id, n.ord${extra.changelog} from n
         join changelog_entries c on n.type = 'changelog' and c.id = n.id
        where c.workspace_id = :workspace and c.status = 'published'`;
}

/**
 * In one statement: which of `items` (in their order) this key may see, how many, and from
 * `offset` the next `size` with titles, slugs and snippets.
 */
async function visibleHits(
  ctx: RequestContext,
  scope: Scope,
  q: string,
  items: { itemType: ItemType; itemId: number }[],
  offset: number,
  size: number,
) {
  return sql<HitRow & { ord: string; visible: number }>(
    ctx.db,
    `with n as (select * from unnest(:types::text[], :ids::int[]) with ordinality as n(type, id, ord)),
     visible as (${visibleItems({ article: ', a.slug, a.title, a.markdown', changelog: ', null, c.title, c.markdown' })}),
     page as (select * from visible order by ord offset :offset limit :size)
     select p.type, p.id as item_id, p.slug, case when p.type = 'changelog' then p.id end as id, p.title, p.ord,
            ${headlineSql('p.markdown', "websearch_to_tsquery('english', :q)")} as snippet,
            (select count(*) from visible)::int as visible
       from page p order by p.ord`,
    {
      types: pgArray(items.map((n) => n.itemType)),
      ids: pgArray(items.map((n) => n.itemId)),
      workspace: scope.workspaceId,
      see_restricted: seesRestricted(scope),
      offset,
      size,
      q,
    },
  );
}

/**
 * Hybrid ranking: the full-text and the embedding rankings fused by fuseRankings (weighted
 * reciprocal rank fusion, as memory search fuses), then paged like any ranking.
 * Falls back to full text only when embeddings cannot be used at all (embedder unavailable, items
 * pending); a query nothing is semantically close to fuses full text alone.
 *
 * Both rankings are asked at once (full text while the question is embedded); the semantic
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
  const [fullText, neighbours] = await Promise.all([
    fullTextRows(ctx, scope, q, depth, 0, false),
    semanticNeighbours(ctx, scope.workspaceId, q, depth, SEARCHED),
  ]);
  if ('reason' in neighbours) return neighbours;
  const fullTextRanking = fullText.slice(0, depth).map((r) => ({ itemType: r.type, itemId: Number(r.item_id) }));
  const semanticRanking = neighbours.length ? await visibleInOrder(ctx, scope, neighbours) : [];
  const fused = fuseRankings(fullTextRanking, semanticRanking, (i) => `${i.itemType} ${i.itemId}`);
  const pageItems = fused.slice(offset, offset + size);
  if (!pageItems.length) return { items: [], nextCursor: null };
  const rows = await visibleHits(
    ctx,
    scope,
    q,
    pageItems.map((f) => f.item),
    0,
    size,
  );
  const hits = rows.map((r) => ({ ...r, score: pageItems[Number(r.ord) - 1].score }));
  return page(scope, hits, size, offset, 'hybrid', fused.length > offset + size);
}

/** Of `items` (in their order), those this key may see, in the same order. */
async function visibleInOrder(ctx: RequestContext, scope: Scope, items: { itemType: ItemType; itemId: number }[]) {
  const rows = await sql<{ type: ItemType; id: number }>(
    ctx.db,
    `with n as (select * from unnest(:types::text[], :ids::int[]) with ordinality as n(type, id, ord))
     select v.type, v.id from (${visibleItems()}) v order by v.ord`,
    {
      types: pgArray(items.map((n) => n.itemType)),
      ids: pgArray(items.map((n) => n.itemId)),
      workspace: scope.workspaceId,
      see_restricted: seesRestricted(scope),
    },
  );
  return rows.map((r) => ({ itemType: r.type, itemId: Number(r.id) }));
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

/** A hit as the search statements give it. */
interface HitRow {
  type: 'article' | 'changelog';
  item_id: number;
  slug: string | null;
  id: number | null;
  title: string;
  score: string | number;
  snippet: string | null;
}

/** A page of hits: `more` says whether another page follows; `asked` is the ranking the request asked for (see searchCursor). */
function page(scope: Scope, rows: HitRow[], size: number, offset: number, ranking: Ranking, more: boolean, asked: SearchMode = ranking) {
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
  await sqlRelaxed(
    ctx.db,
    `with logged as (
       insert into search_log (workspace_id, agent_key_id, query, result_count, ranking, duration_ms, created_at) values (?, ?, ?, ?, ?, ?, ?) returning id)
     ${ENQUEUE_EMBEDDING('search', 'select id, ?::uuid from logged where ?::boolean')}`,
    [scope.workspaceId, scope.agent.keyId, q, result.items.length, result.ranking, durationMs, new Date(), scope.workspaceId, gap],
  );
  if (gap) signalEmbeddingWork();
}
