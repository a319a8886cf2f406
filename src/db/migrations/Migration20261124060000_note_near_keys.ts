import { Migration } from '@mikro-orm/migrations';

/**
 * Near-duplicate detection for memory notes: each note's MinHash band keys (see the service;
 * empty for bodies too short to compare, null until computed for notes written before this).
 */
export class Migration20261124060000_note_near_keys extends Migration {
  override up(): void {
    this.addSql('alter table "memory_notes" add column "near_keys" int[] null;');
    // No pending list: every create's lookup would scan it whole (the bench's creates spent 20 ms there).
    this.addSql('create index "memory_notes_near_keys_idx" on "memory_notes" using gin ("near_keys") with (fastupdate = off);');
  }

  override down(): void {
    this.addSql('drop index if exists "memory_notes_near_keys_idx";');
    this.addSql('alter table "memory_notes" drop column "near_keys";');
  }
}
