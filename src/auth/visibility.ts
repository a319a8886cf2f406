/**
 * Restricted visibility: *who* may see restricted sections and articles (seesRestricted). *What*
 * a caller therefore sees is written as SQL fragments in store/visibility.ts, which the statements
 * take with the value of seesRestricted(scope).
 */
import type { Scope } from './authorize.js';

/** Restricted sections and articles (and versions that were restricted) are visible to members with role editor, admin or owner. */
export function seesRestricted(scope: Pick<Scope, 'agent'>): boolean {
  return scope.agent.role !== 'viewer';
}
