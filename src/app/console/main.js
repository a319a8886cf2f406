// The review console: sign-in, the choice of organization and workspace, and the screens of one
// workspace (proposals, content gaps, agent keys, audit trail). Routes live in the URL's fragment
// (#/proposals, #/proposals/12, …), so the browser's back button and reloads keep the screen.
/* global document, window, setTimeout, clearTimeout */
import { announce, fill, h, message } from './dom.js';
import { gql, whenUnauthorized } from './graphql.js';
import { LiveClient } from './liveClient.js';
import { showLiveStatus } from './liveIndicator.js';
import { chosenWorkspace, session } from './session.js';
import { drawChrome } from './chrome.js';
import { goTo, parseRoute, setRoute, View } from './view.js';
import { setSignInNotice, signInScreen } from './signIn.js';
import { workspacesScreen } from './workspaces.js';
import { proposalsScreen } from './proposals.js';
import { gapsScreen } from './gaps.js';
import { keysScreen } from './keys.js';
import { auditScreen } from './audit.js';
import { connectedAppsScreen } from './connectedApps.js';

const main = document.getElementById('main');

/** The screens of a chosen workspace, in tab order. */
const SCREENS = [
  { route: 'proposals', label: 'Proposals', render: proposalsScreen },
  { route: 'gaps', label: 'Content gaps', render: gapsScreen },
  { route: 'keys', label: 'Agent keys', render: keysScreen },
  { route: 'audit', label: 'Audit trail', render: auditScreen },
  { route: 'apps', label: 'Connected apps', render: connectedAppsScreen },
];

let live = null;
let view = null;

const go = (path) => goTo(path, render);
const home = () => (chosenWorkspace.get() ? 'proposals' : 'workspaces');

function redirect(path) {
  setRoute(path);
  render();
}

/** The route the tab may show now, or null when `name` is it: signed out, only the sign-in; no workspace, only the choice. */
function allowed(name, screen) {
  if (!session.token) return name === 'sign-in' ? null : 'sign-in';
  if (name === 'sign-in' || name === '') return home();
  if (name !== 'workspaces' && !screen) return home();
  if (screen && !chosenWorkspace.get()) return 'workspaces';
  return null;
}

/** Shows the screen the URL names, in a View of its own. */
async function render() {
  view?.close();
  const { name, arg } = parseRoute();
  const screen = SCREENS.find((s) => s.route === name);
  const elsewhere = allowed(name, screen);
  if (elsewhere) return redirect(elsewhere);

  const workspace = chosenWorkspace.get();
  const current = (view = new View(live));
  drawChrome(name, { signedIn: Boolean(session.token), workspace, screens: SCREENS, live, signOut });
  const ctx = { view: current, main, workspace, arg, go, setRoute, gql, signedIn };
  try {
    if (name === 'sign-in') signInScreen(ctx);
    else if (name === 'workspaces') await workspacesScreen(ctx);
    else await screen.render(ctx);
  } catch (error) {
    if (current.alive) fill(main, h('h1', {}, 'Something went wrong'), message('error', error.message));
  }
  if (current.alive && current.focusHeading !== false) main.querySelector('h1')?.focus({ preventScroll: true });
}

function startLive(token) {
  live?.close();
  live = new LiveClient({ token, onStatus: showLiveStatus });
}

/** The service accepted `token`: keep it for the tab, go live, and on to the workspace. */
function signedIn(token) {
  session.token = token;
  startLive(token);
  announce('Signed in.');
  go(home());
}

/** Forgets the sign-in; the sign-in screen then shows `notice` (the button's click event says plainly "Signed out."). */
function signOut(notice = null) {
  view?.close();
  live?.close();
  live = null;
  session.clear();
  setSignInNotice(typeof notice === 'string' ? notice : 'Signed out.');
  go('sign-in');
}

whenUnauthorized((reason) => {
  if (session.token) signOut(`The service refused the token: ${reason} Sign in again.`);
});

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
