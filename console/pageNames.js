// The service's own names, as the page was served with them on <body> (src/app/console.ts writes
// them from the service's lists): the console never keeps a copy that could drift.
/* global document */

const listed = (name) => (document.body.dataset[name] ?? '').split(' ').filter(Boolean);

/** Every permission a key may hold (data-permissions). */
export const PERMISSIONS = listed('permissions');

/** Every event type, which is every action the audit trail records (data-event-types). */
export const EVENT_TYPES = listed('eventTypes');

/** Every kind of resource an event names as its target (data-target-types). */
export const TARGET_TYPES = listed('targetTypes');

/** The roles, lowest first (data-roles). */
export const ROLES = listed('roles');

/** The roles whose column of the role table holds `what` (a permission or a person action): data-role-<role>. */
export function rolesAllowing(what) {
  return ROLES.filter((role) => listed(`role${role[0].toUpperCase()}${role.slice(1)}`).includes(what));
}
