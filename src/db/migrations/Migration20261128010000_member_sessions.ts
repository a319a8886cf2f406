import { Migration } from '@mikro-orm/migrations';

/**
 * People sign in as members: a session per signed-in browser (its cookie's token stored only as a
 * digest, with idle and absolute expiry, revocable), and single-use sign-in links (their token
 * stored only as a digest, valid 15 minutes). Both live in the database, so every process sharing it
 * sees a session begin, a link be used and a session be revoked.
 */
export class Migration20261128010000_member_sessions extends Migration {
  override up(): void {
    this.addSql(
      `create table "member_sessions" ("id" uuid primary key, "member_id" uuid not null references "members" ("id") on delete cascade,
        "organization_id" uuid not null references "organizations" ("id") on delete cascade, "token_digest" text not null unique,
        "method" text not null, "mfa" boolean not null default false, "user_agent" text null,
        "created_at" timestamptz not null default now(), "last_seen_at" timestamptz not null default now(),
        "expires_at" timestamptz not null, "revoked_at" timestamptz null);`,
    );
    this.addSql('create index "member_sessions_member_idx" on "member_sessions" ("member_id", "created_at");');
    this.addSql('create index "member_sessions_organization_idx" on "member_sessions" ("organization_id", "created_at");');
    this.addSql(
      `create table "sign_in_links" ("id" uuid primary key, "member_id" uuid not null references "members" ("id") on delete cascade,
        "token_digest" text not null unique, "created_at" timestamptz not null default now(), "expires_at" timestamptz not null,
        "used_at" timestamptz null);`,
    );
    this.addSql('create index "sign_in_links_expires_idx" on "sign_in_links" ("expires_at");');
  }

  override down(): void {
    this.addSql('drop table "sign_in_links";');
    this.addSql('drop table "member_sessions";');
  }
}
