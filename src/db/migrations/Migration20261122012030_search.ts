import { Migration } from '@mikro-orm/migrations';

export class Migration20261122012030_search extends Migration {

  override up(): void {
    this.addSql(`create table "content_gap_groups" ("id" serial primary key, "workspace_id" uuid not null, "label" text not null, "centroid" real[] not null, "report_count" int not null default 0, "search_count" int not null default 0, "first_seen" timestamptz not null, "last_seen" timestamptz not null, "nearest_article_slug" text null, "resolved_at" timestamptz null);`);
    this.addSql(`create index "content_gap_groups_workspace_idx" on "content_gap_groups" ("workspace_id");`);

    this.addSql(`create table "content_gap_reports" ("id" serial primary key, "workspace_id" uuid not null, "question" text null, "slug" text null, "slug_known" boolean not null default false, "redacted" boolean not null default false, "agent_key_id" uuid null, "group_id" int null, "created_at" timestamptz not null);`);
    this.addSql(`create index "content_gap_reports_workspace_idx" on "content_gap_reports" ("workspace_id", "created_at");`);

    this.addSql(`create table "embeddings" ("item_type" text not null, "item_id" int not null, "workspace_id" uuid not null, "model" text not null, "vec" bytea not null, "updated_at" timestamptz not null, constraint "embeddings_pkey" primary key ("item_type", "item_id"));`);
    this.addSql(`create index "embeddings_workspace_idx" on "embeddings" ("workspace_id", "item_type");`);

    this.addSql(`create table "embedding_queue" ("item_type" text not null, "item_id" int not null, "workspace_id" uuid not null, "enqueued_at" timestamptz not null, "claimed_until" timestamptz null, "attempts" int not null default 0, constraint "embedding_queue_pkey" primary key ("item_type", "item_id"));`);
    this.addSql(`create index "embedding_queue_workspace_idx" on "embedding_queue" ("workspace_id");`);

    this.addSql(`create table "search_log" ("id" serial primary key, "workspace_id" uuid not null, "agent_key_id" uuid null, "query" text not null, "result_count" int not null, "ranking" text not null, "duration_ms" int not null, "group_id" int null, "created_at" timestamptz not null);`);
    this.addSql(`create index "search_log_workspace_idx" on "search_log" ("workspace_id", "created_at");`);

    this.addSql(`alter table "changelog_entries" add column "search" tsvector generated always as ((setweight(to_tsvector('english'::regconfig, title), 'A'::"char") || setweight(to_tsvector('english'::regconfig, markdown), 'B'::"char"))) stored null;`);
    this.addSql(`create index "changelog_entries_search_idx" on "changelog_entries" using gin ("search");`);

    this.addSql(`alter table "articles" add column "search" tsvector generated always as ((setweight(to_tsvector('english'::regconfig, title), 'A'::"char") || setweight(to_tsvector('english'::regconfig, markdown), 'B'::"char"))) stored null;`);
    this.addSql(`create index "articles_search_idx" on "articles" using gin ("search");`);

    // pgvector where the database has it (PGlite, the docker-compose image); real[] + in-process ranking elsewhere.
    this.addSql(`do $$ begin
      if exists (select 1 from pg_available_extensions where name = 'vector') then
        execute 'create extension if not exists vector';
        execute 'alter table embeddings add column if not exists embedding vector(512)';
        execute 'create index if not exists embeddings_hnsw_idx on embeddings using hnsw (embedding vector_cosine_ops)';
      end if;
    exception when others then
      raise notice 'pgvector not enabled: %', sqlerrm;
    end $$;`);
  }

  override down(): void {
    this.addSql(`drop table if exists "content_gap_groups" cascade;`);

    this.addSql(`drop table if exists "content_gap_reports" cascade;`);

    this.addSql(`drop table if exists "embeddings" cascade;`);

    this.addSql(`drop table if exists "embedding_queue" cascade;`);

    this.addSql(`drop table if exists "search_log" cascade;`);

    this.addSql(`drop index "articles_search_idx";`);
    this.addSql(`alter table "articles" drop column "search";`);

    this.addSql(`drop index "changelog_entries_search_idx";`);
    this.addSql(`alter table "changelog_entries" drop column "search";`);
  }

}
