import { Migration } from '@mikro-orm/migrations';

/**
 * When a note was last read, kept beside the note instead of in its row: a note row holds its
 * body and its stored search vector inline (see inline_search_vectors), usually more than half a
 * page, so updating `accessed_at` in it could never be a HOT update: every read rewrote the whole
 * row and inserted it again into every index of memory_notes, the search GIN index included.
 * A row here is a few dozen bytes on pages kept half empty (fillfactor 50), so a read's touch is
 * a HOT update of it. `memory_notes.accessed_at` stays the time as of the note's last write or
 * import; a note's access time is the later of the two (a write folds this row's time into the note).
 */
export class Migration20261128040000_note_access extends Migration {
  override up(): void {
    this.addSql(`create table "memory_note_access" (
      "note_id" int not null, "workspace_id" uuid not null, "accessed_at" timestamptz not null,
      constraint "memory_note_access_pkey" primary key ("note_id"),
      constraint "memory_note_access_note_id_foreign" foreign key ("note_id") references "memory_notes" ("id") on delete cascade
    ) with (fillfactor = 50);`);
  }

  override down(): void {
    this.addSql(`update "memory_notes" n set "accessed_at" = a."accessed_at" from "memory_note_access" a where a."note_id" = n."id" and a."accessed_at" > n."accessed_at";`);
    this.addSql('drop table if exists "memory_note_access";');
  }
}
