import { Migration } from '@mikro-orm/migrations';

export class Migration20261122005315_initial extends Migration {

  override up(): void {
    this.addSql(`create table "audit_events" ("id" bigserial primary key, "organization_id" uuid null, "workspace_id" uuid null, "actor" text not null, "agent_key_id" uuid null, "member_id" uuid null, "action" text not null, "target_type" text not null, "target_id" text null, "request_id" text null, "created_at" timestamptz not null);`);
    this.addSql(`create index "audit_events_workspace_idx" on "audit_events" ("workspace_id", "created_at");`);

    this.addSql(`create table "organizations" ("id" uuid not null, "name" text not null, "plan" text not null default 'free', "require_two_factor" boolean not null default false, "created_at" timestamptz not null, constraint "organizations_pkey" primary key ("id"));`);

    this.addSql(`create table "members" ("id" uuid not null, "organization_id" uuid not null, "email" text not null, "role" text not null default 'viewer', "two_factor_enabled" boolean not null default false, "created_at" timestamptz not null, constraint "members_pkey" primary key ("id"));`);
    this.addSql(`alter table "members" add constraint "members_organization_id_email_unique" unique ("organization_id", "email");`);

    this.addSql(`create table "settings" ("key" text not null, "value" text not null, constraint "settings_pkey" primary key ("key"));`);

    this.addSql(`create table "workspaces" ("id" uuid not null, "organization_id" uuid not null, "name" text not null, "created_at" timestamptz not null, constraint "workspaces_pkey" primary key ("id"));`);

    this.addSql(`create table "changelog_entries" ("id" serial primary key, "workspace_id" uuid not null, "author" text not null, "title" text not null, "markdown" text not null, "status" text not null default 'draft', "tags" text[] not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "published_at" timestamptz null);`);
    this.addSql(`create index "changelog_entries_feed_idx" on "changelog_entries" ("workspace_id", (coalesce("published_at", "created_at")) desc, "id" desc);`);

    this.addSql(`create table "agent_keys" ("id" uuid not null, "organization_id" uuid not null, "member_id" uuid not null, "workspace_id" uuid null, "name" text not null, "permissions" text[] not null, "digest" text not null, "expires_at" timestamptz null, "revoked_at" timestamptz null, "last_used_at" timestamptz null, "created_at" timestamptz not null, constraint "agent_keys_pkey" primary key ("id"));`);
    this.addSql(`alter table "agent_keys" add constraint "agent_keys_digest_unique" unique ("digest");`);

    this.addSql(`alter table "members" add constraint "members_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "workspaces" add constraint "workspaces_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "changelog_entries" add constraint "changelog_entries_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "agent_keys" add constraint "agent_keys_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "agent_keys" add constraint "agent_keys_member_id_foreign" foreign key ("member_id") references "members" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "agent_keys" add constraint "agent_keys_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on update cascade on delete cascade;`);
  }

  override down(): void {
    this.addSql(`alter table "members" drop constraint "members_organization_id_foreign";`);

    this.addSql(`alter table "workspaces" drop constraint "workspaces_organization_id_foreign";`);

    this.addSql(`alter table "agent_keys" drop constraint "agent_keys_organization_id_foreign";`);

    this.addSql(`alter table "agent_keys" drop constraint "agent_keys_member_id_foreign";`);

    this.addSql(`alter table "changelog_entries" drop constraint "changelog_entries_workspace_id_foreign";`);

    this.addSql(`alter table "agent_keys" drop constraint "agent_keys_workspace_id_foreign";`);

    this.addSql(`drop table if exists "audit_events" cascade;`);

    this.addSql(`drop table if exists "organizations" cascade;`);

    this.addSql(`drop table if exists "members" cascade;`);

    this.addSql(`drop table if exists "settings" cascade;`);

    this.addSql(`drop table if exists "workspaces" cascade;`);

    this.addSql(`drop table if exists "changelog_entries" cascade;`);

    this.addSql(`drop table if exists "agent_keys" cascade;`);
  }

}
