// The lifetime of one screen on show, and the URL fragment that names it (#/proposals/12): the
// browser's back button and reloads keep the screen.
/* global location, history, setTimeout, clearTimeout */

/**
 * One screen on show. Its work stops mattering when another screen replaces it: `alive` turns
 * false, its subscriptions end, its timers are cleared and its cleanups run.
 */
export class View {
  constructor(live) {
    this.live = live;
    this.alive = true;
    this.cleanups = [];
  }

  /** Runs `cleanup` when the screen is replaced. */
  onClose(cleanup) {
    this.cleanups.push(cleanup);
  }

  /** Subscribes for as long as the screen is on show (nothing when signed out of the live socket). */
  subscribe(query, variables, sink) {
    if (!this.live) return;
    this.onClose(this.live.subscribe(query, variables, sink));
  }

  /** A function that runs `work` `ms` after its last call: a burst of live events reads the list once. */
  debounced(work, ms) {
    let timer = null;
    this.onClose(() => clearTimeout(timer));
    return () => {
      clearTimeout(timer);
      timer = setTimeout(work, ms);
    };
  }

  /** Ends the screen. */
  close() {
    this.alive = false;
    for (const cleanup of this.cleanups.splice(0)) cleanup();
  }
}

/** The route in the URL's fragment: `#/proposals/12` is `{ name: 'proposals', arg: '12' }`. */
export function parseRoute() {
  const match = /^#\/([\w-]+)(?:\/([^?]*))?$/.exec(location.hash);
  return match ? { name: match[1], arg: match[2] ? decodeURIComponent(match[2]) : null } : { name: '', arg: null };
}

/** Names the current route without showing it again (e.g. the selected proposal): no history entry. */
export function setRoute(path) {
  history.replaceState(null, '', `#/${path}`);
}

/** Shows another route, a history entry of its own; `render` shows it again when it is the current one. */
export function goTo(path, render) {
  if (location.hash === `#/${path}`) render();
  else location.hash = `#/${path}`;
}
