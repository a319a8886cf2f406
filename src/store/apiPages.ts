/** Statements on the articles generated from a workspace's OpenAPI spec (api_state 'generated', or 'detached': kept, never rewritten by a sync). */
import { articleVisible } from './visibility.js';
import { pgArray, sql, type SqlTarget } from '../db/sql.js';
import type { SpecOperation } from '../openapi/parsedSpec.js';
import { ENQUEUE_EMBEDDING } from './embeddings.js';

/**
 * Pages are written a few at a time: on the embedded database every statement runs on the main
 * thread, and the event loop may stall at most 50 ms even on a loaded machine. Each page write also
 * records its revision and the page's word pairs (the phrase index), so a statement of 3 pages or
 * ~15 KB of Markdown takes ~8 ms (5 pages took ~11 ms and reached 50 ms on a loaded CI machine;
 * 20 pages 61 ms; 200 pages up to 300 ms). More statements cost little: they share one transaction.
 */
const BATCH = { rows: 3, bytes: 15_000 };

/** `items` cut into batches of at most BATCH.rows items and about BATCH.bytes of `size`. */
function batches<T>(items: T[], size: (item: T) => number): T[][] {
  const out: T[][] = [];
  let current: T[] = [];
  let bytes = 0;
  for (const item of items) {
    if (current.length && (current.length >= BATCH.rows || bytes + size(item) > BATCH.bytes)) {
      out.push(current);
      current = [];
      bytes = 0;
    }
    current.push(item);
    bytes += size(item);
  }
  if (current.length) out.push(current);
  return out;
}

/** A generated (or detached) page as the database gives it. */
export interface ApiPageRow {
  slug: string;
  title: string;
  section: string;
  position: number;
  api_operation_key: string;
  api_method: string | null;
  api_path: string | null;
  api_state: string;
}

/** A generated or detached page as a sync compares it with the spec's operation. */
export interface OperationPageRow {
  id: number;
  slug: string;
  key: string;
  hash: string;
  state: string;
}

/** A new generated page: where it goes, its slug, and the operation it renders. */
export interface NewPage {
  sectionId: number;
  slug: string;
  position: number;
  op: SpecOperation;
}

/** The workspace's generated and detached pages that `canSee` allows, with their sections, in sidebar order. */
export async function visiblePageRows(db: SqlTarget, workspaceId: string, canSee: boolean): Promise<ApiPageRow[]> {
  return sql<ApiPageRow>(
    db,
    `select a.slug, a.title, s.key as section, a.position, a.api_operation_key, a.api_method, a.api_path, a.api_state
       from articles a join sections s on s.id = a.section_id
      where a.workspace_id = ? and a.api_state is not null and ${articleVisible('a', 's')} order by s.position, s.id, a.position, a.id`,
    [workspaceId, canSee],
  );
}

/** The page with `slug` (generated or detached) and its state, its row locked for the rest of the transaction. */
export async function lockPage(db: SqlTarget, workspaceId: string, slug: string): Promise<{ id: number; api_state: string } | undefined> {
  const [row] = await sql<{ id: number; api_state: string }>(
    db,
    `select id, api_state from articles where workspace_id = ? and slug = ? and api_state is not null for update`,
    [workspaceId, slug],
  );
  return row;
}

/** Marks a page detached (sync no longer rewrites it) as its next version. */
export async function markPageDetached(db: SqlTarget, id: number, now: Date): Promise<void> {
  await sql(db, `update articles set api_state = 'detached', version = version + 1, updated_at = ? where id = ?`, [now, id]);
}

/** The key of the section holding the page with `slug` (generated or detached), if there is such a page. */
export async function pageSectionKey(db: SqlTarget, workspaceId: string, slug: string): Promise<{ key: string } | undefined> {
  const [row] = await sql<{ key: string }>(
    db,
    `select s.key from articles a join sections s on s.id = a.section_id where a.workspace_id = ? and a.slug = ? and a.api_state is not null`,
    [workspaceId, slug],
  );
  return row;
}

/** Every page of the workspace that renders an operation, locked for the rest of the transaction. */
export async function lockOperationPages(db: SqlTarget, workspaceId: string): Promise<OperationPageRow[]> {
  return sql<OperationPageRow>(
    db,
    `select id, slug, api_operation_key as key, api_operation_hash as hash, api_state as state from articles
      where workspace_id = ? and api_operation_key is not null for update`,
    [workspaceId],
  );
}

/** Rewrites pages from their changed operations as their next versions, a batch at a time. */
export async function rewritePages(db: SqlTarget, changed: { id: number; op: SpecOperation }[], now: Date): Promise<void> {
  for (const part of batches(changed, (c) => c.op.markdown.length)) {
    await sql(
      db,
      `update articles a set title = v.title, markdown = v.markdown, api_operation_hash = v.hash, api_method = v.method, api_path = v.path, version = a.version + 1, updated_at = ?
         from (values ${part.map(() => '(?::int, ?, ?, ?, ?, ?)').join(', ')}) as v(id, title, markdown, hash, method, path) where a.id = v.id`,
      [now, ...part.flatMap(({ id, op }) => [id, op.title, op.markdown, op.hash, op.method, op.path])],
    );
  }
}

/** Queues the pages of these operations for embedding. */
export async function enqueuePageEmbeddings(db: SqlTarget, workspaceId: string, operationKeys: string[]): Promise<void> {
  await sql(
    db,
    ENQUEUE_EMBEDDING('article', 'select id, workspace_id from articles where workspace_id = ? and api_operation_key = any(?::text[])'),
    [workspaceId, pgArray(operationKeys)],
  );
}

/** Inserts STABLE public pages generated from operations, a batch at a time. */
export async function insertPageRows(db: SqlTarget, workspaceId: string, pages: NewPage[], now: Date): Promise<void> {
  const rows = pages.map(({ sectionId, slug, position, op }) => [
    workspaceId,
    sectionId,
    slug,
    op.title,
    op.markdown,
    position,
    now,
    now,
    now,
    op.key,
    op.hash,
    op.method,
    op.path,
  ]);
  for (const part of batches(rows, (row) => (row[4] as string).length)) {
    await sql(
      db,
      `insert into articles (workspace_id, section_id, slug, title, markdown, status, visibility, position, version, created_at, updated_at, published_at, api_operation_key, api_operation_hash, api_state, api_method, api_path)
       values ${part.map(() => `(?, ?, ?, ?, ?, 'STABLE', 'public', ?, 1, ?, ?, ?, ?, ?, 'generated', ?, ?)`).join(', ')}`,
      part.flat(),
    );
  }
}

/** Deletes the workspace's still-generated pages; the ids and sections of those it deleted. */
export async function deleteGeneratedPages(db: SqlTarget, workspaceId: string): Promise<{ id: number; section_id: number }[]> {
  return deletePages(db, workspaceId, `api_state = 'generated'`, []);
}

/** Deletes the workspace's pages with these ids; the ids and sections of those it deleted. */
export async function deletePagesById(db: SqlTarget, workspaceId: string, ids: number[]): Promise<{ id: number; section_id: number }[]> {
  return deletePages(db, workspaceId, 'id = any(?::int[])', [pgArray(ids)]);
}

async function deletePages(
  db: SqlTarget,
  workspaceId: string,
  where: string,
  params: unknown[],
): Promise<{ id: number; section_id: number }[]> {
  return sql<{ id: number; section_id: number }>(db, `delete from articles where workspace_id = ? and ${where} returning id, section_id`, [
    workspaceId,
    ...params,
  ]);
}

/** The operation key and slug of every generated or detached page, and whether `canSee` allows it. */
export async function pageVisibility(
  db: SqlTarget,
  workspaceId: string,
  canSee: boolean,
): Promise<{ key: string; slug: string; visible: boolean }[]> {
  return sql<{ key: string; slug: string; visible: boolean }>(
    db,
    `select a.api_operation_key as key, a.slug, ${articleVisible('a', 's')} as visible from articles a join sections s on s.id = a.section_id
      where a.workspace_id = ? and a.api_state is not null`,
    [canSee, workspaceId],
  );
}

/** The page with `slug` and its section (whatever its state and visibility). */
export async function pageRowBySlug(db: SqlTarget, workspaceId: string, slug: string): Promise<ApiPageRow> {
  const [row] = await sql<ApiPageRow>(
    db,
    `select a.slug, a.title, s.key as section, a.position, a.api_operation_key, a.api_method, a.api_path, a.api_state from articles a
      join sections s on s.id = a.section_id where a.workspace_id = ? and a.slug = ?`,
    [workspaceId, slug],
  );
  return row;
}
