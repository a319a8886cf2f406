import { Migration } from '@mikro-orm/migrations';

/**
 * OAuth 2.1 for MCP and the REST API: clients (registered by DCR, or cached Client ID Metadata
 * Documents), one-time authorization codes, grants (a member's consent to one client in one
 * workspace) and their tokens. Codes and tokens are stored as digests only.
 */
export class Migration20261128020000_oauth extends Migration {
  override up(): void {
    this.addSql(
      `create table "oauth_clients" ("id" text primary key, "kind" text not null, "name" text not null, "redirect_uris" text[] not null,
        "metadata" jsonb not null, "created_at" timestamptz not null default now(), "refresh_after" timestamptz null,
        "expires_at" timestamptz null, "last_used_at" timestamptz null, "registered_from" text null);`,
    );
    this.addSql('create index "oauth_clients_expiry_idx" on "oauth_clients" ("expires_at") where "last_used_at" is null;');
    this.addSql(
      `create table "oauth_grants" ("id" uuid primary key, "organization_id" uuid not null references "organizations" ("id") on delete cascade,
        "member_id" uuid not null references "members" ("id") on delete cascade,
        "workspace_id" uuid not null references "workspaces" ("id") on delete cascade,
        "client_id" text not null, "client_name" text not null, "scopes" text[] not null, "resource" text not null,
        "created_at" timestamptz not null default now(), "last_used_at" timestamptz null, "revoked_at" timestamptz null, "revoked_reason" text null);`,
    );
    this.addSql('create index "oauth_grants_member_idx" on "oauth_grants" ("member_id", "created_at");');
    this.addSql('create index "oauth_grants_organization_idx" on "oauth_grants" ("organization_id", "created_at");');
    this.addSql(
      `create table "oauth_codes" ("digest" text primary key, "client_id" text not null, "redirect_uri" text not null,
        "code_challenge" text not null, "resource" text not null, "scopes" text[] not null,
        "member_id" uuid not null references "members" ("id") on delete cascade,
        "workspace_id" uuid not null references "workspaces" ("id") on delete cascade,
        "expires_at" timestamptz not null, "used_at" timestamptz null, "grant_id" uuid null references "oauth_grants" ("id") on delete cascade);`,
    );
    this.addSql(
      `create table "oauth_tokens" ("digest" text primary key, "grant_id" uuid not null references "oauth_grants" ("id") on delete cascade,
        "kind" text not null, "expires_at" timestamptz not null, "used_at" timestamptz null, "created_at" timestamptz not null default now());`,
    );
    this.addSql('create index "oauth_tokens_grant_idx" on "oauth_tokens" ("grant_id");');
    this.addSql('create index "oauth_tokens_expiry_idx" on "oauth_tokens" ("expires_at");');
  }

  override down(): void {
    this.addSql('drop table "oauth_tokens";');
    this.addSql('drop table "oauth_codes";');
    this.addSql('drop table "oauth_grants";');
    this.addSql('drop table "oauth_clients";');
  }
}
