import { Migration } from '@mikro-orm/migrations';

/** GIN indexes on titles alone: full-text search ranks a one-word query among title matches when they fill the page. */
export class Migration20261123040000_title_search extends Migration {
  override up(): void {
    this.addSql(`create index if not exists "articles_title_search_idx" on "articles" using gin (to_tsvector('english'::regconfig, title));`);
    this.addSql(`create index if not exists "changelog_entries_title_search_idx" on "changelog_entries" using gin (to_tsvector('english'::regconfig, title));`);
  }

  override down(): void {
    this.addSql(`drop index if exists "articles_title_search_idx";`);
    this.addSql(`drop index if exists "changelog_entries_title_search_idx";`);
  }
}
