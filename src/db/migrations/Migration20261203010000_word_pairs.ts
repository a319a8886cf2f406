import { Migration } from '@mikro-orm/migrations';

/**
 * An index of the adjacent word pairs of each article, so that a phrase query reads only the
 * articles that hold its pairs of words next to each other instead of every article that holds its
 * words anywhere (at 100,000 articles, `"domain event"` rechecked 6,435 articles for 58 matches).
 *
 * `wks_word_pairs(search)`: the lexemes at positions p and p + 1 of a search vector, as lexemes
 * "a b". It reads the positions stored in the vector, the same ones the phrase operator reads, so
 * an article matching `'a' <-> 'b'` always has the pair "a b" (the index only narrows, the vector
 * still decides). `wks_phrase_pairs(q)`: the pairs a query requires (its `<->` between two
 * lexemes) as a query of the pairs joined by `&`; null when it requires none, or when its shape is
 * not a plain conjunction (or, not, parentheses, prefixes, weights), where no pair is required.
 *
 * Writes pay for it: the pairs are computed once per written row (a window over the positions,
 * a quarter cheaper than joining them), and new pairs wait in the index's pending list until
 * 512 kB of them are merged at once (a search reads the pending list whole, so it stays small). On
 * the embedded database (WebAssembly: `version()` names emscripten) that merge runs inside a write,
 * on the event loop, which may stall at most 50 ms: there 512 kB took ~20 ms more than a plain
 * write of pages, 2 MB up to ~65 ms more, 128 kB ~10 ms, so it merges at 128 kB. A server merging at
 * 128 kB took 6 min 16 s instead of 3 min 32 s to bulk-load the bench's 99,800 articles.
 */
export class Migration20261203010000_word_pairs extends Migration {
  override up(): void {
    this.addSql(`create or replace function wks_word_pairs(v tsvector) returns tsvector
      language sql immutable strict parallel safe cost 1000 as $$
        select coalesce(array_to_tsvector(array_agg(l || ' ' || n)), ''::tsvector) from (
          select u.lexeme as l, lead(u.lexeme) over w as n, p, lead(p) over w as np
            from unnest(v) u, unnest(u.positions) p window w as (order by p)) x
         where np = p + 1
      $$;`);
    this.addSql(`create or replace function wks_phrase_pairs(q tsquery) returns tsquery
      language sql immutable strict parallel safe as $$
        with tokens as (
          select m[1] as tok, n from regexp_matches(q::text, '(''(?:[^'']|'''')*''|<->|<[0-9]+>|[&|!():*])', 'g') with ordinality as r(m, n)),
        pairs as (
          select a.tok as l, c.tok as r from tokens a join tokens b on b.n = a.n + 1 join tokens c on c.n = a.n + 2
           where b.tok = '<->' and a.tok like '''%' and c.tok like '''%')
        select case when not exists (select 1 from tokens where tok in ('|', '!', '(', ')', ':', '*'))
          then (select string_agg('''' || substr(l, 2, length(l) - 2) || ' ' || substr(r, 2, length(r) - 2) || '''', ' & ')::tsquery from pairs) end
      $$;`);
    this.addSql(`do $$ begin
      execute format('create index "articles_word_pairs_idx" on "articles" using gin (wks_word_pairs("search")) with (gin_pending_list_limit = %s)',
        case when version() like '%emscripten%' then 128 else 512 end);
    end $$;`);
  }

  override down(): void {
    this.addSql('drop index if exists "articles_word_pairs_idx";');
    this.addSql('drop function if exists wks_phrase_pairs(tsquery);');
    this.addSql('drop function if exists wks_word_pairs(tsvector);');
  }
}
