/** Statements on articles (read with their section's key), and the workspace's content revision that names their tree. */
import { articleVisible } from './visibility.js';
import { pgArray, sql, type SqlTarget } from '../db/sql.js';
import { slugStem } from '../slug.js';
import type { ArticleStatus } from '../entities/Article.js';
import type { Visibility } from '../entities/Section.js';

/** SQL: the article `a` in section `s` is visible; its placeholder is the caller's seesRestricted. */
const ARTICLE_VISIBLE = articleVisible('a', 's');

const ARTICLE_COLUMNS =
  'a.id, a.workspace_id, a.section_id, a.slug, a.title, a.markdown, a.status, a.visibility, a.position, a.version, a.created_at, a.updated_at, a.published_at, a.api_operation_key, a.api_operation_hash, a.api_state, a.api_method, a.api_path, s.key as section_key';

/** An article row with its section's key (ARTICLE_COLUMNS). */
export interface ArticleRow {
  id: number;
  workspace_id: string;
  section_id: number;
  slug: string;
  title: string;
  markdown: string;
  status: ArticleStatus;
  visibility: Visibility;
  position: number;
  version: number;
  created_at: string;
  updated_at: string;
  published_at: string | null;
  api_operation_key: string | null;
  api_operation_hash: string | null;
  api_state: string | null;
  api_method: string | null;
  api_path: string | null;
  section_key: string;
}

/** The workspace's content revision (raised by every change to its sections and articles), as text. */
export async function contentRevision(db: SqlTarget, workspaceId: string): Promise<string> {
  const [{ revision }] = await sql<{ revision: string }>(
    db,
    'select content_revision::text as revision from workspaces where id = ?',
    [workspaceId],
    'workspace_content_revision',
  );
  return revision;
}

/** The workspace's articles that `canSee` allows (of one status if given), in sidebar order, without their Markdown. */
export async function treeArticles(
  db: SqlTarget,
  workspaceId: string,
  canSee: boolean,
  status?: ArticleStatus | null,
): Promise<ArticleRow[]> {
  const params: unknown[] = [workspaceId, canSee];
  let where = `a.workspace_id = ? and ${ARTICLE_VISIBLE}`;
  if (status) {
    where += ' and a.status = ?';
    params.push(status);
  }
  // The tree lists articles, it does not carry their Markdown.
  return sql<ArticleRow>(
    db,
    `select ${ARTICLE_COLUMNS.replace('a.markdown', "'' as markdown")} from articles a join sections s on s.id = a.section_id where ${where}
      order by a.section_id, a.position, a.id`,
    params,
  );
}

/** The article with `slug` if `canSee` allows it (its row locked with `lock`). */
export async function articleBySlug(
  db: SqlTarget,
  workspaceId: string,
  slug: string,
  canSee: boolean,
  lock: boolean,
): Promise<ArticleRow | undefined> {
  const [row] = await sql<ArticleRow>(
    db,
    `select ${ARTICLE_COLUMNS} from articles a join sections s on s.id = a.section_id
      where a.workspace_id = ? and a.slug = ? and ${ARTICLE_VISIBLE}${lock ? ' for update of a' : ''}`,
    [workspaceId, slug, canSee],
  );
  return row;
}

/** The article with `id`. */
export async function articleById(db: SqlTarget, id: number): Promise<ArticleRow> {
  const [row] = await sql<ArticleRow>(
    db,
    `select ${ARTICLE_COLUMNS} from articles a join sections s on s.id = a.section_id where a.id = ?`,
    [id],
  );
  return row;
}

/** How many articles a section holds. */
export async function countSectionArticles(db: SqlTarget, sectionId: number): Promise<number> {
  const [{ count }] = await sql<{ count: number }>(db, 'select count(*)::int as count from articles where section_id = ?', [sectionId]);
  return count;
}

/** The workspace's slugs that nextFreeSlug(base) must not make: every one starting with slugStem(base). */
export async function slugsLike(db: SqlTarget, workspaceId: string, base: string): Promise<string[]> {
  // Slugs hold only [a-z0-9-]: no LIKE wildcard to escape.
  const taken = await sql<{ slug: string }>(db, `select slug from articles where workspace_id = ? and slug like ?`, [
    workspaceId,
    `${slugStem(base)}%`,
  ]);
  return taken.map((t) => t.slug);
}

/** Every slug of the workspace. */
export async function workspaceSlugs(db: SqlTarget, workspaceId: string): Promise<string[]> {
  return (await sql<{ slug: string }>(db, 'select slug from articles where workspace_id = ?', [workspaceId])).map((r) => r.slug);
}

/** The number of articles in each section of the workspace, by section id. */
export async function articleCountsBySection(db: SqlTarget, workspaceId: string): Promise<Map<number, number>> {
  return new Map(
    (
      await sql<{ section_id: number; n: number }>(
        db,
        'select section_id, count(*)::int as n from articles where workspace_id = ? group by section_id',
        [workspaceId],
      )
    ).map((r) => [r.section_id, r.n]),
  );
}

/** Inserts a DRAFT at version 1; its id. */
export async function insertDraft(
  db: SqlTarget,
  row: {
    workspaceId: string;
    sectionId: number;
    slug: string;
    title: string;
    markdown: string;
    visibility: Visibility;
    position: number;
    now: Date;
  },
): Promise<number> {
  const [inserted] = await sql<{ id: number }>(
    db,
    `insert into articles (workspace_id, section_id, slug, title, markdown, status, visibility, position, version, created_at, updated_at)
     values (?, ?, ?, ?, ?, 'DRAFT', ?, ?, 1, ?, ?) returning id`,
    [row.workspaceId, row.sectionId, row.slug, row.title, row.markdown, row.visibility, row.position, row.now, row.now],
  );
  return inserted.id;
}

/** Writes an article's title, Markdown, visibility, status and publication time as its next version. */
export async function writeArticle(
  db: SqlTarget,
  id: number,
  next: { title: string; markdown: string; visibility: Visibility; status: ArticleStatus; publishedAt: Date | null },
  now: Date,
): Promise<void> {
  await sql(
    db,
    'update articles set title = ?, markdown = ?, visibility = ?, status = ?, published_at = ?, version = version + 1, updated_at = ? where id = ?',
    [next.title, next.markdown, next.visibility, next.status, next.publishedAt, now, id],
  );
}

/** Writes an article's title and Markdown as its next version. */
export async function writeArticleText(db: SqlTarget, id: number, title: string, markdown: string, now: Date): Promise<void> {
  await sql(db, 'update articles set title = ?, markdown = ?, version = version + 1, updated_at = ? where id = ?', [
    title,
    markdown,
    now,
    id,
  ]);
}

/** Raises an article's version (a change of something other than its columns, such as its place). */
export async function bumpVersion(db: SqlTarget, id: number, now: Date): Promise<void> {
  await sql(db, 'update articles set version = version + 1, updated_at = ? where id = ?', [now, id]);
}

/** The articles of two sections (ids and sections) in position order. */
export async function articlesOfSections(db: SqlTarget, firstId: number, secondId: number): Promise<{ id: number; section_id: number }[]> {
  return sql<{ id: number; section_id: number }>(
    db,
    'select id, section_id from articles where section_id in (?, ?) order by position, id',
    [firstId, secondId],
  );
}

/** Puts articles at [id, section id, position], writing only those whose place changes. */
export async function placeArticles(db: SqlTarget, moves: [number, number, number][]): Promise<void> {
  const values = moves.map(() => '(?::int, ?::int, ?::int)').join(', ');
  await sql(
    db,
    `update articles a set section_id = v.section_id, position = v.position from (values ${values}) as v(id, section_id, position)
        where a.id = v.id and (a.section_id <> v.section_id or a.position <> v.position)`,
    moves.flat(),
  );
}

/** Renumbers the articles of sections from 0 in their order, closing the gaps deleted articles left. */
export async function closePositionGaps(db: SqlTarget, sectionIds: number[]): Promise<void> {
  await sql(
    db,
    `update articles a set position = r.pos from (select id, row_number() over (partition by section_id order by position, id) - 1 as pos
      from articles where section_id = any(?::int[])) r
      where a.id = r.id and a.position <> r.pos`,
    [pgArray(sectionIds)],
  );
}

/** Whether the article with `slug` is visible to `canSee` (undefined when the workspace has no such article). */
export async function articleVisibility(
  db: SqlTarget,
  workspaceId: string,
  slug: string,
  canSee: boolean,
): Promise<{ visible: boolean } | undefined> {
  const [article] = await sql<{ visible: boolean }>(
    db,
    `select ${articleVisible('a', 's')} as visible from articles a join sections s on s.id = a.section_id where a.workspace_id = ? and a.slug = ?`,
    [canSee, workspaceId, slug],
  );
  return article;
}

/** The slug of the article with `id`, or null. */
export async function slugById(db: SqlTarget, id: number): Promise<string | null> {
  const [row] = await sql<{ slug: string }>(db, 'select slug from articles where id = ?', [id]);
  return row?.slug ?? null;
}
