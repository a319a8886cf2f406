// The sessions screen: where the person is signed in (every browser's session, never its cookie),
// and, for an owner, every member of the organization; each live session can be ended at once
// (in every process of the service: it is refused from its next request on).
import { busy, fill, h, message, time } from './dom.js';
import { browserSummary } from './userAgent.js';

const FIELDS = 'id memberId email method mfa userAgent createdAt lastSeenAt expiresAt current';
const MINE = `query ConsoleSessions { sessions { ${FIELDS} } }`;
const ORGANIZATION = `query ConsoleOrganizationSessions($org: ID!) { sessions(organizationId: $org) { ${FIELDS} } }`;
const REVOKE = 'mutation ConsoleRevokeSession($id: ID!) { revokeSession(id: $id) { id revokedAt } }';

/** The "Sessions" screen. */
export async function sessionsScreen(ctx) {
  const { view, main, gql, session, workspace } = ctx;
  const all = session.may('sessions.manage');
  const errors = h('div');
  const tbody = h('tbody');
  fill(
    main,
    h('h1', { tabindex: '-1' }, 'Sessions'),
    h(
      'p',
      { class: 'lead' },
      all
        ? `Everyone signed in to ${workspace.organizationName}. Ending a session signs that browser out at once.`
        : 'Where you are signed in. Ending a session signs that browser out at once.',
    ),
    errors,
    h(
      'div',
      { class: 'card table-wrap' },
      h(
        'table',
        { class: 'data sessions' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            ['Member', 'Signed in', 'How', 'Last seen', 'Ends', 'Browser', ''].map((t) => h('th', { scope: 'col' }, t)),
          ),
        ),
        tbody,
      ),
    ),
  );
  let rows;
  try {
    rows = (all ? await gql(ORGANIZATION, { org: workspace.organizationId }) : await gql(MINE)).sessions;
  } catch (error) {
    if (view.alive) fill(errors, message('error', error.message));
    return;
  }
  if (!view.alive) return;
  fill(tbody, rows.length ? rows.map((s) => row(s, { gql, view })) : h('tr', {}, h('td', { colspan: 7 }, 'No live sessions.')));
}

/** The browser of a session as a person reads it ("Firefox 131 on Windows"), its whole User-Agent on hover; an unknown one whole, wrapped. */
function browserCell(userAgent) {
  if (!userAgent) return h('td', { class: 'muted' }, '—');
  const summary = browserSummary(userAgent);
  return h('td', { class: 'user-agent', title: userAgent }, summary ?? userAgent);
}

function row(s, { gql, view }) {
  const cell = h('td');
  if (s.current) fill(cell, h('span', { class: 'muted' }, 'This browser'));
  else {
    const button = h(
      'button',
      { type: 'button', class: 'danger button-small', 'aria-label': `End the session of ${s.email}` },
      'End session',
    );
    button.addEventListener('click', () => void end(s, cell, { gql, view }));
    fill(cell, button);
  }
  return h(
    'tr',
    { dataset: { session: s.id } },
    h('td', {}, s.email),
    h('td', {}, time(s.createdAt)),
    h('td', {}, s.method === 'oidc' ? 'Identity provider' : 'Sign-in link', s.mfa ? ' · two-factor' : ''),
    h('td', {}, time(s.lastSeenAt)),
    h('td', {}, time(s.expiresAt)),
    browserCell(s.userAgent),
    cell,
  );
}

async function end(s, cell, { gql, view }) {
  await busy(cell, async () => {
    try {
      await gql(REVOKE, { id: s.id });
      if (view.alive) fill(cell, h('span', { class: 'muted' }, 'Ended'));
    } catch (error) {
      if (view.alive) fill(cell, message('error', error.message));
    }
  });
}
