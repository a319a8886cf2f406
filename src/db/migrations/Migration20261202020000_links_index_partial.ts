import { Migration } from '@mikro-orm/migrations';

/**
 * The links index holds only the notes that link somewhere. A GIN index keeps a placeholder entry
 * for an empty array, and a note's update is never HOT (its row is more than half a page), so every
 * PUT of a note without links wrote that placeholder again through the index's pending list, under
 * its metapage lock, for nothing: backlinks (`links @> array[path]`, with `links <> '{}'` stated so
 * the planner can use this index) never match an empty array.
 */
export class Migration20261202020000_links_index_partial extends Migration {
  override up(): void {
    this.addSql('drop index "memory_notes_links_idx";');
    this.addSql(`create index "memory_notes_links_idx" on "memory_notes" using gin ("links") where "links" <> '{}';`);
  }

  override down(): void {
    this.addSql('drop index "memory_notes_links_idx";');
    this.addSql('create index "memory_notes_links_idx" on "memory_notes" using gin ("links");');
  }
}
