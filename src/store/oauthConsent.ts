/** What the consent screen reads: the member as they are now, and the workspaces their organization offers. */
import { sql, type SqlTarget } from '../db/sql.js';

/** The workspaces of an organization, oldest first (what a consent screen offers). */
export async function organizationWorkspaces(db: SqlTarget, organizationId: string): Promise<{ id: string; name: string }[]> {
  return sql(db, 'select id, name from workspaces where organization_id = ? order by created_at, id limit 500', [organizationId]);
}

/** A member as a consent screen needs them now: role, two-factor state, organization. */
export interface ConsentMemberRow {
  id: string;
  email: string;
  role: string;
  two_factor_enabled: boolean;
  organization_id: string;
  organization_name: string;
  require_two_factor: boolean;
}

/** The member behind a session, read fresh (a role changed since sign-in counts). */
export async function consentMember(db: SqlTarget, memberId: string): Promise<ConsentMemberRow | undefined> {
  const rows = await sql<ConsentMemberRow>(
    db,
    `select m.id, m.email, m.role, m.two_factor_enabled, o.id as organization_id, o.name as organization_name, o.require_two_factor
       from members m join organizations o on o.id = m.organization_id where m.id = ?`,
    [memberId],
  );
  return rows[0];
}
