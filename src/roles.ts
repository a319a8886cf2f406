/** The roles of an organization's members, lowest first (a ground-floor table every room may read; what each may do: auth/permissions.ts). */
export const ROLES = ['viewer', 'editor', 'admin', 'owner'] as const;
export type Role = (typeof ROLES)[number];
