/** Statements on embeddings, embedding_queue and embedding_stamps: queueing items, storing vectors and reading them back. */
import type { EntityManager } from '@mikro-orm/postgresql';
import { pgArray, sql, type SqlTarget } from '../db/sql.js';

/** What gets embedded: searchable content, and the questions that content-gap groups cluster. */
export type ItemType = 'article' | 'changelog' | 'gap' | 'search' | 'note';

/**
 * SQL queueing items of one type for (re-)embedding: `items` is a query of (item id, workspace id)
 * rows. An item queued again starts afresh (unclaimed, no attempts counted).
 */
export const ENQUEUE_EMBEDDING = (itemType: ItemType, items: string) =>
  `insert into embedding_queue (item_type, item_id, workspace_id, enqueued_at, claimed_until, attempts)
   select '${itemType}', item.id, item.workspace_id, clock_timestamp(), null, 0 from (${items}) as item(id, workspace_id)
   on conflict (item_type, item_id) do update set enqueued_at = excluded.enqueued_at, claimed_until = null, attempts = 0`;

/** The content that is embedded, as rows `t` of (id, workspace_id): notes only of workspaces that search them by meaning. */
const CONTENT = {
  article: 'articles t',
  changelog: 'changelog_entries t',
  note: 'memory_notes t join embedding_stamps s on s.workspace_id = t.workspace_id and s.notes_embedded',
} as const;

/** A type of content that is embedded (articles, changelog entries, memory notes). */
export type ContentType = keyof typeof CONTENT;

/**
 * Queues items of one type and workspace for embedding, by id (an import's fresh rows); items that
 * are not embedded (notes of a workspace that does not search them by meaning) are skipped.
 */
export async function enqueueItems(db: SqlTarget, itemType: ContentType, workspaceId: string, ids: readonly number[]): Promise<void> {
  await sql(
    db,
    ENQUEUE_EMBEDDING(itemType, `select t.id, t.workspace_id from ${CONTENT[itemType]} where t.workspace_id = ? and t.id = any(?::int[])`),
    [workspaceId, pgArray(ids)],
  );
}

/** Queues every item of one type for embedding, of one workspace or (null) of every workspace (the operator's backfill); how many. */
export async function enqueueAllItems(db: SqlTarget, itemType: ContentType, workspaceId: string | null): Promise<number> {
  const items = `select t.id, t.workspace_id from ${CONTENT[itemType]} ${workspaceId ? 'where t.workspace_id = ?' : ''}`;
  return (await sql(db, `${ENQUEUE_EMBEDDING(itemType, items)} returning 1`, workspaceId ? [workspaceId] : [])).length;
}

/** How many items wait in the queue, of one workspace or (null) of every workspace. */
export async function queuedItemCount(db: SqlTarget, workspaceId: string | null): Promise<number> {
  const [{ n }] = await sql<{ n: number }>(
    db,
    `select count(*)::int as n from embedding_queue ${workspaceId ? 'where workspace_id = ?' : ''}`,
    workspaceId ? [workspaceId] : [],
  );
  return n;
}

/** Marks an item for (re-)embedding; call inside the write's transaction so both commit together. */
export async function enqueueEmbedding(em: EntityManager, workspaceId: string, itemType: ItemType, itemId: number): Promise<void> {
  await sql(em, ENQUEUE_EMBEDDING(itemType, 'select ?::int, ?::uuid'), [itemId, workspaceId]);
}

/** Bumps a workspace's embedding stamp (see EmbeddingStamp); returns the new revision. */
const BUMP = (removals: number) =>
  `insert into embedding_stamps (workspace_id, revision, removals) values (?, 1, ${removals})
   on conflict (workspace_id) do update set revision = embedding_stamps.revision + 1, removals = embedding_stamps.removals + ${removals}
   returning revision`;

/** Drops items' embeddings and pending work (inside the delete's transaction). */
export async function removeEmbeddings(em: EntityManager, itemType: ItemType, itemIds: number[]): Promise<void> {
  if (!itemIds.length) return;
  const ids = pgArray(itemIds);
  const removed = await sql(em, 'delete from embeddings where item_type = ? and item_id = any(?::int[]) returning workspace_id', [
    itemType,
    ids,
  ]);
  for (const workspaceId of new Set(removed.map((r) => r.workspace_id as string))) await sql(em, BUMP(1), [workspaceId]);
  await sql(em, 'delete from embedding_queue where item_type = ? and item_id = any(?::int[])', [itemType, ids]);
}

/**
 * CTEs (for a statement's WITH list) dropping the embeddings and pending work of the items of one
 * type that the earlier CTE `deleted` returned (column `id`), bumping the stamp of `:workspace`
 * when an embedding went: removeEmbeddings inside a single statement.
 */
export const UNEMBED_DELETED = (itemType: ItemType) =>
  `unembedded as (delete from embeddings e using deleted d where e.item_type = '${itemType}' and e.item_id = d.id returning e.workspace_id),
   unqueued as (delete from embedding_queue q using deleted d where q.item_type = '${itemType}' and q.item_id = d.id),
   restamped as (update embedding_stamps set revision = revision + 1, removals = removals + 1
                  where workspace_id = :workspace and exists (select 1 from unembedded))`;

/** Whether the search migration could add the pgvector column `embedding`. */
export async function hasVectorColumn(em: EntityManager): Promise<boolean> {
  const rows = await sql(em, `select 1 from information_schema.columns where table_name = 'embeddings' and column_name = 'embedding'`);
  return rows.length > 0;
}

/**
 * Lets an HNSW search of this session return up to 1,000 passages (pgvector's default, 40, would
 * leave a handful of documents once passages are grouped by document); the passages migration
 * sets the same for the database's new sessions.
 */
export async function widenVectorSearch(em: EntityManager): Promise<void> {
  await sql(em, `select set_config('hnsw.ef_search', '1000', false)`);
}

/** Bumps a workspace's embedding stamp for a stored vector (the row stays locked until commit); the new revision. */
export async function bumpStamp(em: EntityManager, workspaceId: string): Promise<string> {
  const [{ revision }] = await sql<{ revision: string }>(em, BUMP(0), [workspaceId]);
  return revision;
}

/** One passage's vector as stored: float32 bytes, the pgvector text (`[…]`) when the column takes it, and the Markdown it covers. */
export interface StoredPassage {
  bytes: Buffer;
  vector: string | null;
  text: string | null;
}

/**
 * Replaces an item's vectors by `passages` (passage i as row i), inside the worker's transaction:
 * every earlier passage goes with them, so an item never ranks by a mix of old and new passages.
 */
export async function replaceEmbedding(
  em: EntityManager,
  item: { itemType: ItemType; itemId: number; workspaceId: string; model: string; revision: string },
  passages: StoredPassage[],
): Promise<void> {
  await sql(em, 'delete from embeddings where item_type = ? and item_id = ?', [item.itemType, item.itemId]);
  const withVector = passages.some((p) => p.vector !== null);
  const row = `(?, ?, ?, ?, ?, ?, ?, ${withVector ? '?::vector, ' : ''}?, clock_timestamp())`;
  for (let from = 0; from < passages.length; from += 100) {
    const chunk = passages.slice(from, from + 100);
    await sql(
      em,
      `insert into embeddings (item_type, item_id, passage, workspace_id, model, vec, passage_text, ${withVector ? 'embedding, ' : ''}revision, updated_at)
       values ${chunk.map(() => row).join(', ')}`,
      chunk.flatMap((p, i) => [
        item.itemType,
        item.itemId,
        from + i,
        item.workspaceId,
        item.model,
        p.bytes,
        p.text,
        ...(withVector ? [p.vector] : []),
        item.revision,
      ]),
    );
  }
}

/** An item as the pgvector ranking gives it: its best passage among the nearest, that passage's similarity, and its score. */
export interface NearestRow {
  item_type: ItemType;
  item_id: number;
  passage: number;
  similarity: string;
  score: string;
}

/**
 * The `limit` items of `types` nearest to `vector` (pgvector text) among the `candidates` nearest
 * passages of the HNSW-indexed column, ranked as the in-process ranking ranks them: by the mean
 * similarity of each item's `best` most similar passages (of those among the candidates).
 */
export function nearestByVector(
  em: SqlTarget,
  workspaceId: string,
  types: ItemType[],
  model: string,
  vector: string,
  options: { limit: number; candidates: number; best: number },
): Promise<NearestRow[]> {
  return sql<NearestRow>(
    em,
    `select item_type, item_id, min(passage) filter (where nth = 1) as passage, max(similarity) as similarity,
            avg(similarity) filter (where nth <= :best) as score
       from (select item_type, item_id, passage, similarity,
                    row_number() over (partition by item_type, item_id order by similarity desc, passage) as nth
               from (select item_type, item_id, passage, 1 - (embedding <=> :vector::vector) as similarity from embeddings
                      where workspace_id = :workspace and item_type = any(:types::text[]) and model = :model and embedding is not null
                      order by embedding <=> :vector::vector limit :candidates) near) ranked
      group by item_type, item_id
      order by score desc, item_type, item_id limit :limit`,
    { vector, workspace: workspaceId, types: pgArray(types), model, ...options },
  );
}

/** A workspace's EmbeddingStamp (bigints as text), if it has one. */
export async function readStamp(em: SqlTarget, workspaceId: string): Promise<{ revision: string; removals: string } | undefined> {
  const [stamp] = await sql<{ revision: string; removals: string }>(
    em,
    'select revision::text, removals::text from embedding_stamps where workspace_id = ?',
    [workspaceId],
  );
  return stamp;
}

/** A stored passage vector as read for the in-process cache. */
export interface VectorRow {
  item_type: ItemType;
  item_id: number;
  passage: number;
  model: string;
  vec: Buffer;
}

/** The passage vectors of some items of a workspace, of one model (float32 bytes), an item's passages together. */
export function vectorsOfItems(
  em: SqlTarget,
  workspaceId: string,
  model: string,
  items: { itemType: ItemType; itemId: number }[],
): Promise<VectorRow[]> {
  return sql<VectorRow>(
    em,
    `select e.item_type, e.item_id, e.passage, e.model, e.vec from unnest(?::text[], ?::int[]) as i(item_type, item_id)
       join embeddings e on e.item_type = i.item_type and e.item_id = i.item_id
      where e.workspace_id = ? and e.model = ? order by e.item_type, e.item_id, e.passage`,
    [pgArray(items.map((i) => i.itemType)), pgArray(items.map((i) => i.itemId)), workspaceId, model],
  );
}

/** The passage vectors of `types` written after `revision`, of every model, an item's passages together and in order. */
export function vectorsSince(em: SqlTarget, workspaceId: string, revision: string, types: ItemType[]): Promise<VectorRow[]> {
  return sql<VectorRow>(
    em,
    'select item_type, item_id, passage, model, vec from embeddings where workspace_id = ? and revision > ? and item_type = any(?::text[]) order by item_type, item_id, passage',
    [workspaceId, revision, pgArray(types)],
  );
}

/** Every passage vector of `types` made by `model`, an item's passages together and in order. */
export function vectorsOfModel(em: SqlTarget, workspaceId: string, types: ItemType[], model: string): Promise<VectorRow[]> {
  return sql<VectorRow>(
    em,
    'select item_type, item_id, passage, model, vec from embeddings where workspace_id = ? and item_type = any(?::text[]) and model = ? order by item_type, item_id, passage',
    [workspaceId, pgArray(types), model],
  );
}

/** True while items of these types in the workspace still wait for their embedding. */
export async function hasPendingEmbeddings(em: SqlTarget, workspaceId: string, types: ItemType[]): Promise<boolean> {
  const rows = await sql(em, 'select 1 from embedding_queue where workspace_id = ? and item_type = any(?::text[]) limit 1', [
    workspaceId,
    pgArray(types),
  ]);
  return rows.length > 0;
}

/** A queue row claimed for embedding. */
export interface ClaimedItem {
  item_type: ItemType;
  item_id: number;
  workspace_id: string;
  enqueued_at: Date;
}

/**
 * Claims up to `batch` queued items (of one workspace, if given) for `claimSeconds`, counting an
 * attempt: notes last, otherwise oldest first, skipping rows another process holds.
 */
export function claimQueued(em: SqlTarget, workspaceId: string | null, claimSeconds: number, batch: number): Promise<ClaimedItem[]> {
  return sql<ClaimedItem>(
    em,
    `update embedding_queue q set claimed_until = clock_timestamp() + interval '${claimSeconds} seconds', attempts = q.attempts + 1
        from (select item_type, item_id from embedding_queue
               where (claimed_until is null or claimed_until < clock_timestamp()) and (?::uuid is null or workspace_id = ?::uuid)
               order by item_type = 'note', enqueued_at limit ${batch} for update skip locked) c
       where q.item_type = c.item_type and q.item_id = c.item_id
       returning q.item_type, q.item_id, q.workspace_id, q.enqueued_at`,
    [workspaceId, workspaceId],
  );
}

/** Removes a claimed item from the queue unless it was queued again since (its text changed meanwhile). */
export async function dequeueEmbedded(em: EntityManager, item: ClaimedItem): Promise<void> {
  await sql(em, 'delete from embedding_queue where item_type = ? and item_id = ? and enqueued_at = ?', [
    item.item_type,
    item.item_id,
    item.enqueued_at,
  ]);
}

/**
 * The statement reading each type's text to embed by id (`?::int[]`); a type's rows are (id,
 * title, body): a document's body is Markdown cut into passages, a question's body is null.
 */
const TEXTS: Record<ItemType, string> = {
  article: `select id, title, markdown as body from articles where id = any(?::int[])`,
  changelog: `select id, title, markdown as body from changelog_entries where id = any(?::int[])`,
  gap: `select id, question as title, null as body from content_gap_reports where id = any(?::int[]) and question is not null and question <> ''`,
  search: `select id, query as title, null as body from search_log where id = any(?::int[])`,
  // A note is known by its path and tags as much as by its body: they head each of its passages.
  note: `select id, trim(path || ' ' || array_to_string(tags, ' ')) as title, body from memory_notes where id = any(?::int[])`,
};

/** The text to embed of items of one type (items deleted meanwhile are simply missing). */
export function textsToEmbed(
  em: SqlTarget,
  itemType: ItemType,
  itemIds: number[],
): Promise<{ id: number; title: string; body: string | null }[]> {
  return sql<{ id: number; title: string; body: string | null }>(em, TEXTS[itemType], [pgArray(itemIds)]);
}
