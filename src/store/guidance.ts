/** Statements on a workspace's guidance for agents (a column pair of `workspaces`). */
import { sql, type SqlTarget } from '../db/sql.js';

/** A workspace's guidance as stored: '' when it has none. */
export interface GuidanceRow {
  agent_guidance: string;
  agent_guidance_updated_at: string | null;
}

/** The guidance of a workspace (which must exist). */
export async function readGuidance(db: SqlTarget, workspaceId: string): Promise<GuidanceRow> {
  const [row] = await sql<GuidanceRow>(db, 'select agent_guidance, agent_guidance_updated_at from workspaces where id = ?', [workspaceId]);
  return row;
}

/** Replaces a workspace's guidance; the row before (locked first) and after. Run it in a transaction. */
export async function writeGuidance(
  db: SqlTarget,
  workspaceId: string,
  markdown: string,
): Promise<{ before: GuidanceRow; after: GuidanceRow }> {
  const [before] = await sql<GuidanceRow>(db, 'select agent_guidance, agent_guidance_updated_at from workspaces where id = ? for update', [
    workspaceId,
  ]);
  const [after] = await sql<GuidanceRow>(
    db,
    'update workspaces set agent_guidance = ?, agent_guidance_updated_at = now() where id = ? returning agent_guidance, agent_guidance_updated_at',
    [markdown, workspaceId],
  );
  return { before, after };
}
