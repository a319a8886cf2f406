/**
 * What a caller who may not see restricted content (auth/visibility.ts: seesRestricted) sees, as
 * SQL fragments. Each takes the aliases of its tables and the placeholder that carries
 * seesRestricted(scope) (`?` or a named one).
 */

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
