import { Migration } from '@mikro-orm/migrations';

/**
 * Memory notes get a version (+1 per change, never reused for a path: a note created again after a
 * delete continues after its last kept revision) and a history: each update and delete keeps the
 * state it replaced, by (workspace, path, version), with who wrote that state and when it was
 * replaced. `deleted` marks the revision a delete kept; history of a deleted note stays readable for
 * a bounded time (see the service).
 */
export class Migration20261124030000_note_versions extends Migration {
  override up(): void {
    this.addSql('alter table "memory_notes" add column "version" int not null default 1;');
    this.addSql('alter table "memory_notes" add column "written_by_key_id" uuid null;');
    this.addSql(`create table "memory_note_revisions" (
      "workspace_id" uuid not null references "workspaces" ("id") on delete cascade,
      "path" text collate "C" not null,
      "version" int not null,
      "kind" text not null,
      "body" text not null,
      "links" text[] not null,
      "tags" text[] not null,
      "written_by_key_id" uuid null,
      "written_at" timestamptz not null,
      "replaced_by_key_id" uuid null,
      "replaced_at" timestamptz not null,
      "deleted" boolean not null default false,
      primary key ("workspace_id", "path", "version"));`);
    this.addSql('create index "memory_note_revisions_deleted_idx" on "memory_note_revisions" ("replaced_at") where "deleted";');
  }

  override down(): void {
    this.addSql('drop table if exists "memory_note_revisions";');
    this.addSql('alter table "memory_notes" drop column "written_by_key_id", drop column "version";');
  }
}
