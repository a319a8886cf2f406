/** Statements on content_gap_groups that more than one service runs. */
import type { SqlTarget } from '../db/sql.js';
import { sql } from '../db/sql.js';

/** Marks a workspace's gap group resolved at `now` unless it is already; whether this call resolved it. */
export async function resolveGroup(db: SqlTarget, workspaceId: string, groupId: number, now: Date): Promise<boolean> {
  const rows = await sql(
    db,
    'update content_gap_groups set resolved_at = ? where id = ? and workspace_id = ? and resolved_at is null returning id',
    [now, groupId, workspaceId],
  );
  return rows.length > 0;
}
