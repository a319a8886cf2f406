import { Migration } from '@mikro-orm/migrations';

/**
 * Who asks, agents or people: each search and content-gap report records the door it came through
 * (rest, mcp, graphql, console) and the kind of caller (agent_key, oauth_grant, member,
 * admin_token); null on rows recorded before (reported as unknown). Every other workspace
 * operation is counted per workspace, UTC day, door and caller in `workspace_activity` (reads and
 * writes), which each process adds to every few seconds.
 */
export class Migration20261205020000_doors_and_callers extends Migration {
  override up(): void {
    this.addSql('alter table "search_log" add column "door" text null, add column "caller" text null;');
    this.addSql('alter table "content_gap_reports" add column "door" text null, add column "caller" text null;');
    this.addSql(`create table "workspace_activity" ("workspace_id" uuid not null, "day" date not null, "door" text not null,
      "caller" text not null, "reads" bigint not null default 0, "writes" bigint not null default 0,
      constraint "workspace_activity_pkey" primary key ("workspace_id", "day", "door", "caller"));`);
    this.addSql('create index "workspace_activity_day_idx" on "workspace_activity" ("day");');
    this.addSql(`alter table "workspace_activity" add constraint "workspace_activity_workspace_id_foreign" foreign key ("workspace_id")
      references "workspaces" ("id") on update cascade on delete cascade;`);
  }

  override down(): void {
    this.addSql('drop table "workspace_activity";');
    this.addSql('alter table "content_gap_reports" drop column "door", drop column "caller";');
    this.addSql('alter table "search_log" drop column "door", drop column "caller";');
  }
}
