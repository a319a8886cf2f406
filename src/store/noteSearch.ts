/** Statements that read memory search's hits and turn on and catch up the notes' embeddings. */
import { pgArray, sql, type SqlTarget } from '../db/sql.js';
import { headlineSql } from './headline.js';
import { ENQUEUE_EMBEDDING } from './embeddings.js';

/** A search hit as the note search statements give it. */
export interface NoteHitRow {
  path: string;
  kind: string;
  tags: string[];
  updated_at: string;
  snippet: string | null;
}

/**
 * The notes of `ids` in this workspace, in that order (`ord`, from 1), with snippets marking
 * `tsquery` (a tsquery constant, or null): of the passage that matched (`passages[i]`, where the
 * note has one still stored), else of the body (notes deleted meanwhile are left out).
 */
export async function readNoteHits(
  db: SqlTarget,
  workspaceId: string,
  tsquery: string | null,
  ids: number[],
  passages: (number | null)[] = [],
): Promise<(NoteHitRow & { ord: string })[]> {
  if (!ids.length) return [];
  return sql<NoteHitRow & { ord: string }>(
    db,
    `select n.path, n.kind, n.tags, n.updated_at, i.ord,
            ${headlineSql('coalesce(e.passage_text, n.body)', "coalesce(?::tsquery, ''::tsquery)")} as snippet
       from unnest(?::int[], ?::int[]) with ordinality as i(id, passage, ord) join memory_notes n on n.id = i.id and n.workspace_id = ?
       left join embeddings e on i.passage is not null and e.item_type = 'note' and e.item_id = i.id and e.passage = i.passage
      order by i.ord`,
    [tsquery, pgArray(ids), pgArray(ids.map((_, i) => passages[i])), workspaceId],
  );
}

/** Turns on embeddings for a workspace's notes (embedding_stamps.notes_embedded); whether this call turned them on. */
export async function markNotesEmbedded(db: SqlTarget, workspaceId: string): Promise<boolean> {
  const turned = await sql(
    db,
    `insert into embedding_stamps (workspace_id, notes_embedded) values (?, true)
     on conflict (workspace_id) do update set notes_embedded = true where not embedding_stamps.notes_embedded
     returning 1`,
    [workspaceId],
  );
  return turned.length > 0;
}

/** Queues the notes of a workspace (`?`) that have neither an embedding nor a place in the queue. */
const QUEUE_UNEMBEDDED_NOTES = ENQUEUE_EMBEDDING(
  'note',
  `select n.id, n.workspace_id from memory_notes n
    where n.workspace_id = ?
      and not exists (select 1 from embeddings e where e.item_type = 'note' and e.item_id = n.id)
      and not exists (select 1 from embedding_queue q where q.item_type = 'note' and q.item_id = n.id)`,
);

/** Queues for embedding the notes of a workspace that have neither an embedding nor a place in the queue; how many it queued. */
export async function queueUnembeddedNotes(db: SqlTarget, workspaceId: string): Promise<number> {
  const queued = await sql(db, `${QUEUE_UNEMBEDDED_NOTES} returning 1`, [workspaceId]);
  return queued.length;
}

/** A note as a draft quotes it. */
export interface NoteBodyRow {
  id: number;
  path: string;
  kind: string;
  tags: string[];
  version: number;
  updated_at: string;
  body: string;
}

/** The notes of `ids` in this workspace, in that order (notes deleted meanwhile are left out). */
export async function notesById(db: SqlTarget, workspaceId: string, ids: number[]): Promise<NoteBodyRow[]> {
  if (!ids.length) return [];
  return sql<NoteBodyRow>(
    db,
    `select n.id, n.path, n.kind, n.tags, n.version, n.updated_at, n.body
       from unnest(?::int[]) with ordinality as i(id, ord) join memory_notes n on n.id = i.id and n.workspace_id = ?
      order by i.ord`,
    [pgArray(ids), workspaceId],
  );
}
