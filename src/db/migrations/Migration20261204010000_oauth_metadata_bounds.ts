import { Migration } from '@mikro-orm/migrations';

/**
 * Bounds on what Client ID Metadata Documents cost. A failed fetch is remembered per URL for a while
 * (`oauth_metadata_failures`), in the database so every process asks it before fetching again. A
 * fetched document no grant has used expires like an unused registration (its `expires_at`), and the
 * purge of unused clients takes both kinds; documents cached before this migration and never used
 * get an hour.
 */
export class Migration20261204010000_oauth_metadata_bounds extends Migration {
  override up(): void {
    this.addSql(
      `create table "oauth_metadata_failures" ("url" text primary key, "reason" text not null,
        "failed_at" timestamptz not null default now(), "retry_after" timestamptz not null);`,
    );
    this.addSql('create index "oauth_metadata_failures_retry_idx" on "oauth_metadata_failures" ("retry_after");');
    this.addSql(
      `update "oauth_clients" set "expires_at" = now() + interval '1 hour'
        where "kind" = 'metadata' and "last_used_at" is null and "expires_at" is null;`,
    );
  }

  override down(): void {
    this.addSql(`update "oauth_clients" set "expires_at" = null where "kind" = 'metadata';`);
    this.addSql('drop table "oauth_metadata_failures";');
  }
}
