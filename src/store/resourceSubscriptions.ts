/** Statements on mcp_resource_subscriptions (2025-11-25 clients' resources/subscribe). */
import { sql, type SqlTarget } from '../db/sql.js';

/**
 * Subscribes `holder` to a resource of a workspace, unless it already holds `limit` subscriptions
 * (counted under a lock on the holder, so concurrent subscribes cannot pass the limit together).
 * Whether it is subscribed now (false: over the limit).
 */
export async function addSubscription(
  db: SqlTarget,
  row: { holder: string; workspaceId: string; uri: string; limit: number },
): Promise<boolean> {
  const [done] = await sql<{ ok: boolean }>(
    db,
    `with locked as (select pg_advisory_xact_lock(hashtext('wks_mcp_sub:' || :holder))),
          held as (select count(*) as n, bool_or(uri = :uri) as has from mcp_resource_subscriptions, locked where holder = :holder),
          added as (insert into mcp_resource_subscriptions (holder, workspace_id, uri)
                    select :holder, :workspace, :uri from held where held.n < :limit and not coalesce(held.has, false)
                    on conflict (holder, uri) do nothing returning 1)
     select exists (select 1 from added) or (select coalesce(has, false) from held) as ok`,
    { holder: row.holder, workspace: row.workspaceId, uri: row.uri, limit: row.limit },
  );
  return done.ok;
}

/** Ends a subscription (nothing when there is none). */
export async function removeSubscription(db: SqlTarget, holder: string, uri: string): Promise<void> {
  await sql(db, 'delete from mcp_resource_subscriptions where holder = ? and uri = ?', [holder, uri]);
}

/** Who is subscribed to a resource of a workspace. */
export async function holdersOf(db: SqlTarget, workspaceId: string, uri: string): Promise<string[]> {
  const rows = await sql<{ holder: string }>(db, 'select holder from mcp_resource_subscriptions where workspace_id = ? and uri = ?', [
    workspaceId,
    uri,
  ]);
  return rows.map((r) => r.holder);
}

/** The workspaces whose resources `holder` is subscribed to. */
export async function workspacesOf(db: SqlTarget, holder: string): Promise<string[]> {
  const rows = await sql<{ workspace_id: string }>(db, 'select distinct workspace_id from mcp_resource_subscriptions where holder = ?', [
    holder,
  ]);
  return rows.map((r) => r.workspace_id);
}
