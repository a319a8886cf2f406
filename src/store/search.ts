/** Search's statements over articles and changelog entries: the full-text ranking, which ranked items a key may see, and the suggestions' reads. */
import { articleVisible } from './visibility.js';
import { pgArray, runsConcurrently, sql, type SqlTarget } from '../db/sql.js';
import type { ItemType } from './embeddings.js';
import { headlineSql } from './headline.js';

/** A hit as the search statements give it. */
export interface HitRow {
  type: 'article' | 'changelog';
  item_id: number;
  slug: string | null;
  id: number | null;
  title: string;
  score: string | number;
  snippet: string | null;
}

/** Who is searching where: the workspace, and whether restricted articles count (see seesRestricted). */
export interface SearchScope {
  workspaceId: string;
  seeRestricted: boolean;
}

/** Items in some order, by type and id; `passage`: the passage that matched (its Markdown is the hit's snippet). */
export type RankedItems = { itemType: ItemType; itemId: number; passage?: number | null }[];

const FULL_TEXT_QUERY = `websearch_to_tsquery('english', :q)`;
const TITLE_MATCHES = (t: string) => `to_tsvector('english'::regconfig, ${t}.title) @@ ${FULL_TEXT_QUERY}`;
/**
 * Row `t` (an article, or a changelog entry) matches the query. An article matching a phrase is
 * looked up by the adjacent word pairs the phrase requires (the index of the word_pairs migration)
 * and only then checked against the query (`coalesce` keeps the search index, whose phrase matches
 * are all rechecked, out of that lookup): at 100,000 articles, `"domain event"` reads its 58
 * matches instead of rechecking the 6,435 articles that hold both words. For any other query the
 * pairs are null, and the condition is the plain match once the statement is planned (the query is
 * a constant then, so the planner drops the branch that does not apply).
 */
const PHRASE_PAIRS = `wks_phrase_pairs(${FULL_TEXT_QUERY})`;
const MATCHES = (t: 'a' | 'c') =>
  t === 'a'
    ? `((${PHRASE_PAIRS} is null and a.search @@ ${FULL_TEXT_QUERY})
         or (${PHRASE_PAIRS} is not null and wks_word_pairs(a.search) @@ ${PHRASE_PAIRS} and coalesce(a.search, ''::tsvector) @@ ${FULL_TEXT_QUERY}))`
    : `c.search @@ ${FULL_TEXT_QUERY}`;
/** Any word of the query (`:any_q`, see anyWord), in the title or in a heading (the GIN indexes of the passages migration). */
const ANY_WORD = `websearch_to_tsquery('english', :any_q)`;
const TITLE_HAS_ANY = (t: string) => `to_tsvector('english'::regconfig, ${t}.title) @@ ${ANY_WORD}`;
/** A document's Markdown headings (its lines that start with `#`), exactly as the expression indexes of the passages migration have them. */
export const HEADINGS = (t: string) => `to_tsvector('english'::regconfig, regexp_replace(${t}.markdown, '^[^#].*$', '', 'gn'))`;
const HEADING_HAS_ANY = (t: string) => `${HEADINGS(t)} @@ ${ANY_WORD}`;

/** A websearch query for any word of `q` (its words that are not excluded, joined by `or`). */
export function anyWord(q: string): string {
  const words = q
    .replace(/"/g, ' ')
    .split(/\s+/)
    .filter((w) => w && !w.startsWith('-') && w.toLowerCase() !== 'or');
  return words.join(' or ');
}

/** SQL: the articles and published entries of `:workspace` that `where` admits with their ts_rank, best first unless `unordered`. */
const fullTextMatches = (where: (table: 'a' | 'c') => string, options: { unordered?: boolean } = {}) => {
  const query = FULL_TEXT_QUERY;
  return `
       select 'article' as type, a.id as item_id, ts_rank(a.search, ${query}) as score, a.title, a.slug
         from articles a join sections s on s.id = a.section_id
        where ${where('a')} and a.workspace_id = :workspace and a.status <> 'ARCHIVED' and ${articleVisible('a', 's', ':see_restricted')}
       union all
       select 'changelog', c.id, ts_rank(c.search, ${query}), c.title, null
         from changelog_entries c
        where ${where('c')} and c.workspace_id = :workspace and c.status = 'published'
       ${options.unordered ? '' : 'order by score desc, title, slug, item_id'}`;
};

/** A full-text hit row, and whether its ranking was bounded (see fullTextHits). */
export type FullTextRow = HitRow & { bounded: boolean };

/**
 * The full-text ranking's rows from `offset`, best first (ts_rank over title A and markdown B):
 * `size` of them and one more, with snippets when asked. Three ways, the first that applies:
 *
 * 1. A query of one word has a shortcut that gives exactly the same answer: with ts_rank's
 *    default weights, a document with the word in its title (weight A, the first positions)
 *    scores at least 1/1.645 ≈ 0.61, one with it only in the body (weight B) less than 0.4. So
 *    when enough titles contain the word to fill the page, the page is found among those titles
 *    alone (a small GIN index on the titles) instead of ranking every matching document. Titles
 *    are read up to the cap and one more: more titles than the cap means more matches than the
 *    cap, so the third way (at 100,000 articles, a word in 4,186 titles took 35 ms to rank them
 *    all exactly).
 * 2. A query matching at most `cap` documents (this key may see) is ranked exactly: every match.
 * 3. A query matching more is ranked over a bounded candidate set (`bounded` is then true on
 *    every row), chosen by this rule: of the documents that match the query, first those whose
 *    title matches it, then those whose title holds any of its words, then those whose headings
 *    hold any of its words, then the rest in the order the scan finds them, up to
 *    BOUNDED_CANDIDATES (or `cap`, if lower) in all; those are ranked by ts_rank. The first three
 *    tiers are each a small GIN index lookup (titles; headings: the expression indexes of the
 *    passages migration) whose rows are checked one by one and cut at the candidate count; the
 *    last is read only as far as the first three leave room. So the cost no longer grows with
 *    the number of matches (ranking every match of a common word took ~150 ms at 100,000 articles).
 *    `npm run eval:search` checks the rule by forcing the cap down to 50. Pages end at the last
 *    candidate.
 *
 * The tsquery is written inline (not in a CTE) so the planner sees its value: a common word is
 * then a sequential scan, a rare one the GIN index, and a query of several words drops the
 * shortcut at plan time. The unused ways are cut at run time by their one-time filters. Ranking
 * runs on narrow rows; snippets are made for the page only. The matches are read once, up to
 * `cap` + 1 of them with their rank, so counting and ranking them is one index scan, not two (at
 * 10,000 articles, a word in a thousand of them took 15 ms, 9 of them in the count). The bounded
 * ranking is a second statement, needed only when the first finds more matches than the cap; it
 * is sent beside the first when the planner expects that (see expectedBroad), else after it. At
 * 100,000 articles, a query past the cap spends ~10 ms in each (planning included), so sending
 * them together halves its wait.
 */
export async function fullTextHits(
  db: SqlTarget,
  who: SearchScope,
  args: { q: string; size: number; offset: number; snippets: boolean; cap: number },
): Promise<FullTextRow[]> {
  const { q, size, offset, snippets, cap } = args;
  const params = {
    q,
    workspace: who.workspaceId,
    see_restricted: who.seeRestricted,
    needed: offset + size + 1, // the page, and one more to know whether another page follows
    offset,
    page_and_one: size + 1,
    size,
    snippets,
    cap,
    candidates: Math.min(cap, BOUNDED_CANDIDATES),
    any_q: anyWord(q),
  };
  // An estimate that fails only means the bounded ranking, if needed, is sent after the exact
  // statement; one that comes after an exact answer sends nothing.
  let answered = false;
  const early = expectedBroad(db, params)
    .catch(() => false)
    .then((broad) => {
      if (!broad || answered) return null;
      boundedStatements.sentEarly++;
      return sql<FullTextRow>(db, BOUNDED_HITS, params);
    });
  early.catch(() => undefined); // its error is seen where it is awaited, if it ever is
  const rows = await sql<FullTextRow>(db, EXACT_HITS, params);
  answered = !rows[0]?.bounded;
  if (answered) return rows;
  const sent = await early;
  if (sent) boundedStatements.usedEarly++;
  else boundedStatements.sentAfter++;
  return sent ?? sql<FullTextRow>(db, BOUNDED_HITS, params);
}

/** The bounded rankings this process sent beside the exact statement (and how many of those it used), and after it (for /metrics). */
export const boundedStatements = { sentEarly: 0, usedEarly: 0, sentAfter: 0 };

/**
 * Whether to send the bounded ranking beside the exact statement instead of after it: when the
 * planner expects the query to match more than EARLY_SHARE of the cap in the workspace (its
 * estimate, from the statistics of the search column, was within 6 % of the true count on the
 * bench's queries at 100,000 articles and 3 % at 10,000). The exact statement still decides which
 * answer is given, so the estimate changes only when the bounded ranking is sent (a wrong guess
 * costs its database time, never the answer). Only where two statements run at once, and not for
 * a phrase, whose estimate is that of its words anywhere in a document (at 100,000 articles, 6,557
 * expected for a phrase found in 58). A query of one word is expected past the cap when its title
 * matches alone are (the title shortcut then stops at the cap), or when too few titles match for
 * the shortcut and its matches are. The estimate runs beside the exact statement too, so it adds
 * no wait to any query.
 */
async function expectedBroad(db: SqlTarget, params: { q: string; workspace: string; cap: number; needed: number }): Promise<boolean> {
  const { q, workspace, cap } = params;
  if (!runsConcurrently(db) || q.includes('"')) return false;
  const expected = async (text: string) => {
    const [plan] = await sql<{ 'QUERY PLAN': [{ Plan: { 'Plan Rows': number } }] }>(db, text, { q, workspace });
    return plan['QUERY PLAN'][0].Plan['Plan Rows'];
  };
  if (/\S\s+\S/.test(q.trim())) return (await expected(EXPECTED_MATCHES)) > cap * EARLY_SHARE;
  // One word: past the cap in titles alone, or too few titles for the shortcut and past it in all.
  const titles = await expected(EXPECTED_TITLE_MATCHES);
  if (titles > cap * EARLY_SHARE) return true;
  return titles < params.needed && (await expected(EXPECTED_MATCHES)) > cap * EARLY_SHARE;
}

/**
 * The share of the cap past which the planner's estimate sends the bounded ranking early. At half
 * the cap, 24 of the bench's 192 questions at 10,000 articles sent it for nothing (matching
 * 1,000–2,000); at nine tenths, 1 (1,796). The estimate counts matches this key may not see
 * (archived, restricted), so it errs high, and a miss only sends the bounded ranking after.
 */
const EARLY_SHARE = 0.9;

const EXPECTED_MATCHES = `explain (format json) select 1 from articles a where a.workspace_id = :workspace and a.search @@ ${FULL_TEXT_QUERY}`;
const EXPECTED_TITLE_MATCHES = `explain (format json) select 1 from articles a where a.workspace_id = :workspace and ${TITLE_MATCHES('a')}`;

/** The candidates of a bounded ranking: at most this many, or the cap when it is lower (see fullTextHits). */
const BOUNDED_CANDIDATES = 300;

/**
 * SQL: the rows of the CTE `hits` numbered in ranking order, the first `:size` with snippets when
 * asked, titles and slugs. `sample`: the rows are the exact statement's, whose one row past the
 * cap (marked `bounded`) needs no snippet (nor the Markdown it is made from).
 */
const withSnippets = (hits: string, sample = false) => {
  const joined = sample ? 'case when not h.bounded then h.item_id end' : 'h.item_id';
  return `${hits},
     numbered as (select h.*, row_number() over (order by h.score desc, h.title, h.slug, h.item_id) as n from hits h)
     select h.type, h.slug, case when h.type = 'changelog' then h.item_id end as id, h.title, h.score, h.bounded,
            case when :snippets::boolean and h.n <= :size then ${headlineSql('coalesce(a.markdown, c.markdown)', FULL_TEXT_QUERY)} end as snippet,
            h.item_id
       from numbered h
       left join articles a on h.type = 'article' and a.id = ${joined}
       left join changelog_entries c on h.type = 'changelog' and c.id = ${joined}
      order by h.n`;
};

/**
 * The first two ways of fullTextHits in one statement (the title shortcut, else every match up to
 * the cap ranked); when the query matches more than the cap, one row marked `bounded` (no
 * snippet) instead. The bounded ranking is a statement of its own (BOUNDED_HITS), whose answer is
 * used only then: planning the three ways together cost every query ~3 ms, a third of a typical
 * one at 10,000 articles.
 */
const EXACT_HITS = (() => {
  const query = FULL_TEXT_QUERY;
  const titles = '(select n from title_count)';
  return withSnippets(
    `with title_all as materialized (
       ${fullTextMatches((t) => `numnode(${query}) = 1 and ${TITLE_MATCHES(t)}`, { unordered: true })} limit :cap + 1),
     title_count as (select count(*) as n from title_all),
     title_hits as (select * from title_all order by score desc, title, slug, item_id limit :needed),
     matches as materialized (${fullTextMatches((t) => `${titles} < :needed and ${MATCHES(t)}`, { unordered: true })} limit :cap + 1),
     matched as (select count(*) as n from matches),
     hits as (
       (select *, false as bounded from title_hits where ${titles} between :needed and :cap order by score desc, title, slug, item_id offset :offset)
       union all
       (select *, false from matches where (select n from matched) <= :cap order by score desc, title, slug, item_id
         limit :page_and_one offset :offset)
       union all
       (select *, true from matches where (select n from matched) > :cap limit 1)
       union all
       (select *, true from title_all where ${titles} > :cap limit 1))`,
    true,
  );
})();

/**
 * SQL: up to `:candidates` (type, id, `part`, rank, title, slug) of articles and published
 * entries this key may see that `where` admits and that match the query: one tier of the bounded
 * ranking. The match is checked on each row `where` finds (coalesce keeps the planner from
 * building the search index's bitmap of every match again: that bitmap is what made each tier
 * cost ~10 ms at 100,000 articles), and the scan stops at `:candidates`.
 */
const tierHits = (part: number, where: (table: 'a' | 'c') => string) => `(
       select 'article' as type, a.id as item_id, ${part} as part, ts_rank(a.search, ${FULL_TEXT_QUERY}) as score, a.title, a.slug
         from articles a join sections s on s.id = a.section_id
        where ${where('a')} and coalesce(a.search, ''::tsvector) @@ ${FULL_TEXT_QUERY} and a.workspace_id = :workspace
          and a.status <> 'ARCHIVED' and ${articleVisible('a', 's', ':see_restricted')}
       union all
       select 'changelog', c.id, ${part}, ts_rank(c.search, ${FULL_TEXT_QUERY}), c.title, null from changelog_entries c
        where ${where('c')} and coalesce(c.search, ''::tsvector) @@ ${FULL_TEXT_QUERY} and c.workspace_id = :workspace and c.status = 'published'
       limit :candidates)`;

/**
 * The third way of fullTextHits: the page of the bounded ranking over the candidates its tiers
 * choose. The last tier (the other matches, in the order the scan finds them) is read only when
 * the first three leave room, and only as far as they leave it. For a query of one word, the
 * second tier (titles holding any of its words) is the first one again, so it is not read.
 */
const BOUNDED_HITS = withSnippets(`with tiers as (
         ${tierHits(0, (t) => TITLE_MATCHES(t))}
         union all ${tierHits(1, (t) => `numnode(${FULL_TEXT_QUERY}) <> 1 and ${TITLE_HAS_ANY(t)}`)}
         union all ${tierHits(2, (t) => HEADING_HAS_ANY(t))}),
     found as (
       select type, item_id, min(score) as score, min(title) as title, min(slug) as slug from tiers
        group by type, item_id order by min(part), type, item_id limit :candidates),
     rest as (
       select m.type, m.item_id, m.score, m.title, m.slug
         from (${fullTextMatches(MATCHES, { unordered: true })}) m
        where not exists (select 1 from found f where f.type = m.type and f.item_id = m.item_id)
        limit greatest(:candidates - (select count(*) from found), 0)),
     hits as (
       select type, item_id, score, title, slug, true as bounded from (select * from found union all select * from rest) candidates
        order by score desc, title, slug, item_id limit :page_and_one offset :offset)`);

/**
 * Hybrid search's any-word ranking (see hybridRankings): the articles and published entries this
 * key may see whose title or headings hold any word of `q` (at most BOUNDED_CANDIDATES of each, as
 * the bounded ranking's tiers find them), best first by ts_rank of the any-word query over their
 * whole text; `size` of them. One statement of small index lookups, whatever the workspace holds:
 * the words of a question together match most of a workspace (on the bench's 10,000 articles,
 * 5,285 at the median), so ranking every match would cost a bounded full-text search each time.
 * Chosen by `npm run eval:search` on its tuning questions against ranking every match of the
 * any-word query, which did no better (held out, fused with weights 1, 1, 1.5: recall@5 0.788
 * against 0.808 this way, MRR 0.631 against 0.652).
 */
export function anyWordHits(db: SqlTarget, who: SearchScope, args: { q: string; size: number }): Promise<FullTextRow[]> {
  const anyQ = anyWord(args.q);
  if (!anyQ) return Promise.resolve([]);
  return sql<FullTextRow>(db, ANY_WORD_HITS, {
    q: anyQ,
    any_q: anyQ,
    workspace: who.workspaceId,
    see_restricted: who.seeRestricted,
    candidates: BOUNDED_CANDIDATES,
    size: args.size,
  });
}

const ANY_WORD_HITS = `with tiers as (${tierHits(1, (t) => TITLE_HAS_ANY(t))} union all ${tierHits(2, (t) => HEADING_HAS_ANY(t))})
     select type, item_id, max(score) as score, min(title) as title, min(slug) as slug, false as bounded, null as snippet from tiers
      group by type, item_id order by score desc, title, slug, item_id limit :size`;

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
 * `offset` the next `size` with titles, slugs and snippets: of the passage that matched where an
 * item has one (still stored: a passage replaced meanwhile gives the item's text instead), else
 * of the item's Markdown.
 */
export function visibleHits(
  db: SqlTarget,
  who: SearchScope,
  q: string,
  items: RankedItems,
  offset: number,
  size: number,
): Promise<(HitRow & { ord: string; visible: number })[]> {
  return sql<HitRow & { ord: string; visible: number }>(
    db,
    `with n as (select * from unnest(:types::text[], :ids::int[], :passages::int[]) with ordinality as n(type, id, passage, ord)),
     visible as (${visibleItems({ article: ', n.passage, a.slug, a.title, a.markdown', changelog: ', n.passage, null, c.title, c.markdown' })}),
     page as (select * from visible order by ord offset :offset limit :size)
     select p.type, p.id as item_id, p.slug, case when p.type = 'changelog' then p.id end as id, p.title, p.ord,
            ${headlineSql('coalesce(e.passage_text, p.markdown)', "websearch_to_tsquery('english', :q)")} as snippet,
            (select count(*) from visible)::int as visible
       from page p
       left join embeddings e on p.passage is not null and e.item_type = p.type and e.item_id = p.id and e.passage = p.passage
      order by p.ord`,
    {
      types: pgArray(items.map((n) => n.itemType)),
      ids: pgArray(items.map((n) => n.itemId)),
      passages: pgArray(items.map((n) => n.passage)),
      workspace: who.workspaceId,
      see_restricted: who.seeRestricted,
      offset,
      size,
      q,
    },
  );
}

/** Of `items` (in their order), those this key may see, in the same order. */
export async function visibleInOrder(db: SqlTarget, who: SearchScope, items: RankedItems): Promise<RankedItems> {
  const rows = await sql<{ type: ItemType; id: number }>(
    db,
    `with n as (select * from unnest(:types::text[], :ids::int[]) with ordinality as n(type, id, ord))
     select v.type, v.id from (${visibleItems()}) v order by v.ord`,
    {
      types: pgArray(items.map((n) => n.itemType)),
      ids: pgArray(items.map((n) => n.itemId)),
      workspace: who.workspaceId,
      see_restricted: who.seeRestricted,
    },
  );
  return rows.map((r) => ({ itemType: r.type, itemId: Number(r.id) }));
}

/** The workspace's content revision (bigint as text): the suggestions' vocabulary is kept per revision. */
export async function contentRevision(db: SqlTarget, workspaceId: string): Promise<string> {
  const [{ revision }] = await sql<{ revision: string }>(db, 'select content_revision::text as revision from workspaces where id = ?', [
    workspaceId,
  ]);
  return revision;
}

/** The titles of the articles (not archived, visible) and published changelog entries a key may see. */
export function visibleTitles(db: SqlTarget, who: SearchScope): Promise<{ title: string }[]> {
  return sql<{ title: string }>(
    db,
    `select a.title from articles a join sections s on s.id = a.section_id
      where a.workspace_id = ? and a.status <> 'ARCHIVED' and ${articleVisible('a', 's')}
     union all
     select title from changelog_entries where workspace_id = ? and status = 'published'`,
    [who.workspaceId, who.seeRestricted, who.workspaceId],
  );
}

/**
 * For each query, in one statement: whether full text (`parser`) finds anything the caller may
 * see; with `stopWordsFound`, a query of stop words only counts as found.
 *
 * Each query is its own parameter in its own subquery, so the planner sees its value, and each
 * subquery is fenced (`offset 0`) so that it is planned as a search, not as a hunt for an early
 * match: unfenced, a word the planner cannot estimate (one no document has, typically) turned
 * into a scan of every article of the workspace (13 ms at 10,000) instead of one GIN lookup.
 */
export async function fullTextFinds(
  db: SqlTarget,
  who: SearchScope,
  queries: string[],
  parser: 'plainto_tsquery' | 'websearch_to_tsquery',
  stopWordsFound = false,
): Promise<boolean[]> {
  if (!queries.length) return [];
  const finds = (name: string) => {
    const query = `${parser}('english', :${name})`;
    return `${stopWordsFound ? `numnode(${query}) = 0 or ` : ''}exists (
        select 1 from (select a.section_id, a.visibility from articles a
                        where a.workspace_id = :workspace and a.search @@ ${query} and a.status <> 'ARCHIVED' offset 0) a
          join sections s on s.id = a.section_id
         where ${articleVisible('a', 's', ':see_restricted')})
      or exists (
        select 1 from (select from changelog_entries c
                        where c.workspace_id = :workspace and c.status = 'published' and c.search @@ ${query} offset 0) c)`;
  };
  const [row] = await sql<Record<string, boolean>>(db, `select ${queries.map((_, i) => `${finds(`q${i}`)} as found_${i}`).join(',\n')}`, {
    workspace: who.workspaceId,
    see_restricted: who.seeRestricted,
    ...Object.fromEntries(queries.map((q, i) => [`q${i}`, q])),
  });
  return queries.map((_, i) => row[`found_${i}`]);
}
