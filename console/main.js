// The review console: the signed-in person (their session; signing in happens on /console/sign-in),
// the choice of workspace in their organization, the screens of one workspace (proposals, content
// gaps, agent keys, audit trail, agents and people, guidance, sessions), each shown as the person's
// role allows, and documents' pages (#/ws/<workspace>/articles/<slug>, …). Routes live in the URL's
// fragment (#/proposals, #/proposals/12, …), so the browser's back button and reloads keep the
// screen, and an address opened before a workspace was chosen is where the choice leads.
/* global document, location, window, setTimeout, clearTimeout */
import { announce, fill, h, message } from './dom.js';
import { aRole, onlyRolesCan } from './refusals.js';
import { startingWorkspace } from './startWorkspace.js';
import { gql, whenUnauthorized } from './graphql.js';
import { LiveClient } from './liveClient.js';
import { showLiveStatus } from './liveIndicator.js';
import { chosenWorkspace, endSession, loadSession, session, toSignInPage } from './session.js';
import { drawChrome } from './chrome.js';
import { goTo, parseRoute, setRoute, View } from './view.js';
import { workspacesScreen } from './workspaces.js';
import { proposalsScreen } from './proposals.js';
import { gapsScreen } from './gaps.js';
import { keysScreen } from './keys.js';
import { auditScreen } from './audit.js';
import { sessionsScreen } from './sessions.js';
import { connectedAppsScreen } from './connectedApps.js';
import { guidanceScreen } from './guidance.js';
import { dashboardScreen } from './dashboard.js';
import { adoptWorkspace, documentScreen } from './documentPage.js';

const main = document.getElementById('main');

/** The screens of a chosen workspace, in tab order; `needs` what the role table must allow, to do what (`doing`). */
const SCREENS = [
  { route: 'proposals', label: 'Proposals', render: proposalsScreen },
  { route: 'gaps', label: 'Content gaps', render: gapsScreen },
  { route: 'keys', label: 'Agent keys', render: keysScreen, needs: 'agent_keys.manage', doing: 'manage agent keys' },
  { route: 'audit', label: 'Audit trail', render: auditScreen, needs: 'audit.read', doing: 'see the audit trail' },
  {
    route: 'activity',
    label: 'Agents and people',
    render: dashboardScreen,
    needs: 'audit.read',
    doing: 'see who uses the workspace',
  },
  { route: 'guidance', label: 'Guidance', render: guidanceScreen },
  { route: 'sessions', label: 'Sessions', render: sessionsScreen },
  { route: 'apps', label: 'Connected apps', render: connectedAppsScreen },
];

/** The tabs of the person's role (a screen it does not allow can still be opened by its address: it then says who may). */
const tabs = () => SCREENS.filter((s) => !s.needs || session.may(s.needs));

let live = null;
let view = null;
/** The address asked for before a workspace was chosen (`proposals/12`): where choosing one leads. */
let afterChoice = null;

const go = (path) => goTo(path, render);
const home = () => (chosenWorkspace.get() ? 'proposals' : 'workspaces');

function redirect(path) {
  setRoute(path);
  render();
}

/** The route the tab may show now, or null when `name` is it: no workspace, only the choice (which then leads on to `name`). */
function allowed(name, screen) {
  if (name === 'sign-in' || name === '') return home();
  if (name === 'ws') return null; // a document's page chooses its own workspace
  if (name !== 'workspaces' && !screen) return home();
  if (screen && !chosenWorkspace.get()) {
    afterChoice = location.hash.slice(2);
    return 'workspaces';
  }
  return null;
}

/** Where choosing a workspace leads: the address asked for first, else its proposals. */
function takeAfterChoice() {
  const next = afterChoice ?? 'proposals';
  afterChoice = null;
  return next;
}

/** A screen the person's role does not allow, opened by its address: who may see it, in words (nothing is asked of the service). */
function refusal(screen, workspace) {
  const { member } = session.current;
  fill(
    main,
    h('h1', { tabindex: '-1' }, screen.label),
    message(
      'warning',
      h('strong', {}, onlyRolesCan(screen.needs, screen.doing)),
      ` You are signed in as ${member.email}, ${aRole(member.role)} of ${workspace.organizationName}: an owner can change your role.`,
    ),
    h('p', {}, h('a', { href: '#/proposals' }, 'Go to the proposals')),
  );
}

/** Shows the screen the URL names, in a View of its own. */
async function render() {
  view?.close();
  const { name, arg } = parseRoute();
  const screen = SCREENS.find((s) => s.route === name);
  const elsewhere = allowed(name, screen);
  if (elsewhere) return redirect(elsewhere);

  const current = (view = new View(live));
  // A document's address (#/ws/<workspace>/…) chooses its workspace first, when the person can reach it.
  const reachable = name === 'ws' ? await adoptWorkspace(gql, (arg ?? '').split('/')[0]).catch(() => false) : true;
  if (!current.alive) return;
  const workspace = chosenWorkspace.get();
  drawChrome(name, { person: session.current, workspace, screens: tabs(), live, signOut });
  const ctx = { view: current, main, workspace, arg, go, setRoute, gql, session, takeAfterChoice, afterChoice, reachable };
  try {
    if (name === 'workspaces') await workspacesScreen(ctx);
    else if (name === 'ws') await documentScreen(ctx);
    else if (screen.needs && !session.may(screen.needs)) refusal(screen, workspace);
    else await screen.render(ctx);
  } catch (error) {
    if (current.alive) fill(main, h('h1', {}, 'Something went wrong'), message('error', error.message));
  }
  if (current.alive && current.focusHeading !== false) main.querySelector('h1')?.focus({ preventScroll: true });
}

/** Signs out: ends the session on the service, then the sign-in page says why (`notice`: a code of its fixed sentences). */
async function signOut(notice = null) {
  view?.close();
  live?.close();
  live = null;
  await endSession();
  toSignInPage(typeof notice === 'string' ? notice : 'signed_out');
}

whenUnauthorized(() => {
  if (session.current) {
    session.clear();
    live?.close();
    toSignInPage('session_ended');
  }
});

// The skip link moves the keyboard's focus without touching the route in the fragment.
document.querySelector('.skip-link')?.addEventListener('click', (event) => {
  event.preventDefault();
  main.focus();
});

/** Starts the console for the signed-in person, or sends the browser to the sign-in page. */
async function start() {
  let person;
  try {
    person = await loadSession();
  } catch {
    fill(main, h('h1', {}, 'The service cannot be reached'), message('error', 'Check the connection and reload the page.'));
    return;
  }
  if (!person) return toSignInPage();
  await startingWorkspace(gql, person.member);
  live = new LiveClient({ onStatus: showLiveStatus });
  window.addEventListener('hashchange', render);
  announce(`Signed in as ${person.member.email}.`);
  render();
}

void start();

// A tab shown again reconnects at once rather than waiting out its backoff.
let idle = null;
document.addEventListener('visibilitychange', () => {
  clearTimeout(idle);
  if (document.visibilityState === 'visible') idle = setTimeout(() => live?.reconnectNow(), 100);
});
