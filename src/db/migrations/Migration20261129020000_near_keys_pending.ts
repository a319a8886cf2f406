import { Migration } from '@mikro-orm/migrations';

/**
 * The near-duplicate key index takes its entries through a small pending list (256 kB) instead of
 * directly. Every update of a note writes its 16 band keys, and written directly each lands on its
 * own leaf page of the index: under 50 writers the PUT bench wrote 46 KiB of WAL per update (most
 * of it full-page images of those leaves); through the list, 33 KiB, at the same 570–580 updates/s.
 * The list is merged by whichever write fills it (or by vacuum); a create's lookup reads it whole,
 * which the small limit bounds.
 */
export class Migration20261129020000_near_keys_pending extends Migration {
  override up(): void {
    this.addSql('alter index "memory_notes_near_keys_idx" set (fastupdate = on, gin_pending_list_limit = 256);');
  }

  override down(): void {
    this.addSql('alter index "memory_notes_near_keys_idx" set (fastupdate = off);');
    this.addSql('alter index "memory_notes_near_keys_idx" reset (gin_pending_list_limit);');
    this.addSql(`select gin_clean_pending_list('"memory_notes_near_keys_idx"'::regclass);`);
  }
}
