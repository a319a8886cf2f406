import { Migration } from '@mikro-orm/migrations';

/** A new-draft proposal can come from a content-gap group; approving it resolves the group. */
export class Migration20261124070000_gap_proposals extends Migration {
  override up(): void {
    this.addSql('alter table "proposals" add column "gap_group_id" int null references "content_gap_groups" ("id") on delete set null;');
    this.addSql('create index "proposals_gap_group_idx" on "proposals" ("gap_group_id") where "gap_group_id" is not null;');
  }

  override down(): void {
    this.addSql('alter table "proposals" drop column "gap_group_id";');
  }
}
