/**
 * Statements on organizations and their workspaces: existence, plan, a workspace's organization, the
 * rows an archive's export or import starts from, and the entities the admin operations change.
 */
import type { RequiredEntityData } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Plan } from '../plans.js';
import { sql, type SqlTarget } from '../db/sql.js';
import { Organization } from '../entities/Organization.js';
import { Workspace } from '../entities/Workspace.js';

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

/** Inserts a workspace of an organization, created now. */
export async function insertWorkspace(db: SqlTarget, id: string, organizationId: string, name: string): Promise<void> {
  await sql(db, 'insert into workspaces (id, organization_id, name, created_at) values (?, ?, ?, clock_timestamp())', [
    id,
    organizationId,
    name,
  ]);
}

/** An organization as a managed entity (changes to it are written when the transaction commits), if it exists. */
export function loadOrganization(em: EntityManager, id: string): Promise<Organization | null> {
  return em.findOne(Organization, { id });
}

/** A new organization, inserted when the transaction commits (its id is known at once). */
export function newOrganization(em: EntityManager, data: RequiredEntityData<Organization>): Organization {
  return em.create(Organization, data);
}

/** A workspace of this organization as a managed entity, if it exists and belongs to it. */
export function loadWorkspaceOf(em: EntityManager, id: string, organization: Organization): Promise<Workspace | null> {
  return em.findOne(Workspace, { id, organization });
}

/** A new workspace, inserted when the transaction commits (its id is known at once). */
export function newWorkspace(em: EntityManager, data: RequiredEntityData<Workspace>): Workspace {
  return em.create(Workspace, data);
}
