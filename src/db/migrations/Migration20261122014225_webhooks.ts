import { Migration } from '@mikro-orm/migrations';

export class Migration20261122014225_webhooks extends Migration {

  override up(): void {
    this.addSql(`create table "idempotency_keys" ("id" serial primary key, "agent_key_id" uuid not null, "workspace" text not null, "idempotency_key" text not null, "request_hash" text not null, "state" text not null, "status" int null, "response" jsonb null, "created_at" timestamptz not null);`);
    this.addSql(`alter table "idempotency_keys" add constraint "idempotency_keys_unique" unique ("agent_key_id", "workspace", "idempotency_key");`);

    this.addSql(`create table "webhooks" ("id" uuid not null, "organization_id" uuid not null, "workspace_id" uuid null, "url" text not null, "events" text[] null, "secret" text not null, "enabled" boolean not null default true, "disabled_reason" text null, "created_at" timestamptz not null, constraint "webhooks_pkey" primary key ("id"));`);
    this.addSql(`create index "webhooks_org_idx" on "webhooks" ("organization_id");`);

    this.addSql(`create table "webhook_attempts" ("id" serial primary key, "delivery_id" int not null, "attempted_at" timestamptz not null, "status_code" int null, "duration_ms" int not null, "error" text null);`);
    this.addSql(`create index "webhook_attempts_delivery_idx" on "webhook_attempts" ("delivery_id");`);

    this.addSql(`create table "webhook_deliveries" ("id" serial primary key, "event_id" text not null, "event_type" text not null, "webhook_id" uuid not null, "status" text not null default 'pending', "attempts" int not null default 0, "next_attempt_at" timestamptz null, "lease_until" timestamptz null, "last_status_code" int null, "last_error" text null, "delivered_at" timestamptz null, "created_at" timestamptz not null);`);
    this.addSql(`create index "webhook_deliveries_hook_idx" on "webhook_deliveries" ("webhook_id", "id");`);
    this.addSql(`create index "webhook_deliveries_due_idx" on "webhook_deliveries" ("status", "next_attempt_at");`);
    this.addSql(`alter table "webhook_deliveries" add constraint "webhook_deliveries_event_hook_unique" unique ("event_id", "webhook_id");`);

    this.addSql(`create table "webhook_events" ("id" text not null, "organization_id" uuid null, "workspace_id" uuid null, "type" text not null, "payload" jsonb not null, "fanned_out" boolean not null default false, "created_at" timestamptz not null, constraint "webhook_events_pkey" primary key ("id"));`);
    this.addSql(`create index "webhook_events_pending_idx" on "webhook_events" ("created_at") where not "fanned_out";`);
  }

  override down(): void {
    this.addSql(`drop table if exists "idempotency_keys" cascade;`);

    this.addSql(`drop table if exists "webhooks" cascade;`);

    this.addSql(`drop table if exists "webhook_attempts" cascade;`);

    this.addSql(`drop table if exists "webhook_deliveries" cascade;`);

    this.addSql(`drop table if exists "webhook_events" cascade;`);
  }

}
