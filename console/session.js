// The current sign-in of this tab: the person's session (an HttpOnly cookie the page never sees),
// described by GET /console/session — who is signed in, what their role allows, and the session's
// CSRF token that every state-changing request carries. The workspace chosen is kept in this tab's
// sessionStorage, and the last one each person chose in this browser's localStorage (by member id:
// nothing secret, only the workspace's id and name), so the next sign-in goes straight back to it.
/* global fetch, location, localStorage, sessionStorage, URLSearchParams */

const WORKSPACE = 'wks.console.workspace';
/** The last workspace of member `id` in this browser. */
const LAST_WORKSPACE = (id) => `wks.console.last-workspace:${id}`;

/** JSON from a storage, or null (nothing there, unreadable, or storage refused by the browser). */
function readJson(storage, key) {
  try {
    return JSON.parse(storage.getItem(key) ?? 'null');
  } catch {
    return null;
  }
}

function writeJson(storage, key, value) {
  try {
    storage.setItem(key, JSON.stringify(value));
  } catch {
    // A browser that refuses storage keeps nothing: the person chooses again.
  }
}

/** The signed-in person of this tab, once `loadSession()` has run: `{ csrf, member, session, allowed }`, or null. */
export const session = {
  current: null,
  get csrf() {
    return this.current?.csrf ?? null;
  },
  /** Whether the person's role allows `what` (a permission or a person action of the role table). */
  may(what) {
    return Boolean(this.current?.allowed?.includes(what));
  },
  /** Forgets the workspace chosen and the sign-in (sign-out). */
  clear() {
    this.current = null;
    sessionStorage.clear();
  },
};

/** Asks the service who is signed in (the cookie goes along by itself). */
export async function loadSession() {
  const res = await fetch('/console/session', { credentials: 'same-origin', cache: 'no-store', headers: { accept: 'application/json' } });
  const body = res.ok ? await res.json() : { signedIn: false };
  session.current = body.signedIn ? body : null;
  return session.current;
}

/** Sends the browser to the sign-in page, coming back to where it is now; `notice` is a code the page shows as its own sentence. */
export function toSignInPage(notice = null) {
  const returnTo = `${location.pathname}${location.hash}`;
  const query = new URLSearchParams({ return_to: returnTo });
  if (notice) query.set('notice', notice);
  location.assign(`/console/sign-in?${query}`);
}

/** Ends the session on the service (CSRF token required), then forgets it here. */
export async function endSession() {
  const csrf = session.csrf;
  session.clear();
  if (!csrf) return;
  await fetch('/console/sign-out', { method: 'POST', credentials: 'same-origin', headers: { 'x-csrf-token': csrf } }).catch(
    () => undefined,
  );
}

/**
 * The workspace chosen in this tab: `{ id, name, organizationId, organizationName }`, or null. A choice
 * is also remembered as the signed-in person's last workspace in this browser.
 */
export const chosenWorkspace = {
  get() {
    return readJson(sessionStorage, WORKSPACE);
  },
  set(value) {
    writeJson(sessionStorage, WORKSPACE, value);
    const member = session.current?.member;
    if (member) writeJson(localStorage, LAST_WORKSPACE(member.id), value);
  },
};

/** The last workspace member `memberId` chose in this browser (kept across sign-ins), or null. */
export function lastWorkspace(memberId) {
  const value = readJson(localStorage, LAST_WORKSPACE(memberId));
  return value && typeof value.id === 'string' && typeof value.name === 'string' ? value : null;
}
