import { Migration } from '@mikro-orm/migrations';

export class Migration20261122040507_embedding_stamps extends Migration {

  override up(): void {
    this.addSql(`create table "embedding_stamps" ("workspace_id" uuid not null, "revision" bigint not null default 0, "removals" bigint not null default 0, constraint "embedding_stamps_pkey" primary key ("workspace_id"));`);

    this.addSql(`alter table "embeddings" add column "revision" bigint not null default 0;`);
    this.addSql(`create index "embeddings_workspace_revision_idx" on "embeddings" ("workspace_id", "revision");`);
    this.addSql(`insert into "embedding_stamps" ("workspace_id") select distinct "workspace_id" from "embeddings";`);
  }

  override down(): void {
    this.addSql(`drop table if exists "embedding_stamps" cascade;`);

    this.addSql(`drop index "embeddings_workspace_revision_idx";`);
    this.addSql(`alter table "embeddings" drop column "revision";`);
  }

}
