import { Migration } from '@mikro-orm/migrations';

export class Migration20261122012917_openapi extends Migration {

  override up(): void {
    this.addSql(`create table "api_specs" ("id" serial primary key, "workspace_id" uuid not null, "source" text not null, "url" text null, "raw" text not null, "title" text null, "version" text null, "openapi_version" text null, "operation_count" int not null default 0, "last_sync" jsonb null, "last_sync_at" timestamptz null, "last_sync_result" text null, "last_sync_error" text null, "warnings" jsonb not null, "created_at" timestamptz not null);`);
    this.addSql(`alter table "api_specs" add constraint "api_specs_workspace_unique" unique ("workspace_id");`);

    this.addSql(`alter table "api_specs" add constraint "api_specs_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "sections" add column "api_tag" text null;`);

    this.addSql(`alter table "articles" add column "api_operation_key" text null, add column "api_operation_hash" text null, add column "api_state" text null, add column "api_method" text null, add column "api_path" text null;`);
    this.addSql(`alter table "articles" add constraint "articles_workspace_operation_unique" unique ("workspace_id", "api_operation_key");`);
  }

  override down(): void {
    this.addSql(`drop table if exists "api_specs" cascade;`);

    this.addSql(`alter table "articles" drop constraint "articles_workspace_operation_unique";`);
    this.addSql(`alter table "articles" drop column "api_operation_key", drop column "api_operation_hash", drop column "api_state", drop column "api_method", drop column "api_path";`);

    this.addSql(`alter table "sections" drop column "api_tag";`);
  }

}
