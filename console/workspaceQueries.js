// The GraphQL the workspace choice sends: organizations, then the workspaces of one.

/** Organizations, oldest first, a page at a time. */
export const ORGANIZATIONS = `query ConsoleOrganizations($after: String, $first: Int) {
  organizations(first: $first, after: $after) { totalCount pageInfo { hasNextPage endCursor } edges { node { id name plan createdAt } } }
}`;

/** The workspaces of one organization, a page at a time. */
export const WORKSPACES = `query ConsoleWorkspaces($org: ID!, $after: String, $first: Int) {
  workspaces(organizationId: $org, first: $first, after: $after) {
    totalCount pageInfo { hasNextPage endCursor } edges { node { id name createdAt organization { id name } } }
  }
}`;

/** How many organizations or workspaces a page holds. */
export const PAGE_SIZE = 50;
