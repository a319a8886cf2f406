import { Migration } from '@mikro-orm/migrations';

/**
 * An OAuth grant carries the second factor its member proved when consenting: the session's `mfa`
 * is recorded on the authorization code at consent and on the grant when the code is redeemed. A
 * call made with the grant's token meets the organization's two-factor rule when the member has
 * turned two-factor on or the consent proved a second factor. Grants made before this migration
 * count as made without one (they keep the rule they had: the member's flag).
 */
export class Migration20261130010000_oauth_grant_mfa extends Migration {
  override up(): void {
    this.addSql('alter table "oauth_codes" add column "mfa" boolean not null default false;');
    this.addSql('alter table "oauth_grants" add column "mfa" boolean not null default false;');
  }

  override down(): void {
    this.addSql('alter table "oauth_grants" drop column "mfa";');
    this.addSql('alter table "oauth_codes" drop column "mfa";');
  }
}
