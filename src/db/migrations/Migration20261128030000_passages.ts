import { Migration } from '@mikro-orm/migrations';

/**
 * Articles, changelog entries and memory notes are embedded as passages (see src/search/passages.ts):
 * an item has one row per passage (`passage` from 0) with the Markdown the passage covers
 * (`passage_text`, the snippet of a hit on it). Questions (content gaps, searches) keep one row.
 * Items embedded before are queued again, so they get their passages. Where pgvector is enabled,
 * the HNSW search returns up to `hnsw.ef_search` rows, and a document is ranked by its best
 * passage among them: the default (40) would leave a handful of documents, so it is raised.
 * GIN indexes on documents' headings serve full text's bounded ranking (see fullTextHits).
 */
export class Migration20261128030000_passages extends Migration {
  override up(): void {
    this.addSql('alter table "embeddings" add column "passage" int not null default 0;');
    this.addSql('alter table "embeddings" add column "passage_text" text null;');
    this.addSql('alter table "embeddings" drop constraint "embeddings_pkey";');
    this.addSql('alter table "embeddings" add constraint "embeddings_pkey" primary key ("item_type", "item_id", "passage");');
    this.addSql(
      `insert into "embedding_queue" ("item_type", "item_id", "workspace_id", "enqueued_at", "claimed_until", "attempts")
       select "item_type", "item_id", "workspace_id", now(), null, 0 from "embeddings" where "item_type" in ('article', 'changelog', 'note')
       on conflict ("item_type", "item_id") do nothing;`,
    );
    // Full text's bounded ranking takes documents whose headings hold a word of the query among its first candidates.
    for (const table of ['articles', 'changelog_entries'])
      this.addSql(
        `create index if not exists "${table}_headings_search_idx" on "${table}" using gin (to_tsvector('english'::regconfig, regexp_replace(markdown, '^[^#].*$', '', 'gn')));`,
      );
    // JIT compilation starts above a planner cost of 100,000, which the search statements reach at
    // 100,000 articles (their unused branches count): compiling took ~200 ms of a ~40 ms query.
    this.addSql(`do $$ begin
      execute format('alter database %I set jit = off', current_database());
    exception when others then
      raise notice 'jit not switched off for the database: %', sqlerrm;
    end $$;`);
    this.addSql(`do $$ begin
      if exists (select 1 from pg_extension where extname = 'vector') then
        execute format('alter database %I set hnsw.ef_search = 1000', current_database());
      end if;
    exception when others then
      raise notice 'hnsw.ef_search not set for the database: %', sqlerrm;
    end $$;`);
  }

  override down(): void {
    this.addSql(`do $$ begin execute format('alter database %I reset jit', current_database()); exception when others then null; end $$;`);
    this.addSql('drop index if exists "articles_headings_search_idx";');
    this.addSql('drop index if exists "changelog_entries_headings_search_idx";');
    this.addSql('delete from "embeddings" where "passage" > 0;');
    this.addSql('alter table "embeddings" drop constraint "embeddings_pkey";');
    this.addSql('alter table "embeddings" add constraint "embeddings_pkey" primary key ("item_type", "item_id");');
    this.addSql('alter table "embeddings" drop column "passage_text";');
    this.addSql('alter table "embeddings" drop column "passage";');
  }
}
