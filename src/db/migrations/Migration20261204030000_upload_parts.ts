import { Migration } from '@mikro-orm/migrations';

/**
 * An upload's bytes are stored as parts of at most 128 KiB, each written by a statement of its own,
 * and the upload's row once every part is in. On the embedded database one statement runs at a
 * time: a 10 MiB image in one row held every other caller for ~0.4 s, a part holds them ~5 ms.
 * `upload_drafts` names uploads whose parts are being written, so parts that a failed or killed
 * request left behind are found and removed. Images are compressed already: the parts' bytes are
 * stored without a compression attempt (`external`).
 */
export class Migration20261204030000_upload_parts extends Migration {
  override up(): void {
    this.addSql(`create table "upload_parts" ("workspace_id" uuid not null, "upload_id" text not null, "part" int not null,
      "data" bytea not null, constraint "upload_parts_pkey" primary key ("workspace_id", "upload_id", "part"));`);
    this.addSql('alter table "upload_parts" alter column "data" set storage external;');
    this.addSql(`alter table "upload_parts" add constraint "upload_parts_workspace_id_foreign" foreign key ("workspace_id")
      references "workspaces" ("id") on update cascade on delete cascade;`);
    this.addSql(`create table "upload_drafts" ("workspace_id" uuid not null, "upload_id" text not null, "created_at" timestamptz not null,
      constraint "upload_drafts_pkey" primary key ("workspace_id", "upload_id"));`);
    this.addSql('create index "upload_drafts_created_at_idx" on "upload_drafts" ("created_at");');
    this.addSql(`alter table "upload_drafts" add constraint "upload_drafts_workspace_id_foreign" foreign key ("workspace_id")
      references "workspaces" ("id") on update cascade on delete cascade;`);
    this.addSql('insert into "upload_parts" ("workspace_id", "upload_id", "part", "data") select "workspace_id", "id", 0, "data" from "uploads";');
    this.addSql('alter table "uploads" drop column "data";');
  }

  override down(): void {
    this.addSql('alter table "uploads" add column "data" bytea;');
    this.addSql(`update "uploads" u set "data" = (select string_agg(p."data", ''::bytea order by p."part") from "upload_parts" p
      where p."workspace_id" = u."workspace_id" and p."upload_id" = u."id");`);
    this.addSql(`update "uploads" set "data" = ''::bytea where "data" is null;`);
    this.addSql('alter table "uploads" alter column "data" set not null;');
    this.addSql('drop table "upload_drafts";');
    this.addSql('drop table "upload_parts";');
  }
}
