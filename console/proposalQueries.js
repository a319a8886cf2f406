// The GraphQL the proposals screen sends: the open proposals, the article an edit is based on and its
// merge preview, the three reviews (approve, reject, return), and the live changes.

const FIELDS = 'id kind status articleSlug baseVersion section title markdown summary createdAt gapGroupId reviewedAt reason';

/** The open proposals of a workspace, a page at a time. */
export const OPEN = `query ConsoleOpenProposals($w: String!, $cursor: String) {
  proposals(workspace: $w, status: open, limit: 50, cursor: $cursor) { items { ${FIELDS} } nextCursor }
}`;

/** An article as it is now. */
export const ARTICLE = `query ConsoleArticle($w: String!, $slug: String!) {
  article(workspace: $w, slug: $slug) { slug title markdown version status section updatedAt }
}`;

/** How an open edit merges into the article now: the merged text and the lines changed two ways. */
export const MERGE = `query ConsoleProposalMerge($w: String!, $id: Int!) {
  proposalMerge(workspace: $w, id: $id) { clean title markdown conflicts { field line currentLines base proposed current } }
}`;

/** Approves a proposal: merged into the article now, or the reviewer's resolution of its conflicts. */
export const APPROVE = `mutation ConsoleApprove($w: String!, $id: Int!, $resolution: ResolutionInput) {
  approveProposal(workspace: $w, id: $id, resolution: $resolution) { ${FIELDS} }
}`;

/** Returns a proposal to its proposer with a comment (they read it over REST and MCP, and propose again). */
export const RETURN = `mutation ConsoleReturn($w: String!, $id: Int!, $comment: String!) {
  returnProposal(workspace: $w, id: $id, comment: $comment) { ${FIELDS} }
}`;

/** Rejects a proposal with a reason the proposer sees. */
export const REJECT = `mutation ConsoleReject($w: String!, $id: Int!, $reason: String!) {
  rejectProposal(workspace: $w, id: $id, reason: $reason) { ${FIELDS} }
}`;

/** Any proposal of the workspace created or reviewed. */
export const CHANGED = `subscription ConsoleProposalChanged($w: String!) { proposalChanged(workspace: $w) { action proposal { id status } } }`;
