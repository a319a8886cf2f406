// The frame around every screen: the workspace in the header, the live indicator and sign-out, and
// the tabs of a workspace's screens.
/* global document */
import { fill, h } from './dom.js';
import { liveIndicator } from './liveIndicator.js';

/**
 * Draws the header and the tabs for `route`: `signedIn`, the chosen `workspace` (or null), the
 * `screens` as tabs, the `live` client and what `signOut` does.
 */
export function drawChrome(route, { signedIn, workspace, screens, live, signOut }) {
  fill(document.getElementById('context'), signedIn && workspace ? workspaceContext(workspace) : null);
  fill(
    document.getElementById('session'),
    signedIn ? [liveIndicator(live), h('button', { type: 'button', class: 'button-quiet', on: { click: signOut } }, 'Sign out')] : null,
  );
  const nav = document.getElementById('nav');
  const tabs = signedIn && workspace && route !== 'workspaces' && route !== 'sign-in';
  nav.hidden = !tabs;
  fill(nav, tabs ? tabList(screens, route) : null);
}

function workspaceContext(workspace) {
  return [
    h('span', { class: 'context-org' }, workspace.organizationName),
    h('span', { class: 'context-sep', 'aria-hidden': 'true' }, '/'),
    h('strong', { class: 'context-ws' }, workspace.name),
    h('a', { href: '#/workspaces', class: 'context-change' }, 'Change workspace'),
  ];
}

function tabList(screens, route) {
  return h(
    'ul',
    {},
    screens.map((s) =>
      h('li', {}, h('a', { href: `#/${s.route}`, 'aria-current': s.route === route ? 'page' : null, class: 'tab' }, s.label)),
    ),
  );
}
