import { Migration } from '@mikro-orm/migrations';

export class Migration20261122010528_memory extends Migration {

  override up(): void {
    // array_to_string is only STABLE; a generated column needs an IMMUTABLE expression.
    this.addSql(`create or replace function wks_array_text(text[]) returns text language sql immutable parallel safe as $$ select array_to_string($1, ' ') $$;`);
    this.addSql(`create table "memory_usage" ("workspace_id" uuid not null, "used" int not null default 0, constraint "memory_usage_pkey" primary key ("workspace_id"));`);

    this.addSql(`create table "memory_notes" ("id" serial primary key, "workspace_id" uuid not null, "path" text collate "C" not null, "kind" text not null, "body" text not null, "links" text[] not null, "tags" text[] not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "accessed_at" timestamptz not null, "search" tsvector generated always as (((setweight(to_tsvector('english'::regconfig, translate(path, '/._-'::text, '    '::text)), 'A'::"char") || setweight(to_tsvector('english'::regconfig, wks_array_text(tags)), 'B'::"char")) || setweight(to_tsvector('english'::regconfig, body), 'C'::"char"))) stored null);`);
    this.addSql(`alter table "memory_notes" add constraint "memory_notes_workspace_path_unique" unique ("workspace_id", "path");`);

    this.addSql(`alter table "memory_notes" add constraint "memory_notes_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on update cascade on delete cascade;`);
    this.addSql(`create index "memory_notes_search_idx" on "memory_notes" using gin ("search");`);
    this.addSql(`create index "memory_notes_links_idx" on "memory_notes" using gin ("links");`);
  }

  override down(): void {
    this.addSql(`drop table if exists "memory_notes" cascade;`);
    this.addSql(`drop table if exists "memory_usage" cascade;`);
    this.addSql(`drop function if exists wks_array_text(text[]);`);
  }

}
