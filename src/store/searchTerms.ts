/**
 * Statements of ranked retrieval (src/search/fullText.ts): what changed in a workspace's searched
 * rows since a process last read them, those rows' terms, the lexemes of a query's words, and the
 * items holding a phrase. Every statement is bounded by one workspace.
 */
import { pgArray, sql, type SqlTarget } from '../db/sql.js';

/** Workspace search holds articles and changelog entries; memory search holds notes. */
export type Corpus = 'content' | 'notes';

/** A searched row as the index reads it: its type and id, its writing transaction, who may read it, and its terms (null: not searchable now). */
export interface TermRow {
  type: 'article' | 'changelog' | 'note' | 'section' | 'removed';
  /** For a removal: the removed item's type. */
  removed_type: 'article' | 'changelog' | 'note' | null;
  id: number;
  xid: string;
  section: number | null;
  restricted: boolean;
  /** Searchable now (an article not archived, a published entry, any note). */
  live: boolean;
}

/** The searched tables of each corpus, with what makes a row searchable and who may read it. */
const ROWS = {
  content: [
    {
      type: 'article',
      from: 'articles t',
      live: `t.status <> 'ARCHIVED'`,
      section: 't.section_id',
      restricted: `t.visibility = 'restricted'`,
    },
    { type: 'changelog', from: 'changelog_entries t', live: `t.status = 'published'`, section: 'null::int', restricted: 'false' },
  ],
  notes: [{ type: 'note', from: 'memory_notes t', live: 'true', section: 'null::int', restricted: 'false' }],
} as const;

/** The oldest transaction still running (the snapshot's xmin): every change by an older one is visible now. */
const HORIZON = 'pg_snapshot_xmin(pg_current_snapshot())::text';

/**
 * What changed in a corpus of `workspace` since `since` (an earlier HORIZON): the rows written by
 * a transaction at or past it (without their terms), the sections whose visibility changed (content
 * only), the items removed; and the horizon now, to pass next time. One statement, one snapshot.
 */
export async function changesSince(
  db: SqlTarget,
  workspace: string,
  corpus: Corpus,
  since: string,
): Promise<{ rows: TermRow[]; horizon: string }> {
  const parts = ROWS[corpus].map(
    (r) => `select '${r.type}' as type, null as removed_type, t.id, t.search_xid::text as xid, ${r.section} as section,
                   ${r.restricted} as restricted, ${r.live} as live
              from ${r.from} where t.workspace_id = :workspace and t.search_xid >= :since::xid8`,
  );
  if (corpus === 'content')
    parts.push(`select 'section', null, s.id, s.search_xid::text, null, s.visibility = 'restricted', true
                  from sections s where s.workspace_id = :workspace and s.search_xid >= :since::xid8`);
  parts.push(`select 'removed', r.item_type, r.item_id, r.xid::text, null, false, false
                from search_removals r where r.workspace_id = :workspace and r.xid >= :since::xid8 and r.item_type = any(:types::text[])`);
  parts.push(`select 'horizon', null, 0, ${HORIZON}, null, false, false`);
  const rows = await sql<TermRow>(db, parts.join('\nunion all\n'), {
    workspace,
    since,
    types: pgArray(ROWS[corpus].map((r) => r.type)),
  });
  const horizon = rows.pop()!.xid;
  return { rows, horizon };
}

/** The horizon now (see changesSince): read before a full load. */
export async function searchHorizon(db: SqlTarget): Promise<string> {
  const [row] = await sql<{ horizon: string }>(db, `select ${HORIZON} as horizon`);
  return row.horizon;
}

/** A searchable row with its terms (its search column as PostgreSQL prints it; null when it is not searchable now). */
export type TermsRow = Omit<TermRow, 'removed_type'> & { terms: string | null };

/** SQL: the rows of one searched table with their terms, where `where` holds. */
const termRows = (r: (typeof ROWS)[Corpus][number], where: string) =>
  `select '${r.type}' as type, t.id, t.search_xid::text as xid, ${r.section} as section, ${r.restricted} as restricted,
          ${r.live} as live, case when ${r.live} then t.search::text end as terms
     from ${r.from} where t.workspace_id = :workspace and ${where}`;

/** The rows of a corpus named by `ids` (per type), with their terms. */
export async function termsByIds(db: SqlTarget, workspace: string, corpus: Corpus, ids: Record<string, number[]>): Promise<TermsRow[]> {
  const tables = ROWS[corpus].filter((r) => ids[r.type]?.length);
  if (!tables.length) return [];
  const params: Record<string, unknown> = { workspace };
  for (const r of tables) params[`ids_${r.type}`] = pgArray(ids[r.type]);
  return sql<TermsRow>(db, tables.map((r) => termRows(r, `t.id = any(:ids_${r.type}::int[])`)).join('\nunion all\n'), params);
}

/** The searchable rows of one type of a corpus past id `after`, in id order, at most `limit` (a full load reads in batches). */
export async function termsPage(
  db: SqlTarget,
  workspace: string,
  corpus: Corpus,
  type: string,
  after: number,
  limit: number,
): Promise<TermsRow[]> {
  const r = ROWS[corpus].find((t) => t.type === type)!;
  return sql<TermsRow>(db, `${termRows(r, `${r.live} and t.id > :after`)} order by t.id limit :limit`, { workspace, after, limit });
}

/** The types of item a corpus holds. */
export const typesOf = (corpus: Corpus): string[] => ROWS[corpus].map((r) => r.type);

/** A workspace's sections and whether each is restricted. */
export function sectionVisibility(db: SqlTarget, workspace: string): Promise<{ id: number; restricted: boolean }[]> {
  return sql(db, `select id, visibility = 'restricted' as restricted from sections where workspace_id = ?`, [workspace]);
}

/** Each text's lexemes as PostgreSQL's English configuration makes them (its tsvector as printed: lexemes with positions). */
export async function lexemesOf(db: SqlTarget, texts: string[]): Promise<string[]> {
  if (!texts.length) return [];
  const rows = await sql<{ v: string }>(
    db,
    `select to_tsvector('english'::regconfig, t)::text as v from unnest(?::text[]) with ordinality as u(t, n) order by n`,
    [pgArray(texts)],
  );
  return rows.map((r) => r.v);
}

/**
 * SQL: row `t` holds the phrase of tsquery expression `q`. An article is first looked up by the
 * adjacent word pairs the phrase requires (the index of the word_pairs migration) and only then
 * checked against the phrase (`coalesce` keeps the search index, whose phrase matches are all
 * rechecked, out of that lookup): at 100,000 articles `"domain event"` reads its 58 matches instead
 * of the 6,435 articles holding both words. The phrase is a parameter of an unnamed statement, so
 * the plan is made for its value and drops the branch that does not apply.
 */
function holds(table: string, q: string): string {
  if (table !== 'articles t') return `t.search @@ ${q}`;
  const pairs = `wks_phrase_pairs(${q})`;
  return `((${pairs} is null and t.search @@ ${q})
          or (${pairs} is not null and wks_word_pairs(t.search) @@ ${pairs} and coalesce(t.search, ''::tsvector) @@ ${q}))`;
}

/**
 * The items of a corpus (searchable now, whoever may read them: the index decides that) holding
 * one phrase of every group (a phrase of stop words alone holds everywhere), or, with `any`,
 * holding any phrase of any group.
 */
export async function phraseHolders(
  db: SqlTarget,
  workspace: string,
  corpus: Corpus,
  groups: string[][],
  any = false,
): Promise<{ type: string; id: number }[]> {
  let n = 0;
  const queries = groups.map((g) => g.map(() => `phraseto_tsquery('english'::regconfig, :p${n++})`));
  const condition = (table: string) => {
    const alternatives = (g: string[]) => g.map((q) => holds(table, q)).join(' or ');
    if (any) return `(${queries.map(alternatives).join(' or ')})`;
    // A group whose every alternative is stop words alone holds everywhere.
    return queries.map((g) => `(${g.map((q) => `numnode(${q}) = 0`).join(' and ')} or ${alternatives(g)})`).join(' and ');
  };
  const parts = ROWS[corpus].map(
    (r) => `select '${r.type}' as type, t.id from ${r.from} where t.workspace_id = :workspace and ${r.live} and ${condition(r.from)}`,
  );
  const params: Record<string, unknown> = { workspace };
  groups.flat().forEach((p, i) => (params[`p${i}`] = p));
  return sql<{ type: string; id: number }>(db, parts.join('\nunion all\n'), params);
}

/** How long removals are kept: a process that has not caught up for longer loads a workspace whole (see FullTextIndexes). */
export const REMOVALS_KEPT_DAYS = 1;

/** Deletes up to `batch` removals older than `days` days; how many it deleted. */
export async function deleteOldRemovals(db: SqlTarget, days: number, batch: number): Promise<number> {
  const [row] = await sql<{ n: number }>(
    db,
    `with doomed as (select ctid from search_removals where removed_at < now() - make_interval(days => :days::int) limit :batch),
          gone as (delete from search_removals r using doomed d where r.ctid = d.ctid returning 1)
     select count(*)::int as n from gone`,
    { days, batch },
  );
  return row?.n ?? 0;
}
