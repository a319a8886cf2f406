/** A workspace's guidance for agents: read by every caller of the workspace, set by its administrators (or the admin token). */
import type { Scope } from '../auth/authorize.js';
import type { RequestContext } from '../context.js';
import type { SqlTarget } from '../db/sql.js';
import { readGuidance, writeGuidance, type GuidanceRow } from '../store/guidance.js';
import type { WorkspaceGuidance } from '../types/guidance.js';
import { recordAudit } from './audit.js';
import { inTransaction } from '../store/unitOfWork.js';

const toGuidance = (workspaceId: string, row: GuidanceRow): WorkspaceGuidance => ({
  workspaceId,
  markdown: row.agent_guidance,
  updatedAt: row.agent_guidance_updated_at ? new Date(row.agent_guidance_updated_at) : null,
});

/** The guidance of the caller's workspace. */
export async function getGuidance(ctx: RequestContext, scope: Scope): Promise<WorkspaceGuidance> {
  return toGuidance(scope.workspaceId, await readGuidance(ctx.db, scope.workspaceId));
}

/** The guidance text of a workspace for MCP's instructions and /llms.txt (null: none). */
export async function guidanceText(db: SqlTarget, workspaceId: string): Promise<string | null> {
  return (await readGuidance(db, workspaceId))?.agent_guidance || null;
}

/**
 * Replaces the guidance (empty Markdown removes it), with its audit and webhook event
 * `workspace.guidance_updated` (the guidance before and after) in the same transaction.
 */
export async function setGuidance(ctx: RequestContext, scope: Scope, markdown: string): Promise<WorkspaceGuidance> {
  return inTransaction(ctx.em, async (em) => {
    const { before, after } = await writeGuidance(em, scope.workspaceId, markdown);
    const guidance = toGuidance(scope.workspaceId, after);
    recordAudit(em, ctx, {
      action: 'workspace.guidance_updated',
      targetType: 'workspace',
      targetId: scope.workspaceId,
      workspaceId: scope.workspaceId,
      payload: {
        object: { ...guidance, updatedAt: guidance.updatedAt?.toISOString() ?? null },
        previous: {
          markdown: before.agent_guidance,
          updatedAt: before.agent_guidance_updated_at && new Date(before.agent_guidance_updated_at).toISOString(),
        },
      },
    });
    return guidance;
  });
}
