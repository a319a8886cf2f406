import { Migration } from '@mikro-orm/migrations';

/**
 * MCP resource subscriptions of 2025-11-25 clients (`resources/subscribe`): that revision keeps
 * no session here, so a subscription belongs to the credential that made it (an agent key or an
 * OAuth grant: `holder`), and any of its change streams (GET /mcp), on any process, delivers it.
 */
export class Migration20261207030000_resource_subscriptions extends Migration {
  override up(): void {
    this.addSql(`create table "mcp_resource_subscriptions" ("holder" text not null, "workspace_id" uuid not null, "uri" text not null,
      "created_at" timestamptz not null default now(), constraint "mcp_resource_subscriptions_pkey" primary key ("holder", "uri"));`);
    this.addSql('create index "mcp_resource_subscriptions_uri_idx" on "mcp_resource_subscriptions" ("workspace_id", "uri");');
    this.addSql(`alter table "mcp_resource_subscriptions" add constraint "mcp_resource_subscriptions_workspace_id_foreign" foreign key ("workspace_id")
      references "workspaces" ("id") on update cascade on delete cascade;`);
  }

  override down(): void {
    this.addSql('drop table if exists "mcp_resource_subscriptions";');
  }
}
