/**
 * Restricted visibility, in one place: *who* may see restricted sections and articles
 * (seesRestricted), and *what* a caller therefore sees, as SQL fragments. Each fragment takes the
 * aliases of its tables and the placeholder that carries seesRestricted(scope) (`?` or a named one).
 */
import type { Scope } from './authorize.js';

/** Restricted sections and articles (and versions that were restricted) are visible to members with role editor, admin or owner. */
export function seesRestricted(scope: Pick<Scope, 'agent'>): boolean {
  return scope.agent.role !== 'viewer';
}

/** SQL: article `article` in its section `section` is visible (restricted content, the article's or its section's, only when `canSee`). */
export function articleVisible(article: string, section: string, canSee = '?'): string {
  return `(${canSee}::boolean or (${article}.visibility = 'public' and ${section}.visibility = 'public'))`;
}

/** SQL: section `section` is visible. */
export function sectionVisible(section: string, canSee = '?'): string {
  return `(${canSee}::boolean or ${section}.visibility = 'public')`;
}

/** SQL: article revision `revision` is visible: it was not restricted (by the article or its section) at that version. */
export function revisionVisible(revision: string, canSee = '?'): string {
  return `(${canSee}::boolean or not ${revision}.restricted)`;
}
