// The current sign-in of this tab: the person's session (an HttpOnly cookie the page never sees),
// described by GET /console/session — who is signed in, what their role allows, and the session's
// CSRF token that every state-changing request carries. The workspace chosen is kept in this tab's
// sessionStorage.
/* global fetch, location, sessionStorage, URLSearchParams */

const WORKSPACE = 'wks.console.workspace';

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

/** The workspace chosen in this tab: `{ id, name, organizationId, organizationName }`, or null. */
export const chosenWorkspace = {
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
