// The GraphQL the audit-trail screen sends: the filtered trail, page by page, and the events as they
// are committed.

const EVENT_FIELDS = 'id actor action targetType targetId agentKeyId memberId requestId createdAt revision truncated object previous';

/** The workspace's events under the filters, newest first. */
export const TRAIL = `query ConsoleAuditTrail(
  $w: ID!, $actor: String, $action: String, $targetType: String, $from: DateTime, $to: DateTime, $first: Int, $after: String
) {
  auditTrail(workspaceId: $w, actor: $actor, action: $action, targetType: $targetType, from: $from, to: $to, first: $first, after: $after) {
    totalCount pageInfo { hasNextPage endCursor } edges { node { ${EVENT_FIELDS} } }
  }
}`;

/** Each event of the workspace as it is committed. */
export const ADDED = `subscription ConsoleAuditEventAdded($w: ID!) { auditEventAdded(workspaceId: $w) { ${EVENT_FIELDS} } }`;
