/**
 * Every event the service emits, `<resource>.<verb>`: each successful mutation (REST, GraphQL or
 * agent tool) writes its audit event and its webhook event in the same transaction as the change,
 * so this is also every action of the audit trail (test/unit/eventNames.test.ts holds the services to it).
 */
export const EVENT_TYPES = [
  'organization.created',
  'organization.updated',
  'workspace.created',
  'workspace.exported',
  'workspace.imported',
  'workspace.guidance_updated',
  'member.created',
  'member.updated',
  'member.signed_in',
  'member.signed_out',
  'member.sign_in_link_created',
  'member.session_revoked',
  'agent_key.created',
  'agent_key.updated',
  'agent_key.revoked',
  'oauth_grant.created',
  'oauth_grant.revoked',
  'changelog.created',
  'changelog.updated',
  'changelog.status_changed',
  'changelog.deleted',
  'memory.note.created',
  'memory.note.updated',
  'memory.note.deleted',
  'section.created',
  'article.created',
  'article.updated',
  'article.status_changed',
  'article.moved',
  'proposal.created',
  'proposal.approved',
  'proposal.rejected',
  'proposal.returned',
  'upload.created',
  'content_gap.reported',
  'content_gap.resolved',
  'openapi.attached',
  'openapi.synced',
  'openapi.detached',
  'openapi.page_detached',
  'webhook.created',
  'webhook.updated',
  'webhook.deleted',
  'webhook.secret_rotated',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** Every kind of resource an event names as its target (the audit trail's `targetType`). */
export const TARGET_TYPES = [
  'organization',
  'workspace',
  'member',
  'member_session',
  'agent_key',
  'oauth_grant',
  'changelog_entry',
  'memory_note',
  'section',
  'article',
  'proposal',
  'upload',
  'content_gap_group',
  'content_gap_report',
  'api_spec',
  'webhook',
] as const;

/** True when `filter` (an exact type or `prefix.*`) selects `type`. */
export function eventMatches(filter: string, type: string): boolean {
  return filter === type || filter === '*' || (filter.endsWith('.*') && type.startsWith(filter.slice(0, -1)));
}

/** A filter that can select at least one known event. */
export function isKnownFilter(filter: string): boolean {
  return EVENT_TYPES.some((t) => eventMatches(filter, t));
}
