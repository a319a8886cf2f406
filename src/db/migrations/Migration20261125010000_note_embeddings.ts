import { Migration } from '@mikro-orm/migrations';

/**
 * Memory notes are embedded like articles (semantic and hybrid memory search), but only in
 * workspaces that have asked for it: the first semantic or hybrid memory search turns the flag on
 * and queues the workspace's notes; from then on, a write that changes a note queues it.
 */
export class Migration20261125010000_note_embeddings extends Migration {
  override up(): void {
    this.addSql('alter table "embedding_stamps" add column "notes_embedded" boolean not null default false;');
  }

  override down(): void {
    this.addSql(`delete from "embedding_queue" where "item_type" = 'note';`);
    this.addSql(`delete from "embeddings" where "item_type" = 'note';`);
    this.addSql('alter table "embedding_stamps" drop column "notes_embedded";');
  }
}
