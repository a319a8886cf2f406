/** Statements on memory_usage (the count of a workspace's notes that a plan's quota limits) and the plan it is counted against. */
import type { Plan } from '../plans.js';
import type { EntityManager } from '@mikro-orm/postgresql';
import { sql, type SqlTarget } from '../db/sql.js';

/** The workspaces a recount covers: one workspace, or every workspace of an organization (on `workspaces w`, one `?`). */
const RECOUNTED = { workspace: 'w.id = ?', organization: 'w.organization_id = ?' } as const;

/**
 * Sets `memory_usage` of one workspace or of an organization's workspaces (`id`) to their numbers
 * of notes, inside the caller's transaction: the existing usage rows are locked first (creates and
 * deletes in flight finish, later ones wait), then counted by a new statement that sees every
 * committed note. The usage rows as they are then.
 */
export async function recountUsage(em: EntityManager, of: keyof typeof RECOUNTED, id: string): Promise<{ used: number }[]> {
  const where = RECOUNTED[of];
  await sql(em, `select 1 from memory_usage u join workspaces w on w.id = u.workspace_id where ${where} for update of u`, [id]);
  return sql<{ used: number }>(
    em,
    `insert into memory_usage as u (workspace_id, used)
     select w.id, (select count(*) from memory_notes n where n.workspace_id = w.id) from workspaces w where ${where}
     on conflict (workspace_id) do update set used = excluded.used
     returning u.used`,
    [id],
  );
}

/** The plan of an organization. */
export async function readPlan(db: SqlTarget, organizationId: string): Promise<Plan> {
  const [org] = await sql<{ plan: Plan }>(db, 'select plan from organizations where id = ?', [organizationId]);
  return org.plan;
}
