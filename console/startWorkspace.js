// The workspace a signed-in person starts in: the one this tab chose, else the last one they chose in
// this browser, else the only one there is (one organization with one workspace). Whoever has more and
// has never chosen picks from the list.
import { chosenWorkspace, lastWorkspace } from './session.js';
import { ORGANIZATIONS, WORKSPACES } from './workspaceQueries.js';

/** The one workspace the person can reach, when they can reach exactly one; else null. */
async function onlyWorkspace(gql) {
  const orgs = (await gql(ORGANIZATIONS, { first: 2, after: null })).organizations;
  if (orgs.totalCount !== 1 || orgs.edges.length !== 1) return null;
  const workspaces = (await gql(WORKSPACES, { org: orgs.edges[0].node.id, first: 2, after: null })).workspaces;
  if (workspaces.totalCount !== 1 || workspaces.edges.length !== 1) return null;
  const w = workspaces.edges[0].node;
  return { id: w.id, name: w.name, organizationId: w.organization.id, organizationName: w.organization.name };
}

/** Chooses the workspace this tab starts in for `member` (GET /console/session's), if one goes without asking; returns it or null. */
export async function startingWorkspace(gql, member) {
  const chosen = chosenWorkspace.get();
  if (chosen) return chosen;
  // The lists failing here is no reason not to start: the person then chooses, and sees the error there.
  const found = lastWorkspace(member.id) ?? (await onlyWorkspace(gql).catch(() => null));
  if (found) chosenWorkspace.set(found);
  return found;
}
