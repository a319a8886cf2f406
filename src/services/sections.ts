import type { EntityManager } from '@mikro-orm/postgresql';
import { requirePlan, type Scope } from '../auth/authorize.js';
import { articleVisible, sectionVisible, seesRestricted } from '../auth/visibility.js';
import { RESTRICTED_VISIBILITY } from '../auth/plans.js';
import type { RequestContext } from '../context.js';
import { sql } from '../db/sql.js';
import { Section, type Visibility } from '../entities/Section.js';
import { ConflictError, invalidField } from '../errors.js';
import { checkSlug, nextFreeSlug, slugify } from '../slug.js';
import { recordAudit } from './audit.js';

const SECTION_COLUMNS = 's.id, s.workspace_id, s.key, s.label, s.visibility, s.position, s.created_at';

/** Sections the caller may see, in sidebar order, with their visible article counts. */
export async function listSections(ctx: RequestContext, scope: Scope): Promise<Section[]> {
  return loadSections(ctx.em, scope);
}

/** The visible sections of the scope's workspace in order (one query). */
export async function loadSections(em: EntityManager, scope: Scope): Promise<Section[]> {
  const all = seesRestricted(scope);
  const rows = await sql<SectionRow>(
    em,
    `select ${SECTION_COLUMNS}, count(a.id) filter (where ${articleVisible('a', 's')})::int as article_count
       from sections s left join articles a on a.section_id = s.id
      where s.workspace_id = ? and ${sectionVisible('s')}
      group by s.id order by s.position, s.id`,
    [all, scope.workspaceId, all],
  );
  return rows.map((r) => toSection(em, r));
}

export interface CreateSectionInput {
  label: string;
  key?: string | null;
  visibility?: Visibility | null;
  position?: number | null;
}

/** Creates a section (at the end, or at `position`, shifting the ones after it). */
export async function createSection(ctx: RequestContext, scope: Scope, input: CreateSectionInput): Promise<Section> {
  return insertSection(ctx, scope, input, null);
}

/** The insert behind createSection and API-reference sections (`apiTag`); the caller has authorized. */
export async function insertSection(ctx: RequestContext, scope: Scope, input: CreateSectionInput, apiTag: string | null): Promise<Section> {
  if (input.visibility === 'restricted') requirePlan(scope, RESTRICTED_VISIBILITY);
  const key = input.key ? checkSlug(input.key, 'key') : null;
  return ctx.em.transactional((em) => addSection(em, ctx, scope, { ...input, key }, apiTag));
}

/**
 * Adds a section inside the caller's transaction, with its audit event: last, or at `position`
 * (shifting the ones after it); `key` defaults to a free slug of the label (an explicit key in
 * use is a 409). The workspace's list of sections is locked for the rest of the transaction.
 */
export async function addSection(
  em: EntityManager,
  ctx: RequestContext,
  scope: Scope,
  input: CreateSectionInput,
  apiTag: string | null,
): Promise<Section> {
  await lockSectionList(em, scope.workspaceId);
  const keys = (
    await sql<{ key: string }>(em, 'select key from sections where workspace_id = ? order by position', [scope.workspaceId])
  ).map((s) => s.key);
  if (input.key && keys.includes(input.key)) throw new ConflictError(`A section with key "${input.key}" already exists.`, { field: 'key' });
  const key = input.key ?? nextFreeSlug(slugify(input.label, 'section'), keys);
  const position = input.position ?? keys.length;
  if (position < 0 || position > keys.length) throw invalidField('position', `must be from 0 to ${keys.length}`);
  await sql(em, 'update sections set position = position + 1 where workspace_id = ? and position >= ?', [scope.workspaceId, position]);
  const [row] = await sql<SectionRow>(
    em,
    `insert into sections (workspace_id, key, label, visibility, position, api_tag, created_at) values (?, ?, ?, ?, ?, ?, ?)
      returning ${SECTION_COLUMNS.replace(/s\./g, '')}`,
    [scope.workspaceId, key, input.label, input.visibility ?? 'public', position, apiTag, new Date()],
  );
  recordAudit(em, ctx, { action: 'section.created', targetType: 'section', targetId: key, workspaceId: scope.workspaceId });
  return toSection(em, { ...row, article_count: 0 });
}

/**
 * Serialises changes to a workspace's list of sections (new sections and their positions) for the
 * rest of the transaction, by locking the workspace row. Locks on the sections themselves do not
 * do it: none exist while a workspace has no section yet, and taken in position order while
 * positions shift they deadlock. `no key update` leaves inserts that reference the workspace free.
 */
export async function lockSectionList(em: EntityManager, workspaceId: string): Promise<void> {
  await sql(em, 'select 1 from workspaces where id = ? for no key update', [workspaceId]);
}

/** The section with `key` that the caller may see, or null. */
export async function findVisibleSection(
  em: EntityManager,
  scope: Scope,
  key: string,
): Promise<{ id: number; key: string; visibility: Visibility } | null> {
  const [row] = await sql<{ id: number; key: string; visibility: Visibility }>(
    em,
    `select s.id, s.key, s.visibility from sections s where s.workspace_id = ? and s.key = ? and ${sectionVisible('s')}`,
    [scope.workspaceId, key, seesRestricted(scope)],
  );
  return row ?? null;
}

/** A row of `sections` (with its visible article count where a list needs it). */
interface SectionRow {
  id: number;
  workspace_id: string;
  key: string;
  label: string;
  visibility: Visibility;
  position: number;
  created_at: string;
  article_count?: number;
}

function toSection(em: EntityManager, row: SectionRow): Section {
  return Object.assign(em.map(Section, row), { articleCount: Number(row.article_count ?? 0) });
}
