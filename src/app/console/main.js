// The review console: sign-in, the choice of organization and workspace, and the screens of one
// workspace (proposals, content gaps, agent keys, audit trail). Routes live in the URL's fragment
// (#/proposals, #/proposals/12, …), so the browser's back button and reloads keep the screen.
/* global document, location, history, window, sessionStorage, setTimeout, clearTimeout, setInterval, clearInterval */
import { announce, busy, fill, h, message, time } from './dom.js';
import { gql, LiveClient, session, whenUnauthorized } from './graphql.js';
import { proposalsScreen } from './proposals.js';
import { gapsScreen } from './gaps.js';
import { keysScreen } from './keys.js';
import { auditScreen } from './audit.js';

const WORKSPACE = 'wks.console.workspace';
const PAGE_SIZE = 50;

const main = document.getElementById('main');
const nav = document.getElementById('nav');
const contextBar = document.getElementById('context');
const sessionBar = document.getElementById('session');
const permissions = (document.body.dataset.permissions ?? '').split(' ').filter(Boolean);

/** The screens of a chosen workspace, in tab order. */
const SCREENS = [
  { route: 'proposals', label: 'Proposals', render: proposalsScreen },
  { route: 'gaps', label: 'Content gaps', render: gapsScreen },
  { route: 'keys', label: 'Agent keys', render: keysScreen },
  { route: 'audit', label: 'Audit trail', render: auditScreen },
];

let live = null;
let view = null;
let signInNotice = null;

/** The workspace chosen in this tab: `{ id, name, organizationId, organizationName }`. */
const chosen = {
  get() {
    try {
      return JSON.parse(sessionStorage.getItem(WORKSPACE) ?? 'null');
    } catch {
      return null;
    }
  },
  set(value) {
    sessionStorage.setItem(WORKSPACE, JSON.stringify(value));
  },
};

/**
 * One screen on show. Its work stops mattering when another screen replaces it: `alive` turns
 * false, its subscriptions end and its cleanups run.
 */
class View {
  constructor() {
    this.alive = true;
    this.cleanups = [];
  }
  onClose(cleanup) {
    this.cleanups.push(cleanup);
  }
  subscribe(query, variables, sink) {
    if (!live) return;
    this.onClose(live.subscribe(query, variables, sink));
  }
  close() {
    this.alive = false;
    for (const cleanup of this.cleanups.splice(0)) cleanup();
  }
}

function parseRoute() {
  const match = /^#\/([\w-]+)(?:\/([^?]*))?$/.exec(location.hash);
  return match ? { name: match[1], arg: match[2] ? decodeURIComponent(match[2]) : null } : { name: '', arg: null };
}

/** Shows another route (a history entry of its own). */
function go(path) {
  if (location.hash === `#/${path}`) render();
  else location.hash = `#/${path}`;
}

/** Names the current route without showing it again (e.g. the selected proposal). */
function setRoute(path) {
  history.replaceState(null, '', `#/${path}`);
}

function redirect(path) {
  setRoute(path);
  render();
}

async function render() {
  view?.close();
  const { name, arg } = parseRoute();
  const token = session.token;
  const workspace = chosen.get();
  if (!token) {
    if (name !== 'sign-in') return redirect('sign-in');
  } else if (name === 'sign-in' || name === '') return redirect(workspace ? 'proposals' : 'workspaces');
  const screen = SCREENS.find((s) => s.route === name);
  if (token && name !== 'workspaces' && !screen) return redirect(workspace ? 'proposals' : 'workspaces');
  if (screen && !workspace) return redirect('workspaces');

  view = new View();
  const current = view;
  drawChrome(name, workspace);
  const ctx = { view: current, main, workspace, arg, live, go, setRoute, permissions, gql };
  try {
    if (name === 'sign-in') signInScreen(ctx);
    else if (name === 'workspaces') await workspacesScreen(ctx);
    else await screen.render(ctx);
  } catch (error) {
    if (current.alive) fill(main, h('h1', {}, 'Something went wrong'), message('error', error.message));
  }
  if (current.alive && current.focusHeading !== false) main.querySelector('h1')?.focus({ preventScroll: true });
}

/** The header (workspace, live indicator, sign-out) and the screen tabs. */
function drawChrome(route, workspace) {
  const signedIn = Boolean(session.token);
  fill(
    contextBar,
    signedIn && workspace
      ? [
          h('span', { class: 'context-org' }, workspace.organizationName),
          h('span', { class: 'context-sep', 'aria-hidden': 'true' }, '/'),
          h('strong', { class: 'context-ws' }, workspace.name),
          h('a', { href: '#/workspaces', class: 'context-change' }, 'Change workspace'),
        ]
      : null,
  );
  fill(
    sessionBar,
    signedIn ? [liveIndicator(), h('button', { type: 'button', class: 'button-quiet', on: { click: signOut } }, 'Sign out')] : null,
  );
  const tabs = signedIn && workspace && route !== 'workspaces' && route !== 'sign-in';
  nav.hidden = !tabs;
  fill(
    nav,
    tabs
      ? h(
          'ul',
          {},
          SCREENS.map((s) =>
            h('li', {}, h('a', { href: `#/${s.route}`, 'aria-current': s.route === route ? 'page' : null, class: 'tab' }, s.label)),
          ),
        )
      : null,
  );
}

let liveButton = null;
let countdown = null;

/** "Live" / "Offline": the state of the subscriptions' socket; a button that reconnects at once. */
function liveIndicator() {
  liveButton = h('button', {
    type: 'button',
    id: 'live',
    class: 'live',
    on: { click: () => live?.reconnectNow() },
  });
  showLiveStatus(live?.status ?? { state: 'offline' });
  return h('span', { class: 'live-wrap', role: 'status', 'aria-live': 'polite' }, liveButton);
}

function showLiveStatus(status) {
  clearInterval(countdown);
  if (!liveButton) return;
  const draw = () => {
    const seconds = status.retryAt ? Math.max(0, Math.ceil((status.retryAt - Date.now()) / 1000)) : null;
    const text = {
      live: 'Live',
      connecting: 'Connecting…',
      offline: seconds === null ? 'Offline' : `Offline · retry in ${seconds} s`,
      refused: 'Offline · refused',
    }[status.state];
    liveButton.textContent = text;
    liveButton.dataset.state = status.state;
    liveButton.title =
      status.state === 'live'
        ? 'Live updates are on: new events appear as they happen.'
        : `Live updates are off${status.reason ? ` (${status.reason})` : ''}. Press to reconnect now.`;
    liveButton.setAttribute('aria-label', `Live updates: ${text}${status.state === 'live' ? '' : '. Press to reconnect now'}`);
  };
  draw();
  if (status.state === 'offline' && status.retryAt) countdown = setInterval(draw, 1000);
}

function startLive(token) {
  live?.close();
  live = new LiveClient({ token, onStatus: showLiveStatus });
}

function signOut(notice = null) {
  view?.close();
  live?.close();
  live = null;
  session.clear();
  signInNotice = typeof notice === 'string' ? notice : 'Signed out.';
  go('sign-in');
}

whenUnauthorized((reason) => {
  if (session.token) signOut(`The service refused the token: ${reason} Sign in again.`);
});

function signInScreen(ctx) {
  const input = h('input', {
    id: 'token',
    name: 'token',
    type: 'password',
    autocomplete: 'off',
    spellcheck: 'false',
    required: true,
    'aria-describedby': 'token-hint',
  });
  const errorBox = h('div', { class: 'form-errors' });
  const form = h(
    'form',
    { class: 'card signin', novalidate: true },
    h('div', { class: 'field' }, h('label', { for: 'token' }, 'Admin token'), input),
    h(
      'p',
      { id: 'token-hint', class: 'hint' },
      'The service’s ADMIN_TOKEN (or the one it printed at its first start). It stays in this tab only and is sent to this service only.',
    ),
    errorBox,
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, 'Sign in')),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const token = input.value.trim();
    fill(errorBox);
    if (!token) {
      fill(errorBox, message('error', 'Enter the admin token.'));
      input.focus();
      return;
    }
    await busy(form, async () => {
      try {
        await gql('query ConsoleSignIn { organizations(first: 1) { totalCount } }', {}, { token });
      } catch (error) {
        if (!ctx.view.alive) return;
        fill(errorBox, message('error', error.message));
        input.focus();
        input.select();
        return;
      }
      session.token = token;
      signInNotice = null;
      startLive(token);
      announce('Signed in.');
      go(chosen.get() ? 'proposals' : 'workspaces');
    });
  });
  fill(
    main,
    h(
      'section',
      { class: 'signin-wrap', 'aria-labelledby': 'signin-title' },
      h('h1', { id: 'signin-title', tabindex: '-1' }, 'Sign in to the review console'),
      h('p', { class: 'lead' }, 'Review proposals, turn content gaps into drafts, manage agent keys and follow the audit trail.'),
      signInNotice ? message('info', signInNotice) : null,
      form,
    ),
  );
  ctx.view.focusHeading = false;
  input.focus();
}

const ORGANIZATIONS = `query ConsoleOrganizations($after: String, $first: Int) {
  organizations(first: $first, after: $after) { totalCount pageInfo { hasNextPage endCursor } edges { node { id name plan createdAt } } }
}`;
const WORKSPACES = `query ConsoleWorkspaces($org: ID!, $after: String, $first: Int) {
  workspaces(organizationId: $org, first: $first, after: $after) {
    totalCount pageInfo { hasNextPage endCursor } edges { node { id name createdAt organization { id name } } }
  }
}`;

/** Organizations (oldest first, page by page), then the workspaces of the one chosen. */
async function workspacesScreen(ctx) {
  const { view } = ctx;
  const current = chosen.get();
  const orgs = [];
  let orgPage = { hasNextPage: false, endCursor: null };
  let orgTotal = 0;
  let selectedOrg = current ? { id: current.organizationId, name: current.organizationName } : null;

  const orgList = h('ul', { class: 'pick-list', 'aria-labelledby': 'orgs-title' });
  const orgMore = h('div', { class: 'more' });
  const orgCount = h('span', { class: 'count' });
  const orgErrors = h('div');
  const filter = h('input', { type: 'search', id: 'org-filter', placeholder: 'Name contains…', autocomplete: 'off' });
  const wsColumn = h('section', { class: 'card column', 'aria-labelledby': 'ws-title' });

  const drawOrgs = () => {
    const needle = filter.value.trim().toLowerCase();
    const shown = orgs.filter((o) => !needle || o.name.toLowerCase().includes(needle));
    fill(orgCount, `${orgs.length} of ${orgTotal} loaded`);
    fill(
      orgList,
      shown.length
        ? shown.map((o) =>
            h(
              'li',
              {},
              h(
                'button',
                {
                  type: 'button',
                  class: 'pick',
                  'aria-pressed': String(selectedOrg?.id === o.id),
                  'data-focus': `org:${o.id}`,
                  on: { click: () => chooseOrg(o) },
                },
                h('span', { class: 'pick-name' }, o.name),
                h('span', { class: 'pick-meta' }, `${o.plan} · created `, time(o.createdAt, { dateOnly: true })),
              ),
            ),
          )
        : h('li', { class: 'empty' }, orgs.length ? 'No loaded organization matches.' : 'No organizations yet.'),
    );
    fill(
      orgMore,
      orgPage.hasNextPage
        ? h('button', { type: 'button', class: 'button-quiet', on: { click: loadOrgs } }, 'Load more organizations')
        : null,
    );
  };

  async function loadOrgs() {
    try {
      const data = await gql(ORGANIZATIONS, { first: PAGE_SIZE, after: orgPage.endCursor });
      if (!view.alive) return;
      const connection = data.organizations;
      orgs.push(...connection.edges.map((e) => e.node));
      orgPage = connection.pageInfo;
      orgTotal = connection.totalCount;
      fill(orgErrors);
      drawOrgs();
    } catch (error) {
      if (view.alive) fill(orgErrors, message('error', error.message));
    }
  }

  async function chooseOrg(org) {
    selectedOrg = org;
    drawOrgs();
    await loadWorkspaces(org, true);
  }

  async function loadWorkspaces(org, focus) {
    const items = [];
    let page = { hasNextPage: false, endCursor: null };
    const list = h('ul', { class: 'pick-list', 'aria-labelledby': 'ws-title' });
    const more = h('div', { class: 'more' });
    const errors = h('div');
    const title = h('h2', { id: 'ws-title', tabindex: '-1' }, `Workspaces of ${org.name ?? org.id}`);
    fill(wsColumn, title, errors, list, more);
    const draw = () => {
      fill(
        list,
        items.length
          ? items.map((w) =>
              h(
                'li',
                {},
                h(
                  'button',
                  {
                    type: 'button',
                    class: 'pick',
                    'aria-pressed': String(current?.id === w.id),
                    on: { click: () => chooseWorkspace(w) },
                  },
                  h('span', { class: 'pick-name' }, w.name),
                  h('span', { class: 'pick-meta' }, 'created ', time(w.createdAt, { dateOnly: true }), ' · ', h('code', {}, w.id)),
                ),
              ),
            )
          : h('li', { class: 'empty' }, 'This organization has no workspaces.'),
      );
      fill(
        more,
        page.hasNextPage
          ? h('button', { type: 'button', class: 'button-quiet', on: { click: () => load() } }, 'Load more workspaces')
          : null,
      );
    };
    const load = async () => {
      try {
        const data = await gql(WORKSPACES, { org: org.id, first: PAGE_SIZE, after: page.endCursor });
        if (!view.alive || selectedOrg?.id !== org.id) return;
        items.push(...data.workspaces.edges.map((e) => e.node));
        page = data.workspaces.pageInfo;
        if (items[0] && org.name === undefined) org.name = items[0].organization.name;
        title.textContent = `Workspaces of ${org.name ?? org.id}`;
        draw();
      } catch (error) {
        if (view.alive) fill(errors, message('error', error.message));
      }
    };
    await load();
    if (focus && view.alive) title.focus();
  }

  function chooseWorkspace(w) {
    chosen.set({ id: w.id, name: w.name, organizationId: w.organization.id, organizationName: w.organization.name });
    announce(`Workspace ${w.name} chosen.`);
    go('proposals');
  }

  const byId = h('input', { id: 'org-id', name: 'org-id', autocomplete: 'off', spellcheck: 'false', required: true });
  const byIdForm = h(
    'form',
    { class: 'inline-form' },
    h('label', { for: 'org-id' }, 'Open an organization by id'),
    h('div', { class: 'inline-row' }, byId, h('button', { type: 'submit' }, 'Open')),
  );
  byIdForm.addEventListener('submit', (event) => {
    event.preventDefault();
    const id = byId.value.trim();
    if (!id) return;
    selectedOrg = orgs.find((o) => o.id === id) ?? { id, name: undefined };
    drawOrgs();
    void loadWorkspaces(selectedOrg, true);
  });
  filter.addEventListener('input', drawOrgs);

  fill(
    main,
    h('h1', { tabindex: '-1' }, 'Choose a workspace'),
    h('p', { class: 'lead' }, 'Pick an organization, then the workspace to review.'),
    h(
      'div',
      { class: 'columns columns-2' },
      h(
        'section',
        { class: 'card column', 'aria-labelledby': 'orgs-title' },
        h('h2', { id: 'orgs-title' }, 'Organizations ', orgCount),
        h('div', { class: 'field field-compact' }, h('label', { for: 'org-filter' }, 'Filter the loaded organizations'), filter),
        orgErrors,
        orgList,
        orgMore,
        byIdForm,
      ),
      wsColumn,
    ),
  );
  fill(wsColumn, h('h2', { id: 'ws-title' }, 'Workspaces'), h('p', { class: 'muted' }, 'Choose an organization first.'));
  await loadOrgs();
  if (selectedOrg && view.alive) await loadWorkspaces(selectedOrg, false);
}

// The skip link moves the keyboard's focus without touching the route in the fragment.
document.querySelector('.skip-link')?.addEventListener('click', (event) => {
  event.preventDefault();
  main.focus();
});

window.addEventListener('hashchange', render);
if (session.token) startLive(session.token);
render();

// A tab shown again reconnects at once rather than waiting out its backoff.
let idle = null;
document.addEventListener('visibilitychange', () => {
  clearTimeout(idle);
  if (document.visibilityState === 'visible') idle = setTimeout(() => live?.reconnectNow(), 100);
});
