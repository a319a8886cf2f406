/**
 * MCP resource subscriptions of 2025-11-25 clients (`resources/subscribe`): kept in the database
 * per credential (an agent key or an OAuth grant), so a subscribe made through one process is
 * delivered by the change stream (GET /mcp) another process holds. The MCP door reaches them
 * through this port, which the app hands it.
 */
import type { SqlTarget } from '../db/sql.js';
import { addSubscription, holdersOf, removeSubscription, workspacesOf } from '../store/resourceSubscriptions.js';

/** Resources one credential may be subscribed to at once. */
export const RESOURCE_SUBSCRIPTIONS_PER_HOLDER = 100;

/** What the MCP door asks of the subscriptions. */
export interface ResourceSubscriptionPort {
  /** Subscribes; false when the holder already has RESOURCE_SUBSCRIPTIONS_PER_HOLDER. */
  add(holder: string, workspaceId: string, uri: string): Promise<boolean>;
  remove(holder: string, uri: string): Promise<void>;
  holdersOf(workspaceId: string, uri: string): Promise<Set<string>>;
  workspacesOf(holder: string): Promise<string[]>;
}

export function resourceSubscriptions(db: SqlTarget): ResourceSubscriptionPort {
  return {
    add: (holder, workspaceId, uri) => addSubscription(db, { holder, workspaceId, uri, limit: RESOURCE_SUBSCRIPTIONS_PER_HOLDER }),
    remove: (holder, uri) => removeSubscription(db, holder, uri),
    holdersOf: async (workspaceId, uri) => new Set(await holdersOf(db, workspaceId, uri)),
    workspacesOf: (holder) => workspacesOf(db, holder),
  };
}
