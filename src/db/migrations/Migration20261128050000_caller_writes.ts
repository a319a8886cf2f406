import { Migration } from '@mikro-orm/migrations';

/**
 * Read-your-writes with a read replica (DATABASE_READ_URL): after each write request, the WAL
 * position of the primary is recorded for its caller, in the primary, so every process can tell
 * whether the replica has replayed past a caller's last write before it sends that caller's reads
 * there. One row per caller (an agent key, the admin token, a member), overwritten; rows older
 * than an hour are deleted by housekeeping.
 */
export class Migration20261128050000_caller_writes extends Migration {
  override up(): void {
    this.addSql('create table "caller_writes" ("caller" text primary key, "wal_lsn" pg_lsn not null, "written_at" timestamptz not null default now());');
  }

  override down(): void {
    this.addSql('drop table "caller_writes";');
  }
}
