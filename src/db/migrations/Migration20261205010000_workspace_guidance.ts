import { Migration } from '@mikro-orm/migrations';

/** A workspace's guidance for agents: Markdown its administrators write, handed out in MCP's instructions and /llms.txt. */
export class Migration20261205010000_workspace_guidance extends Migration {
  override up(): void {
    this.addSql(`alter table "workspaces" add column "agent_guidance" text not null default '', add column "agent_guidance_updated_at" timestamptz null;`);
  }

  override down(): void {
    this.addSql('alter table "workspaces" drop column "agent_guidance", drop column "agent_guidance_updated_at";');
  }
}
