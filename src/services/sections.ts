import type { EntityManager } from '@mikro-orm/postgresql';
import { authorize, canSeeRestricted, requirePlan, type Scope } from '../auth/authorize.js';
import { PAID_PLANS } from '../auth/permissions.js';
import type { RequestContext } from '../context.js';
import { sql } from '../db/sql.js';
import { Section, type Visibility } from '../entities/Section.js';
import { ConflictError, invalidField } from '../errors.js';
import { checkSlug, nextFreeSlug, slugify } from '../slug.js';
import { recordAudit } from './audit.js';

const SECTION_COLUMNS = 's.id, s.workspace_id, s.key, s.label, s.visibility, s.position, s.created_at';

/** Sections the caller may see, in sidebar order, with their visible article counts. */
export async function listSections(ctx: RequestContext, workspace: string): Promise<Section[]> {
  const scope = await authorize(ctx, workspace, ['article.read']);
  return loadSections(ctx.em, scope);
}

/** The visible sections of the scope's workspace in order (one query). */
export async function loadSections(em: EntityManager, scope: Scope): Promise<Section[]> {
  const all = canSeeRestricted(scope);
  const rows = await sql(
    em,
    `select ${SECTION_COLUMNS}, count(a.id) filter (where ?::boolean or a.visibility = 'public')::int as article_count
       from sections s left join articles a on a.section_id = s.id
      where s.workspace_id = ? and (?::boolean or s.visibility = 'public')
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
export async function createSection(ctx: RequestContext, workspace: string, input: CreateSectionInput): Promise<Section> {
  const scope = await authorize(ctx, workspace, ['section.create']);
  return insertSection(ctx, scope, input, null);
}

/** The insert behind createSection and API-reference sections (`apiTag`); the caller has authorized. */
export async function insertSection(ctx: RequestContext, scope: Scope, input: CreateSectionInput, apiTag: string | null): Promise<Section> {
  const visibility = input.visibility ?? 'public';
  if (visibility === 'restricted') requirePlan(scope, PAID_PLANS, 'Restricted visibility');
  const explicitKey = input.key ? checkSlug(input.key, 'key') : null;
  return ctx.em.transactional(async (em) => {
    await lockSectionList(em, scope.workspaceId);
    const existing = await sql<{ key: string; position: number }>(em, 'select key, position from sections where workspace_id = ? order by position', [scope.workspaceId]);
    const keys = existing.map((s) => s.key);
    if (explicitKey && keys.includes(explicitKey)) throw new ConflictError(`A section with key "${explicitKey}" already exists.`, { field: 'key' });
    const key = explicitKey ?? nextFreeSlug(slugify(input.label, 'section'), keys);
    const position = input.position ?? existing.length;
    if (position < 0 || position > existing.length) throw invalidField('position', `must be from 0 to ${existing.length}`);
    await sql(em, 'update sections set position = position + 1 where workspace_id = ? and position >= ?', [scope.workspaceId, position]);
    const [row] = await sql(
      em,
      `insert into sections (workspace_id, key, label, visibility, position, api_tag, created_at) values (?, ?, ?, ?, ?, ?, ?) returning ${SECTION_COLUMNS.replace(/s\./g, '')}`,
      [scope.workspaceId, key, input.label, visibility, position, apiTag, new Date()],
    );
    recordAudit(em, ctx, { action: 'section.created', targetType: 'section', targetId: key, workspaceId: scope.workspaceId });
    return toSection(em, { ...row, article_count: 0 });
  });
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
export async function findVisibleSection(em: EntityManager, scope: Scope, key: string): Promise<{ id: number; key: string; visibility: Visibility } | null> {
  const [row] = await sql<{ id: number; key: string; visibility: Visibility }>(
    em,
    `select id, key, visibility from sections where workspace_id = ? and key = ? and (?::boolean or visibility = 'public')`,
    [scope.workspaceId, key, canSeeRestricted(scope)],
  );
  return row ?? null;
}

function toSection(em: EntityManager, row: Record<string, unknown>): Section {
  return Object.assign(em.map(Section, row), { articleCount: Number(row.article_count ?? 0) });
}
