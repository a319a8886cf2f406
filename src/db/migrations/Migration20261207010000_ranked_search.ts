import { Migration } from '@mikro-orm/migrations';

/** The articles' search column: title (A), the heading lines (B, a copy: their words are in the Markdown too) and the Markdown (D). */
export const ARTICLE_SEARCH_EXPRESSION =
  "((setweight(to_tsvector('english'::regconfig, title), 'A'::\"char\") || setweight(to_tsvector('english'::regconfig, " +
  "regexp_replace(markdown, '^[^#].*$'::text, ''::text, 'gn'::text)), 'B'::\"char\")) || setweight(to_tsvector('english'::regconfig, markdown), 'D'::\"char\"))";

const SEARCHED = ['articles', 'changelog_entries', 'memory_notes'] as const;
const TYPE_OF: Record<(typeof SEARCHED)[number], string> = { articles: 'article', changelog_entries: 'changelog', memory_notes: 'note' };
/** The columns whose change changes what search holds of a row (its terms, or who may find it). */
const WATCHED: Record<(typeof SEARCHED)[number] | 'sections', string[]> = {
  articles: ['title', 'markdown', 'status', 'visibility', 'section_id'],
  changelog_entries: ['title', 'markdown', 'status'],
  memory_notes: ['path', 'tags', 'body'],
  sections: ['visibility'],
};

/**
 * Ranked retrieval (BM25F) keeps each workspace's terms in process (src/search/termIndex.ts) and
 * catches up with what other processes wrote from the database before every search:
 *
 * - `search_xid` on every searched row and on sections: the transaction that last changed what
 *   search holds of it (its default on insert; a trigger on update, only when a watched column
 *   changed). A process reads the rows whose `search_xid` is at or past the oldest transaction
 *   still running when it last read (the snapshot's xmin), so a commit it has not seen is never
 *   behind it, as the webhook dispatcher reads events.
 * - `search_removals`: a row per deleted item (a statement trigger over the deleted rows), read the
 *   same way; kept a day (the retention job), past which a process reloads the workspace whole.
 * - The articles' search column gains the heading lines under weight B, so BM25F can weigh title,
 *   headings and body apart; its indexes are built again on the new column.
 */
export class Migration20261207010000_ranked_search extends Migration {
  override up(): void {
    this.addSql(`create or replace function wks_search_touched() returns trigger language plpgsql as $$
      begin new.search_xid := pg_current_xact_id(); return new; end $$;`);
    for (const table of [...SEARCHED, 'sections'] as const) {
      this.addSql(`alter table "${table}" add column "search_xid" xid8 not null default pg_current_xact_id();`);
      this.addSql(`create index "${table}_search_xid_idx" on "${table}" ("workspace_id", "search_xid");`);
      const changed = WATCHED[table].map((c) => `old."${c}" is distinct from new."${c}"`).join(' or ');
      this.addSql(`create trigger "${table}_search_touched" before update on "${table}" for each row
        when (${changed}) execute function wks_search_touched();`);
    }
    this.addSql(`create table "search_removals" ("workspace_id" uuid not null, "item_type" text not null, "item_id" int not null,
      "xid" xid8 not null default pg_current_xact_id(), "removed_at" timestamptz not null default now());`);
    this.addSql('create index "search_removals_workspace_xid_idx" on "search_removals" ("workspace_id", "xid");');
    this.addSql('create index "search_removals_removed_at_idx" on "search_removals" ("removed_at");');
    for (const table of SEARCHED) {
      this.addSql(`create or replace function "wks_${table}_removed"() returns trigger language plpgsql as $$
        begin
          insert into search_removals (workspace_id, item_type, item_id) select workspace_id, '${TYPE_OF[table]}', id from gone;
          return null;
        end $$;`);
      this.addSql(`create trigger "${table}_search_removed" after delete on "${table}" referencing old table as gone
        for each statement execute function "wks_${table}_removed"();`);
    }
    this.addSql('drop index if exists "articles_word_pairs_idx";');
    this.addSql('drop index if exists "articles_search_idx";');
    this.addSql('alter table "articles" drop column "search";');
    this.addSql(`alter table "articles" add column "search" tsvector generated always as (${ARTICLE_SEARCH_EXPRESSION}) stored;`);
    this.addSql('create index "articles_search_idx" on "articles" using gin ("search");');
    this.addSql(`do $$ begin
      execute format('create index "articles_word_pairs_idx" on "articles" using gin (wks_word_pairs("search")) with (gin_pending_list_limit = %s)',
        case when version() like '%emscripten%' then 128 else 512 end);
    end $$;`);
  }

  override down(): void {
    for (const table of SEARCHED) {
      this.addSql(`drop trigger if exists "${table}_search_removed" on "${table}";`);
      this.addSql(`drop function if exists "wks_${table}_removed"();`);
    }
    this.addSql('drop table if exists "search_removals";');
    for (const table of [...SEARCHED, 'sections']) {
      this.addSql(`drop trigger if exists "${table}_search_touched" on "${table}";`);
      this.addSql(`alter table "${table}" drop column if exists "search_xid";`);
    }
    this.addSql('drop function if exists wks_search_touched();');
  }
}
