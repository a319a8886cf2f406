import { Migration } from '@mikro-orm/migrations';

export class Migration20261122011131_articles extends Migration {

  override up(): void {
    this.addSql(`create table "uploads" ("id" text not null, "workspace_id" uuid not null, "content_type" text not null, "extension" text not null, "size" int not null, "width" int not null, "height" int not null, "sha256" text not null, "data" bytea not null, "created_at" timestamptz not null, constraint "uploads_pkey" primary key ("id"));`);
    this.addSql(`create index "uploads_workspace_sha_idx" on "uploads" ("workspace_id", "sha256");`);

    this.addSql(`create table "sections" ("id" serial primary key, "workspace_id" uuid not null, "key" text not null, "label" text not null, "visibility" text not null default 'public', "position" int not null default 0, "created_at" timestamptz not null);`);
    this.addSql(`alter table "sections" add constraint "sections_workspace_key_unique" unique ("workspace_id", "key");`);

    this.addSql(`create table "proposals" ("id" serial primary key, "workspace_id" uuid not null, "kind" text not null, "status" text not null default 'open', "article_slug" text null, "base_version" int null, "section" text null, "title" text null, "markdown" text null, "summary" text not null, "agent_key_id" uuid not null, "member_id" uuid not null, "reviewed_by" uuid null, "reviewed_at" timestamptz null, "reason" text null, "created_at" timestamptz not null);`);
    this.addSql(`create index "proposals_key_idx" on "proposals" ("workspace_id", "agent_key_id", "id");`);

    this.addSql(`create table "articles" ("id" serial primary key, "workspace_id" uuid not null, "section_id" int not null, "slug" text not null, "title" text not null, "markdown" text not null, "status" text not null default 'DRAFT', "visibility" text not null default 'public', "position" int not null default 0, "version" int not null default 1, "created_at" timestamptz not null, "updated_at" timestamptz not null, "published_at" timestamptz null);`);
    this.addSql(`create index "articles_section_position_idx" on "articles" ("section_id", "position");`);
    this.addSql(`alter table "articles" add constraint "articles_workspace_slug_unique" unique ("workspace_id", "slug");`);

    this.addSql(`alter table "uploads" add constraint "uploads_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "sections" add constraint "sections_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "proposals" add constraint "proposals_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "articles" add constraint "articles_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "articles" add constraint "articles_section_id_foreign" foreign key ("section_id") references "sections" ("id") on update cascade on delete restrict;`);
  }

  override down(): void {
    this.addSql(`alter table "articles" drop constraint "articles_section_id_foreign";`);

    this.addSql(`drop table if exists "uploads" cascade;`);

    this.addSql(`drop table if exists "sections" cascade;`);

    this.addSql(`drop table if exists "proposals" cascade;`);

    this.addSql(`drop table if exists "articles" cascade;`);
  }

}
