import { Migration } from '@mikro-orm/migrations';

/**
 * The live hub reads a workspace's events past its cursor, `(xid, id) > cursor`, many times a
 * second while anyone listens. With only (workspace_id, created_at) and (xid, id) to choose from,
 * PostgreSQL combined the workspace's whole history with the new rows (3 ms at 60,000 events, and
 * growing with every write); this index reads the new rows of the workspace alone (0.2 ms).
 */
export class Migration20261207040000_events_live_index extends Migration {
  override up(): void {
    this.addSql('create index "events_workspace_xid_idx" on "events" ("workspace_id", "xid", "id");');
  }

  override down(): void {
    this.addSql('drop index "events_workspace_xid_idx";');
  }
}
