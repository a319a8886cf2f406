// The GraphQL the content-gaps screen sends: the groups, their sample questions, the sections a draft
// may go in, the draft from notes, the proposal itself, and the live changes.

/** The workspace's groups of unanswered questions, most asked first. */
export const GROUPS = `query ConsoleGapGroups($w: ID!, $resolved: Boolean!) {
  contentGapGroups(workspaceId: $w, includeResolved: $resolved) {
    id label reportCount searchCount firstSeen lastSeen nearestArticleSlug resolvedAt state proposalId
  }
}`;

/** The open groups' sample questions (scrubbed of addresses and secrets), newest first. */
export const SAMPLES = `query ConsoleGapSamples($w: String!, $cursor: String) {
  contentGaps(workspace: $w, limit: 100, cursor: $cursor) { items { id questionCount sampleQuestions } nextCursor }
}`;

/** The sections a new article may go in. */
export const SECTIONS = `query ConsoleSections($w: String!) { sections(workspace: $w) { key label } }`;

/** A group's draft from notes: the memory notes that answer its questions, and a new article quoting them. */
export const DRAFT = `query ConsoleGapDraft($w: String!, $group: Int!) {
  contentGapDraft(workspace: $w, group: $group) { title markdown summary notes { path kind version answers coverage excerpt } }
}`;

/** A new-article proposal that answers a group. */
export const PROPOSE = `mutation ConsoleProposeFromGap($w: String!, $group: Int!, $input: GapProposalInput!) {
  proposeFromContentGap(workspace: $w, group: $group, input: $input) { id status kind title section gapGroupId }
}`;

/** Any group of the workspace reported, proposed or resolved. */
export const CHANGED = `subscription ConsoleGapChanged($w: String!) { contentGapChanged(workspace: $w) { action group { id state } } }`;
