import { Migration } from '@mikro-orm/migrations';

/**
 * The review console and live updates: the admin token may review and draft proposals over GraphQL
 * (such a proposal has no key and no member behind it), and every open GraphQL subscription holds
 * a lease row, so the cap on subscriptions per key holds across every process sharing the database.
 */
export class Migration20261126010000_live_review extends Migration {
  override up(): void {
    this.addSql('alter table "proposals" alter column "agent_key_id" drop not null, alter column "member_id" drop not null;');
    this.addSql(
      'create table "live_subscriptions" ("id" uuid primary key, "holder" text not null, "workspace_id" uuid not null, "field" text not null, "created_at" timestamptz not null default now(), "expires_at" timestamptz not null);',
    );
    this.addSql('create index "live_subscriptions_holder_idx" on "live_subscriptions" ("holder", "expires_at");');
  }

  override down(): void {
    this.addSql('drop table "live_subscriptions";');
    this.addSql('delete from "proposals" where "agent_key_id" is null or "member_id" is null;');
    this.addSql('alter table "proposals" alter column "agent_key_id" set not null, alter column "member_id" set not null;');
  }
}
