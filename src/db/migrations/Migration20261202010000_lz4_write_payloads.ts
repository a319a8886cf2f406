import { Migration } from '@mikro-orm/migrations';

/** The columns every note PUT compresses as it writes them: the event's payload and the replaced revision's body. */
const COLUMNS = [
  ['events', 'payload'],
  ['memory_note_revisions', 'body'],
] as const;

/**
 * Compresses the large values a note PUT writes with lz4 instead of pglz, where the server has lz4
 * (PostgreSQL built with it, as the common packages are; the embedded database is not, and keeps
 * pglz). An event's payload (the note, and what it replaced: two bodies, ~5 KB of JSON) and a
 * replaced revision's body are compressed on every write and read back rarely; pglz is the slow
 * part of storing them. Measured on PostgreSQL 15 (pgbench, 8 clients on 2 cores, inserts of a
 * 5.3 KB payload into a table shaped like `events`): 5,775–6,103 inserts/s with pglz, 6,851–7,186
 * with lz4 (+19 %), 4.6 KB of WAL per insert against 4.1 KB. Values already stored keep their
 * compression until rewritten; both decompress alike.
 */
export class Migration20261202010000_lz4_write_payloads extends Migration {
  override up(): void {
    this.addSql(compression('lz4'));
  }

  override down(): void {
    this.addSql(compression('pglz'));
  }
}

/** Sets the columns' compression method when this server has it (a no-op otherwise). */
function compression(method: 'lz4' | 'pglz'): string {
  const statements = COLUMNS.map(([table, column]) => `alter table "${table}" alter column "${column}" set compression ${method};`).join(' ');
  return `do $$ begin
    if '${method}' = any ((select enumvals from pg_settings where name = 'default_toast_compression')::text[]) then ${statements} end if;
  end $$;`;
}
