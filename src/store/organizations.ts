/** Statements on organizations and their workspaces: existence, plan, a workspace's organization, the rows an archive's export or import starts from. */
import type { Plan } from '../plans.js';
import { sql, type SqlTarget } from '../db/sql.js';

/** Whether an organization with this id exists. */
export async function organizationExists(db: SqlTarget, id: string): Promise<boolean> {
  const [org] = await sql(db, 'select id from organizations where id = ?', [id]);
  return Boolean(org);
}

/** An organization's plan, if the organization exists. */
export async function organizationPlan(db: SqlTarget, id: string): Promise<Plan | undefined> {
  const [org] = await sql<{ plan: Plan }>(db, 'select plan from organizations where id = ?', [id]);
  return org?.plan;
}

/** Whether a workspace with this id exists. */
export async function workspaceExists(db: SqlTarget, id: string): Promise<boolean> {
  return (await sql(db, 'select 1 from workspaces where id = ?', [id])).length > 0;
}

/** Whether the workspace with this id belongs to the organization. */
export async function workspaceInOrganization(db: SqlTarget, id: string, organizationId: string): Promise<boolean> {
  return (await sql(db, 'select 1 from workspaces where id = ? and organization_id = ?', [id, organizationId])).length > 0;
}

/** A workspace's organization, with its plan and two-factor rule, if the workspace exists. */
export async function workspaceOrganization(
  db: SqlTarget,
  id: string,
): Promise<{ organization_id: string; plan: Plan; require_two_factor: boolean } | undefined> {
  const [row] = await sql<{ organization_id: string; plan: Plan; require_two_factor: boolean }>(
    db,
    'select w.organization_id, o.plan, o.require_two_factor from workspaces w join organizations o on o.id = w.organization_id where w.id = ?',
    [id],
  );
  return row;
}

/** A workspace's id, name and organization, if it exists. */
export async function findWorkspace(db: SqlTarget, id: string): Promise<{ id: string; name: string; organization_id: string } | undefined> {
  const [ws] = await sql<{ id: string; name: string; organization_id: string }>(
    db,
    'select id, name, organization_id from workspaces where id = ?',
    [id],
  );
  return ws;
}

/** A workspace's organization and its plan, the workspace row locked until the transaction ends. */
export async function lockWorkspaceWithPlan(db: SqlTarget, id: string): Promise<{ organization_id: string; plan: Plan } | undefined> {
  const [ws] = await sql<{ organization_id: string; plan: Plan }>(
    db,
    'select w.organization_id, o.plan from workspaces w join organizations o on o.id = w.organization_id where w.id = ? for update of w',
    [id],
  );
  return ws;
}

/** A write (for auditedWrite) inserting a workspace: `?`s for its id, organization and name; returns the id. */
export const INSERT_WORKSPACE =
  'insert into workspaces (id, organization_id, name, created_at) values (?, ?, ?, clock_timestamp()) returning id';
