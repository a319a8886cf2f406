// Refusals in words: who may do what the person asked for, read from the service's role table (the
// page's data-role-* lists), instead of the permission's name.
import { rolesAllowing } from './pageNames.js';

/** "admins and owners" (roles, lowest first, in the plural). */
export function roleNames(roles) {
  const names = roles.map((role) => `${role}s`);
  if (names.length < 2) return names[0] ?? 'no one';
  return `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
}

/** "an editor", "a viewer". */
export const aRole = (role) => `${/^[aeiou]/.test(role) ? 'an' : 'a'} ${role}`;

/** "Only admins and owners can see the audit trail." for a screen that needs `what`. */
export function onlyRolesCan(what, doing) {
  return `Only ${roleNames(rolesAllowing(what))} can ${doing}.`;
}

/**
 * The service's refusal of permissions `missing` (a permission_denied error's details) to a person
 * of `role`, in words; null when the role table does not name them (a refusal for another reason).
 */
export function refusalInWords(missing, role) {
  if (!Array.isArray(missing) || !missing.length) return null;
  const roles = rolesAllowing(missing[0]).filter((r) => missing.every((what) => rolesAllowing(what).includes(r)));
  if (!roles.length) return null;
  const who = role ? `; you are ${aRole(role)}` : '';
  return `Only ${roleNames(roles)} can do this (it takes ${missing.join(', ')})${who}.`;
}
