import { Migration } from '@mikro-orm/migrations';

/**
 * Indexes for retention's batches (store/retention.ts). Neither `events` nor `search_log` had an
 * index starting with `created_at`, so a batch (rows before the cutoff, the oldest 1000) read the
 * whole table whenever fewer than 1000 qualified, which is every pass's last batch: on PostgreSQL 15
 * with 200,000 rows a table, 96 ms for 317 events (all of them through the xid index) and 60 ms for
 * no search (a sequential scan). With a b-tree on `created_at` a batch walks the oldest rows in
 * order and stops after 1000: 1.1 ms and 0.02 ms for those, about 4 ms for a full batch. The partial
 * index of pending deliveries by event makes the events batch's "no pending delivery" check one
 * probe per row, so the planner keeps the index order rather than reading every row past the cutoff
 * to sort them (15 ms a batch with 24,800 past it, growing with them). Both tables only grow at the
 * right-hand end, so their new index entries do too. Built inside the migration's transaction:
 * writes to each table wait for its build (0.26 s for 200,000 events, 0.1 s for as many searches).
 */
export class Migration20261130020000_retention_indexes extends Migration {
  override up(): void {
    this.addSql('create index "events_created_at_idx" on "events" ("created_at");');
    this.addSql('create index "search_log_created_at_idx" on "search_log" ("created_at");');
    this.addSql(`create index "webhook_deliveries_pending_event_idx" on "webhook_deliveries" ("event_seq") where "status" = 'pending';`);
  }

  override down(): void {
    this.addSql('drop index "webhook_deliveries_pending_event_idx";');
    this.addSql('drop index "search_log_created_at_idx";');
    this.addSql('drop index "events_created_at_idx";');
  }
}
