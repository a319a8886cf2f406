/** Statements on sections (with their visible article counts), and the workspace lock that serialises their list. */
import { articleVisible, sectionVisible } from './visibility.js';
import { sql, type SqlTarget } from '../db/sql.js';
import type { Visibility } from '../entities/Section.js';

const SECTION_COLUMNS = 's.id, s.workspace_id, s.key, s.label, s.visibility, s.position, s.created_at';

/** A row of `sections` (with its visible article count where a list needs it). */
export interface SectionRow {
  id: number;
  workspace_id: string;
  key: string;
  label: string;
  visibility: Visibility;
  position: number;
  created_at: string;
  article_count?: number;
}

/** The sections of a workspace that `canSee` allows, in sidebar order, each with its visible article count (one query). */
export async function visibleSections(db: SqlTarget, workspaceId: string, canSee: boolean): Promise<SectionRow[]> {
  return sql<SectionRow>(
    db,
    `select ${SECTION_COLUMNS}, count(a.id) filter (where ${articleVisible('a', 's')})::int as article_count
       from sections s left join articles a on a.section_id = s.id
      where s.workspace_id = ? and ${sectionVisible('s')}
      group by s.id order by s.position, s.id`,
    [canSee, workspaceId, canSee],
  );
}

/** The keys of a workspace's sections in position order. */
export async function sectionKeys(db: SqlTarget, workspaceId: string): Promise<string[]> {
  return (await sql<{ key: string }>(db, 'select key from sections where workspace_id = ? order by position', [workspaceId])).map(
    (s) => s.key,
  );
}

/** Moves the sections at `position` and after it one place down. */
export async function shiftSectionsFrom(db: SqlTarget, workspaceId: string, position: number): Promise<void> {
  await sql(db, 'update sections set position = position + 1 where workspace_id = ? and position >= ?', [workspaceId, position]);
}

/** Inserts a section; the row it wrote. */
export async function insertSectionRow(
  db: SqlTarget,
  row: {
    workspaceId: string;
    key: string;
    label: string;
    visibility: Visibility;
    position: number;
    apiTag: string | null;
    createdAt: Date;
  },
): Promise<SectionRow> {
  const [inserted] = await sql<SectionRow>(
    db,
    `insert into sections (workspace_id, key, label, visibility, position, api_tag, created_at) values (?, ?, ?, ?, ?, ?, ?)
      returning ${SECTION_COLUMNS.replace(/s\./g, '')}`,
    [row.workspaceId, row.key, row.label, row.visibility, row.position, row.apiTag, row.createdAt],
  );
  return inserted;
}

/**
 * Serialises changes to a workspace's list of sections (new sections and their positions) for the
 * rest of the transaction, by locking the workspace row. Locks on the sections themselves do not
 * do it: none exist while a workspace has no section yet, and taken in position order while
 * positions shift they deadlock. `no key update` leaves inserts that reference the workspace free.
 */
export async function lockSectionList(db: SqlTarget, workspaceId: string): Promise<void> {
  await sql(db, 'select 1 from workspaces where id = ? for no key update', [workspaceId]);
}

/** The section with `key` that `canSee` allows, or undefined. */
export async function visibleSectionByKey(
  db: SqlTarget,
  workspaceId: string,
  key: string,
  canSee: boolean,
): Promise<{ id: number; key: string; visibility: Visibility } | undefined> {
  const [row] = await sql<{ id: number; key: string; visibility: Visibility }>(
    db,
    `select s.id, s.key, s.visibility from sections s where s.workspace_id = ? and s.key = ? and ${sectionVisible('s')}`,
    [workspaceId, key, canSee],
  );
  return row;
}

/** Locks one section's row (its articles' positions) for the rest of the transaction. */
export async function lockSection(db: SqlTarget, sectionId: number): Promise<void> {
  await sql(db, 'select id from sections where id = ? for update', [sectionId]);
}

/** Locks two sections' rows in id order (no deadlock between opposite moves). */
export async function lockSectionPair(db: SqlTarget, firstId: number, secondId: number): Promise<void> {
  await sql(db, 'select id from sections where id in (?, ?) order by id for update', [firstId, secondId]);
}

/** The key of the workspace's section that collects the OpenAPI tag `tag`, if any. */
export async function sectionOfTag(db: SqlTarget, workspaceId: string, tag: string): Promise<{ key: string } | undefined> {
  const [taken] = await sql<{ key: string }>(db, 'select key from sections where workspace_id = ? and api_tag = ?', [workspaceId, tag]);
  return taken;
}

/** A workspace's sections in position order, with the OpenAPI tag each collects. */
export async function sectionsWithTags(db: SqlTarget, workspaceId: string): Promise<{ id: number; key: string; api_tag: string | null }[]> {
  return sql<{ id: number; key: string; api_tag: string | null }>(
    db,
    'select id, key, api_tag from sections where workspace_id = ? order by position',
    [workspaceId],
  );
}
