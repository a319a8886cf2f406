import { Migration } from '@mikro-orm/migrations';

/**
 * Who minted an agent key: the signed-in admin or owner who created it (null when the admin token
 * did, and for keys created before this migration). A key acts, and is audited, as its own member;
 * this records who put that power in an agent's hands. A minting member who is deleted leaves null.
 */
export class Migration20261204020000_agent_key_minted_by extends Migration {
  override up(): void {
    this.addSql('alter table "agent_keys" add column "created_by_member_id" uuid null;');
    this.addSql(
      `alter table "agent_keys" add constraint "agent_keys_created_by_member_id_foreign" foreign key ("created_by_member_id")
        references "members" ("id") on update cascade on delete set null;`,
    );
  }

  override down(): void {
    this.addSql('alter table "agent_keys" drop constraint "agent_keys_created_by_member_id_foreign";');
    this.addSql('alter table "agent_keys" drop column "created_by_member_id";');
  }
}
