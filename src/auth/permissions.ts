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
] as const;
export type Permission = (typeof PERMISSIONS)[number];

export const ROLES = ['viewer', 'editor', 'admin', 'owner'] as const;
export type Role = (typeof ROLES)[number];

const VIEWER: Permission[] = [...PERMISSIONS.filter((p) => p.endsWith('.read')), 'content_gap.report'];
const EDITOR: Permission[] = [
  ...VIEWER,
  'article.create',
  'article.update',
  'proposal.create',
  'changelog.update',
  'memory.write',
  'upload.image',
];

/** The most a member of each role may do, whatever their keys say. */
const ROLE_CEILING: Record<Role, ReadonlySet<Permission>> = {
  viewer: new Set(VIEWER),
  editor: new Set(EDITOR),
  admin: new Set(PERMISSIONS),
  owner: new Set(PERMISSIONS),
};

/** Key permissions AND role ceiling. */
export function effectivePermissions(keyPermissions: readonly string[], role: Role): Set<Permission> {
  const ceiling = ROLE_CEILING[role];
  return new Set(keyPermissions.filter((p): p is Permission => ceiling.has(p as Permission)));
}

export function isPermission(value: string): value is Permission {
  return (PERMISSIONS as readonly string[]).includes(value);
}
