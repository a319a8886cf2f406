import { Migration } from '@mikro-orm/migrations';

const INDEXES = [
  'articles_title_search_idx',
  'changelog_entries_title_search_idx',
  'articles_headings_search_idx',
  'changelog_entries_headings_search_idx',
];

/**
 * The title and heading GIN indexes (the bounded full-text ranking's tiers) take their entries
 * directly instead of through a pending list. A GIN pending list is read whole by every search
 * that uses the index until a vacuum or an overflow of 4 MB merges it: after a bulk load of
 * 100,000 articles the headings index held all of them there, and each tier cost ~4 ms before it
 * found a row. Titles and headings are a few words per document, so writing them directly costs
 * little; the lists already pending are merged here.
 */
export class Migration20261129010000_small_gin_direct extends Migration {
  override up(): void {
    for (const index of INDEXES) {
      this.addSql(`alter index "${index}" set (fastupdate = off);`);
      this.addSql(`select gin_clean_pending_list('"${index}"'::regclass);`);
    }
  }

  override down(): void {
    for (const index of INDEXES) this.addSql(`alter index "${index}" reset (fastupdate);`);
  }
}
