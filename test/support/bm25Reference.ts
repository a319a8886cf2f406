import { freshEm } from '../../src/db/orm.js';
import { sql } from '../../src/db/sql.js';
import type { TestApp } from './app.js';

/**
 * BM25F computed a second way, in SQL straight from the search columns, to hold the service's
 * ranking to: idf ln(1 + (N − df + 0.5)/(df + 0.5)) over the items the reader may see, each
 * position weighing 2 in a title (A), 1.5 in an article's headings (B), 1 elsewhere, saturated by
 * k1 = 1.2 with length normalisation b = 0.75 (an article's length leaves its heading copies out),
 * a query word said n times weighing 5n / (n + 4). Answers `type:id` keys and scores, best first
 * (ties by type, then id), over every match of any of the question's plain words.
 */
export async function bm25Reference(
  app: TestApp,
  workspaceId: string,
  words: string,
  seesRestricted = true,
): Promise<{ key: string; score: number }[]> {
  const rows = await sql<{ key: string; score: number }>(
    freshEm(app.server.orm),
    `with docs as (
       select 'article' as t, a.id, a.slug as key, a.search,
              (select count(*) from unnest(a.search) u, unnest(u.weights) w where w <> 'B') as len
         from articles a join sections s on s.id = a.section_id
        where a.workspace_id = :w and a.status <> 'ARCHIVED' and (:all or (a.visibility = 'public' and s.visibility = 'public'))
       union all
       select 'changelog', c.id, 'changelog:' || c.id, c.search, (select count(*) from unnest(c.search) u, unnest(u.weights) w)
         from changelog_entries c where c.workspace_id = :w and c.status = 'published'),
     stats as (select count(*)::float8 as n, avg(len)::float8 as avgdl from docs),
     q as (select u.lexeme, array_length(u.positions, 1) as n from unnest(to_tsvector('english', :q)) u),
     tf as (
       select d.t, d.id, d.key, d.len, u.lexeme,
              sum(case when w = 'A' then 2 when w = 'B' and d.t = 'article' then 1.5 else 1 end)::float8 as tfw
         from docs d, unnest(d.search) u, unnest(u.weights) w
        where u.lexeme in (select lexeme from q) group by 1, 2, 3, 4, 5),
     df as (select lexeme, count(*)::float8 as df from tf group by lexeme)
     select tf.key,
            sum((5.0 * q.n / (q.n + 4)) * ln(1 + (stats.n - df.df + 0.5) / (df.df + 0.5)) * tf.tfw * 2.2
                / (tf.tfw + 1.2 * (1 - 0.75 + 0.75 * tf.len / stats.avgdl))) as score
       from tf join df using (lexeme) join q using (lexeme), stats
      group by tf.t, tf.id, tf.key
      order by score desc, tf.t, tf.id`,
    { w: workspaceId, q: words, all: seesRestricted },
  );
  return rows.map((r) => ({ key: r.key, score: Number(r.score) }));
}
