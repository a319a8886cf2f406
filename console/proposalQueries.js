// The GraphQL the proposals screen sends: the open proposals, the article an edit is based on, the
// two reviews, and the live changes.

const FIELDS = 'id kind status articleSlug baseVersion section title markdown summary createdAt gapGroupId reviewedAt reason';

/** The open proposals of a workspace, a page at a time. */
export const OPEN = `query ConsoleOpenProposals($w: String!, $cursor: String) {
  proposals(workspace: $w, status: open, limit: 50, cursor: $cursor) { items { ${FIELDS} } nextCursor }
}`;

/** An article as it is now. */
export const ARTICLE = `query ConsoleArticle($w: String!, $slug: String!) {
  article(workspace: $w, slug: $slug) { slug title markdown version status section updatedAt }
}`;

/** Approves a proposal. */
export const APPROVE = `mutation ConsoleApprove($w: String!, $id: Int!) { approveProposal(workspace: $w, id: $id) { ${FIELDS} } }`;

/** Rejects a proposal with a reason the proposer sees. */
export const REJECT = `mutation ConsoleReject($w: String!, $id: Int!, $reason: String!) {
  rejectProposal(workspace: $w, id: $id, reason: $reason) { ${FIELDS} }
}`;

/** Any proposal of the workspace created or reviewed. */
export const CHANGED = `subscription ConsoleProposalChanged($w: String!) { proposalChanged(workspace: $w) { action proposal { id status } } }`;
