// The "Connected apps" screen: the OAuth grants of the workspace's organization (the clients members
// allowed, in which workspace, with which scopes) and their revocation, which every process honours
// within seconds.
/* global location */
import { announce, badge, fill, h, message, time } from './dom.js';
import { drawRevoke } from './revoke.js';

const FIELDS = 'id memberId memberEmail workspaceId workspaceName clientId clientName scopes resource createdAt lastUsedAt revokedAt';

/** The live grants of an organization, newest first. */
export const GRANTS = `query ConsoleOAuthGrants($org: ID) { oauthGrants(organizationId: $org) { ${FIELDS} } }`;

/** Revokes one grant. */
export const REVOKE_GRANT = `mutation ConsoleRevokeOAuthGrant($id: ID!, $org: ID) { revokeOAuthGrant(id: $id, organizationId: $org) { ${FIELDS} } }`;

const COLUMNS = ['App', 'Member', 'Workspace', 'Scopes', 'Resource', 'Allowed', 'Last used', ''];

/** An empty list says how an app gets here: the MCP address, added in the app, then the person allows it. */
const NONE_YET = () => [
  'No connected apps yet. Add ',
  h('code', {}, `${location.origin}/mcp`),
  ' to Claude or ChatGPT as a custom connector (or to VS Code, Cursor or Claude Code as an HTTP MCP server):',
  ' you sign in to this service, allow it, and it appears in this list.',
];

function clientCell(g) {
  const byDocument = /^https:\/\//.test(g.clientId);
  const host = byDocument ? new URL(g.clientId).host : null;
  return [h('strong', {}, g.clientName), ' ', byDocument ? badge(host, 'verified') : badge('self-registered', 'unverified')];
}

/** The revoke control of grant `g` (its tokens stop working once revoked). */
function drawGrantRevoke(g, cell, { gql, view, org, onRevoked }) {
  drawRevoke(cell, {
    name: g.clientName,
    consequence: 'Its tokens stop working within seconds.',
    send: async () => (await gql(REVOKE_GRANT, { id: g.id, org })).revokeOAuthGrant,
    view,
    onRevoked,
  });
}

/** The "Connected apps" screen. */
export async function connectedAppsScreen(ctx) {
  const { view, main, workspace, gql, session } = ctx;
  const all = !session || session.may('sessions.manage');
  const org = workspace.organizationId;
  const tbody = h('tbody');
  const errors = h('div');
  const draw = (grants) => {
    const rows = grants.map((g) => {
      const action = h('td', { class: 'cell-action' });
      const onRevoked = (revoked) => {
        announce(`${revoked.clientName} revoked.`);
        draw(grants.filter((x) => x.id !== revoked.id));
      };
      drawGrantRevoke(g, action, { gql, view, org, onRevoked });
      return h(
        'tr',
        { 'data-grant': g.id },
        h('td', {}, clientCell(g)),
        h('td', {}, g.memberEmail),
        h('td', {}, g.workspaceName),
        h(
          'td',
          {},
          h(
            'ul',
            { class: 'chips', 'aria-label': `${g.scopes.length} scopes` },
            g.scopes.map((s) => h('li', {}, s)),
          ),
        ),
        h('td', {}, h('code', {}, g.resource)),
        h('td', {}, time(g.createdAt)),
        h('td', {}, g.lastUsedAt ? time(g.lastUsedAt) : '—'),
        action,
      );
    });
    fill(tbody, rows.length ? rows : h('tr', {}, h('td', { colspan: String(COLUMNS.length), class: 'empty' }, NONE_YET())));
  };
  fill(
    main,
    h('h1', { tabindex: '-1' }, 'Connected apps'),
    h(
      'p',
      { class: 'lead' },
      all
        ? `Apps the members of ${workspace.organizationName} allowed over OAuth (MCP and the REST API).`
        : 'Apps you allowed over OAuth (MCP and the REST API).',
    ),
    errors,
    h(
      'div',
      { class: 'card table-wrap' },
      h(
        'table',
        { class: 'data grants' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            COLUMNS.map((c) => h('th', { scope: 'col' }, c)),
          ),
        ),
        tbody,
      ),
    ),
  );
  try {
    const data = await gql(GRANTS, { org });
    if (view.alive) draw(data.oauthGrants);
  } catch (error) {
    if (view.alive) fill(errors, message('error', error.message));
  }
}
