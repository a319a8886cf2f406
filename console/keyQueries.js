// The GraphQL the agent-keys screen sends: the keys (never a secret), the members and workspaces a
// new key may name, creation (its secret, once) and revocation.

const KEY_FIELDS =
  'id name permissions expiresAt revokedAt lastUsedAt createdAt workspaceId member { id email role } workspace { id name }';

/** The organization's keys, a page at a time, all or only the (un)revoked ones. */
export const KEYS = `query ConsoleAgentKeys($org: ID!, $first: Int, $after: String, $revoked: Boolean) {
  agentKeys(organizationId: $org, first: $first, after: $after, revoked: $revoked) {
    totalCount pageInfo { hasNextPage endCursor } edges { node { ${KEY_FIELDS} } }
  }
}`;

/** The members and workspaces a new key may be for. */
export const CHOICES = `query ConsoleKeyChoices($org: ID!) {
  members(organizationId: $org, first: 100) { totalCount edges { node { id email role } } }
  workspaces(organizationId: $org, first: 100) { edges { node { id name } } }
}`;

/** Creates a key: the answer holds its secret, this once. */
export const CREATE = `mutation ConsoleCreateKey($input: CreateAgentKeyInput!) { createAgentKey(input: $input) { key agentKey { ${KEY_FIELDS} } } }`;

/** Revokes a key. */
export const REVOKE = `mutation ConsoleRevokeKey($id: ID!) { revokeAgentKey(id: $id) { ${KEY_FIELDS} } }`;
