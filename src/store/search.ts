/** Search's statements over articles and changelog entries: which ranked items a key may see (with their titles and snippets), and the suggestions' reads. */
import { articleVisible } from './visibility.js';
import { pgArray, sql, type SqlTarget } from '../db/sql.js';
import type { ItemType } from './embeddings.js';
import { headlineSql } from './headline.js';

/** A hit as the search statements give it. */
export interface HitRow {
  type: 'article' | 'changelog';
  item_id: number;
  slug: string | null;
  id: number | null;
  title: string;
  snippet: string | null;
}

/** Who is searching where: the workspace, and whether restricted articles count (see seesRestricted). */
export interface SearchScope {
  workspaceId: string;
  seeRestricted: boolean;
}

/** Items in some order, by type and id; `passage`: the passage that matched (its Markdown is the hit's snippet). */
export type RankedItems = { itemType: ItemType; itemId: number; passage?: number | null }[];

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
 * of the item's Markdown; matches of `tsquery` (a tsquery constant, or null for none) marked.
 */
export function visibleHits(
  db: SqlTarget,
  who: SearchScope,
  tsquery: string | null,
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
            ${headlineSql('coalesce(e.passage_text, p.markdown)', "coalesce(:tsquery::tsquery, ''::tsquery)")} as snippet,
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
      tsquery,
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
