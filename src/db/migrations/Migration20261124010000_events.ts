import { Migration } from '@mikro-orm/migrations';

/**
 * One event row per successful mutation is both the audit trail and the webhook outbox: the
 * audit table becomes `events` and gains the webhook payload, a message id and the writing
 * transaction's id (xid8). The dispatcher reads events in commit order past a cursor (events of
 * transactions older than every running one), so no event row is updated after it is written.
 * Events still waiting in the old outbox are fanned out here; their deliveries keep reading the
 * old table's payloads.
 */
export class Migration20261124010000_events extends Migration {
  override up(): void {
    this.addSql('alter table "audit_events" rename to "events";');
    this.addSql('alter sequence "audit_events_id_seq" rename to "events_id_seq";');
    this.addSql('alter index "audit_events_pkey" rename to "events_pkey";');
    this.addSql('alter index "audit_events_workspace_idx" rename to "events_workspace_idx";');
    this.addSql('alter table "events" add column "message_id" text, add column "payload" jsonb;');
    this.addSql(`alter table "events" alter column "message_id" set default ('msg_' || replace(gen_random_uuid()::text, '-', ''));`);
    this.addSql('alter table "events" add column "xid" xid8 not null default pg_current_xact_id();');
    this.addSql('create index "events_xid_idx" on "events" ("xid", "id");');
    this.addSql('create table "event_cursors" ("name" text primary key, "last_xid" xid8 not null, "last_id" bigint not null);');
    this.addSql(`insert into "event_cursors" ("name", "last_xid", "last_id") select 'webhooks', pg_current_xact_id(), coalesce(max("id"), 0) from "events";`);
    this.addSql('alter table "webhook_deliveries" add column "event_seq" bigint;');
    this.addSql(`insert into "webhook_deliveries" ("event_id", "event_type", "webhook_id", "status", "attempts", "next_attempt_at", "created_at")
      select e."id", e."type", h."id", 'pending', 0, clock_timestamp(), clock_timestamp()
        from "webhook_events" e join "webhooks" h on h."enabled" and h."organization_id" = e."organization_id"
       where not e."fanned_out" and h."created_at" <= e."created_at"
         and (h."workspace_id" is null or h."workspace_id" = e."workspace_id")
         and not (e."type" = 'webhook.created' and e."payload"->'target'->>'id' = h."id"::text)
         and (h."events" is null or exists (select 1 from unnest(h."events") f
               where f = '*' or f = e."type" or (right(f, 2) = '.*' and starts_with(e."type", left(f, -1)))))
      on conflict do nothing;`);
    this.addSql('update "webhook_events" set "fanned_out" = true where not "fanned_out";');
    this.addSql('drop index if exists "webhook_events_pending_idx";');
  }

  override down(): void {
    this.addSql('create index "webhook_events_pending_idx" on "webhook_events" ("created_at") where not "fanned_out";');
    this.addSql('alter table "webhook_deliveries" drop column "event_seq";');
    this.addSql('drop table "event_cursors";');
    this.addSql('drop index "events_xid_idx";');
    this.addSql('alter table "events" drop column "xid", drop column "message_id", drop column "payload";');
    this.addSql('alter index "events_workspace_idx" rename to "audit_events_workspace_idx";');
    this.addSql('alter index "events_pkey" rename to "audit_events_pkey";');
    this.addSql('alter sequence "events_id_seq" rename to "audit_events_id_seq";');
    this.addSql('alter table "events" rename to "audit_events";');
  }
}
