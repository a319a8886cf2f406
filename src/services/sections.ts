import type { EntityManager } from '@mikro-orm/postgresql';
import { requirePlan, type Scope } from '../auth/authorize.js';
import { seesRestricted } from '../auth/visibility.js';
import { RESTRICTED_VISIBILITY } from '../plans.js';
import type { RequestContext } from '../context.js';
import { Section, type Visibility } from '../entities/Section.js';
import { ConflictError, invalidField } from '../errors.js';
import { checkSlug, nextFreeSlug, slugify } from '../slug.js';
import {
  insertSectionRow,
  lockSectionList,
  sectionKeys,
  shiftSectionsFrom,
  visibleSectionByKey,
  visibleSections,
  type SectionRow,
} from '../store/sections.js';
import { recordAudit } from './audit.js';
import { entityOf, inTransaction } from '../store/unitOfWork.js';

/** Sections the caller may see, in sidebar order, with their visible article counts. */
export async function listSections(ctx: RequestContext, scope: Scope): Promise<Section[]> {
  return loadSections(ctx.em, scope);
}

/** The visible sections of the scope's workspace in order (one query). */
export async function loadSections(em: EntityManager, scope: Scope): Promise<Section[]> {
  const rows = await visibleSections(em, scope.workspaceId, seesRestricted(scope));
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
  return inTransaction(ctx.em, (em) => addSection(em, ctx, scope, { ...input, key }, apiTag));
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
  const keys = await sectionKeys(em, scope.workspaceId);
  if (input.key && keys.includes(input.key)) throw new ConflictError(`A section with key "${input.key}" already exists.`, { field: 'key' });
  const key = input.key ?? nextFreeSlug(slugify(input.label, 'section'), keys);
  const position = input.position ?? keys.length;
  if (position < 0 || position > keys.length) throw invalidField('position', `must be from 0 to ${keys.length}`);
  await shiftSectionsFrom(em, scope.workspaceId, position);
  const row = await insertSectionRow(em, {
    workspaceId: scope.workspaceId,
    key,
    label: input.label,
    visibility: input.visibility ?? 'public',
    position,
    apiTag,
    createdAt: new Date(),
  });
  recordAudit(em, ctx, { action: 'section.created', targetType: 'section', targetId: key, workspaceId: scope.workspaceId });
  return toSection(em, { ...row, article_count: 0 });
}

/** The section with `key` that the caller may see, or null. */
export async function findVisibleSection(
  em: EntityManager,
  scope: Scope,
  key: string,
): Promise<{ id: number; key: string; visibility: Visibility } | null> {
  return (await visibleSectionByKey(em, scope.workspaceId, key, seesRestricted(scope))) ?? null;
}

function toSection(em: EntityManager, row: SectionRow): Section {
  return Object.assign(entityOf(em, Section, row), { articleCount: Number(row.article_count ?? 0) });
}
