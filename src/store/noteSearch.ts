/** Statements that search memory_notes (full text, and the notes of an embedding ranking) and turn on and catch up their embeddings. */
import { pgArray, sql, type SqlTarget } from '../db/sql.js';
import { headlineSql } from './headline.js';
import { ENQUEUE_EMBEDDING } from './embeddings.js';

/** A search hit as the note search statements give it. */
export interface NoteHitRow {
  path: string;
  kind: string;
  tags: string[];
  updated_at: string;
  score: string | number;
  snippet: string | null;
}

/** A workspace's notes matching `q` (websearch syntax), best first, `limit` of them after `offset`, with snippets. */
export async function searchNotesFullText(
  db: SqlTarget,
  workspaceId: string,
  q: string,
  limit: number,
  offset: number,
): Promise<NoteHitRow[]> {
  return sql<NoteHitRow>(
    db,
    `with q as (select websearch_to_tsquery('english', ?) as query),
     hits as (
       select n.path, n.kind, n.tags, n.updated_at, n.body, ts_rank(n.search, q.query) as score
         from memory_notes n, q
        where n.workspace_id = ? and n.search @@ q.query
        order by score desc, n.path
        limit ? offset ?)
     select h.path, h.kind, h.tags, h.updated_at, h.score,
            ${headlineSql('h.body', 'q.query')} as snippet
       from hits h, q
      order by h.score desc, h.path`,
    [q, workspaceId, limit, offset],
  );
}

/** Ids of a workspace's best `limit` full-text matches for `q` (the hybrid's full-text ranking: no snippets). */
export async function rankNotesFullText(db: SqlTarget, workspaceId: string, q: string, limit: number): Promise<number[]> {
  const rows = await sql<{ id: number }>(
    db,
    `select n.id from memory_notes n, websearch_to_tsquery('english', ?) q
      where n.workspace_id = ? and n.search @@ q order by ts_rank(n.search, q) desc, n.path limit ?`,
    [q, workspaceId, limit],
  );
  return rows.map((r) => r.id);
}

/**
 * The notes of `ids` in this workspace, in that order (`ord`, from 1), with snippets for `q`: of
 * the passage that matched (`passages[i]`, where the note has one still stored), else of the body
 * (notes deleted meanwhile are left out).
 */
export async function readNoteHits(
  db: SqlTarget,
  workspaceId: string,
  q: string,
  ids: number[],
  passages: (number | null)[] = [],
): Promise<(NoteHitRow & { ord: string })[]> {
  if (!ids.length) return [];
  return sql<NoteHitRow & { ord: string }>(
    db,
    `select n.path, n.kind, n.tags, n.updated_at, i.ord,
            ${headlineSql('coalesce(e.passage_text, n.body)', "websearch_to_tsquery('english', ?)")} as snippet
       from unnest(?::int[], ?::int[]) with ordinality as i(id, passage, ord) join memory_notes n on n.id = i.id and n.workspace_id = ?
       left join embeddings e on i.passage is not null and e.item_type = 'note' and e.item_id = i.id and e.passage = i.passage
      order by i.ord`,
    [q, pgArray(ids), pgArray(ids.map((_, i) => passages[i])), workspaceId],
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
