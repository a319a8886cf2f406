import { Migration } from '@mikro-orm/migrations';

/**
 * Content-gap groups are compared question by question (average link over their newest members)
 * and merged when a question bridges two: a group's questions are found by `group_id` in both
 * tables that hold them (reports, and zero-result searches in the search log), which had no index
 * for it. Partial: most searches belong to no group.
 */
export class Migration20261207020000_gap_members extends Migration {
  override up(): void {
    this.addSql(
      'create index "content_gap_reports_group_idx" on "content_gap_reports" ("group_id", "created_at") where "group_id" is not null;',
    );
    this.addSql('create index "search_log_group_idx" on "search_log" ("group_id", "created_at") where "group_id" is not null;');
  }

  override down(): void {
    this.addSql('drop index if exists "content_gap_reports_group_idx";');
    this.addSql('drop index if exists "search_log_group_idx";');
  }
}
