import { Migration } from '@mikro-orm/migrations';

/**
 * A per-workspace content revision for conditional reads of the sidebar tree: every transaction
 * that inserts, updates or deletes sections or articles raises its workspace's revision by one,
 * at commit (a deferred constraint trigger, once per workspace and transaction), so the bump is
 * the transaction's last lock and every process reads the same number once the change commits.
 */
export class Migration20261124020000_content_revision extends Migration {
  override up(): void {
    this.addSql('alter table "workspaces" add column "content_revision" bigint not null default 0;');
    this.addSql(`create or replace function wks_bump_content_revision() returns trigger language plpgsql as $$
      declare
        ws uuid;
        flag text;
      begin
        if tg_op = 'DELETE' then ws := old.workspace_id; else ws := new.workspace_id; end if;
        flag := 'wks.revision_' || replace(ws::text, '-', '');
        if current_setting(flag, true) is distinct from 'bumped' then
          perform set_config(flag, 'bumped', true);
          update workspaces set content_revision = content_revision + 1 where id = ws;
        end if;
        return null;
      end $$;`);
    for (const table of ['sections', 'articles']) {
      this.addSql(`create constraint trigger "${table}_content_revision" after insert or update or delete on "${table}"
        deferrable initially deferred for each row execute function wks_bump_content_revision();`);
    }
  }

  override down(): void {
    for (const table of ['sections', 'articles']) this.addSql(`drop trigger "${table}_content_revision" on "${table}";`);
    this.addSql('drop function wks_bump_content_revision();');
    this.addSql('alter table "workspaces" drop column "content_revision";');
  }
}
