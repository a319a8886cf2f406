// The frame around every screen: the workspace in the header, who is signed in (and their role), the
// live indicator and sign-out, and the tabs of a workspace's screens.
/* global document */
import { fill, h } from './dom.js';
import { liveIndicator } from './liveIndicator.js';

/**
 * Draws the header and the tabs for `route`: the signed-in `person` (GET /console/session's answer),
 * the chosen `workspace` (or null), the `screens` as tabs, the `live` client and what `signOut` does.
 */
export function drawChrome(route, { person, workspace, screens, live, signOut }) {
  const signedIn = Boolean(person);
  fill(document.getElementById('context'), signedIn && workspace ? workspaceContext(workspace) : null);
  fill(
    document.getElementById('session'),
    signedIn
      ? [
          h('span', { class: 'who', id: 'who' }, person.member.email, ' · ', h('strong', {}, person.member.role)),
          liveIndicator(live),
          h('button', { type: 'button', class: 'button-quiet', on: { click: signOut } }, 'Sign out'),
        ]
      : null,
  );
  const nav = document.getElementById('nav');
  const tabs = signedIn && workspace && route !== 'workspaces';
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
