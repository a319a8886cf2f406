import { Migration } from '@mikro-orm/migrations';

/**
 * A note's PUT no longer locks its workspace's row. The foreign key from memory_note_revisions to
 * workspaces made every revision insert (every update of a note) check the workspace with
 * `select … for key share`; concurrent PUTs in one workspace then share that lock on one row, so
 * each of them turned the row's locker into a new MultiXact of all lockers still running (on
 * PostgreSQL 15, 50 writers: ~17,000 MultiXact members a second, each lock change under the
 * workspace page's exclusive lock and in the WAL). With the key gone, the database alone ran the
 * note's update with its revision insert 9–10 % faster at 50 clients (1,438 → 1,581 and 1,831 →
 * 1,989 tps, alternated).
 *
 * Nothing is lost by it: a revision is only ever written by the statement that updates or deletes
 * its note, whose row (memory_notes, which keeps its foreign key) proves the workspace exists and is
 * locked by that statement; and deleting a workspace still deletes its revisions, by this trigger
 * instead of the key's cascade.
 */
export class Migration20261201010000_note_revisions_unlocked extends Migration {
  override up(): void {
    this.addSql('alter table "memory_note_revisions" drop constraint "memory_note_revisions_workspace_id_fkey";');
    this.addSql(`create function wks_delete_workspace_note_revisions() returns trigger language plpgsql as $$
      begin
        delete from memory_note_revisions where workspace_id = old.id;
        return old;
      end $$;`);
    this.addSql(`create trigger workspaces_delete_note_revisions after delete on "workspaces"
      for each row execute function wks_delete_workspace_note_revisions();`);
  }

  override down(): void {
    this.addSql('drop trigger workspaces_delete_note_revisions on "workspaces";');
    this.addSql('drop function wks_delete_workspace_note_revisions();');
    this.addSql('delete from "memory_note_revisions" r where not exists (select 1 from "workspaces" w where w.id = r.workspace_id);');
    this.addSql(
      'alter table "memory_note_revisions" add constraint "memory_note_revisions_workspace_id_fkey" foreign key ("workspace_id") references "workspaces" ("id") on delete cascade;',
    );
  }
}
