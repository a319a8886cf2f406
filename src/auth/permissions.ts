import { ROLES, type Role } from '../roles.js';
/** The permission names keys carry; they are part of the public contract and never change. */
export const PERMISSIONS = [
  'article.read',
  'article.create',
  'article.update',
  'article.publish',
  'proposal.read',
  'proposal.create',
  'section.create',
  'upload.image',
  'changelog.read',
  'changelog.update',
  'changelog.publish',
  'memory.read',
  'memory.write',
  'search.read',
  'content_gap.report',
  'openapi.read',
  'openapi.manage',
  'guidance.update',
] as const;
export type Permission = (typeof PERMISSIONS)[number];

export { ROLES, type Role } from '../roles.js';

/** What a person signed in to the console or GraphQL may do besides the permissions (no key carries these). */
export const PERSON_ACTIONS = [
  'organization.read',
  'agent_keys.manage',
  'audit.read',
  'members.read',
  'members.sign_in_links',
  'sessions.manage',
] as const;
export type PersonAction = (typeof PERSON_ACTIONS)[number];

const V = ['viewer', 'editor', 'admin', 'owner'] as const;
const E = ['editor', 'admin', 'owner'] as const;
const A = ['admin', 'owner'] as const;
const O = ['owner'] as const;

/**
 * THE role table: for every permission and every person action, the roles that may do it. A key's
 * permissions are capped by its member's role (ROLE_CEILING below); a signed-in person has exactly
 * their role's column. Reviewing a proposal is `proposal.read` + `article.update`. README.md shows
 * this table (test/unit/roleTable.test.ts holds the two to each other).
 */
export const ROLE_TABLE: Readonly<Record<Permission | PersonAction, readonly Role[]>> = {
  'article.read': V,
  'article.create': E,
  'article.update': E,
  'article.publish': A,
  'proposal.read': V,
  'proposal.create': E,
  'section.create': A,
  'upload.image': E,
  'changelog.read': V,
  'changelog.update': E,
  'changelog.publish': A,
  'memory.read': V,
  'memory.write': E,
  'search.read': V,
  'content_gap.report': V,
  'openapi.read': V,
  'openapi.manage': A,
  'guidance.update': A,
  'organization.read': V,
  'agent_keys.manage': A,
  'audit.read': A,
  'members.read': A,
  'members.sign_in_links': O,
  'sessions.manage': O,
};

/** Whether `role` may do `what` (ROLE_TABLE). */
export function roleMay(role: Role, what: Permission | PersonAction): boolean {
  return ROLE_TABLE[what].includes(role);
}

/** The most a member of each role may do, whatever their keys say (ROLE_TABLE's permission rows). */
const ROLE_CEILING = {} as Record<Role, ReadonlySet<Permission>>;
for (const role of ROLES) ROLE_CEILING[role] = new Set(PERMISSIONS.filter((p) => roleMay(role, p)));

/** Everything a person of this role may do: their role's column of ROLE_TABLE (what the console offers them). */
export function roleColumn(role: Role): (Permission | PersonAction)[] {
  return (Object.keys(ROLE_TABLE) as (Permission | PersonAction)[]).filter((what) => roleMay(role, what));
}

/** The permissions of a role (its ceiling). */
export function rolePermissions(role: Role): Permission[] {
  return [...ROLE_CEILING[role]];
}

/** Key permissions AND role ceiling. */
export function effectivePermissions(keyPermissions: readonly string[], role: Role): Set<Permission> {
  const ceiling = ROLE_CEILING[role];
  return new Set(keyPermissions.filter((p): p is Permission => ceiling.has(p as Permission)));
}

export function isPermission(value: string): value is Permission {
  return (PERMISSIONS as readonly string[]).includes(value);
}
