// The current sign-in of this tab: the admin token and the workspace chosen, both kept in this tab's
// sessionStorage only (gone when the tab closes, never in a cookie), and how a request proves it.
/* global sessionStorage */

const TOKEN = 'wks.console.token';
const WORKSPACE = 'wks.console.workspace';

/** The admin token of this tab: in sessionStorage, gone when the tab closes, and stored nowhere else. */
export const session = {
  get token() {
    return sessionStorage.getItem(TOKEN);
  },
  set token(value) {
    sessionStorage.setItem(TOKEN, value);
  },
  /** Forgets the token and the workspace chosen (sign-out). */
  clear() {
    sessionStorage.clear();
  },
};

/** The value of the `authorization` a request (or the live socket's first message) carries to prove the sign-in. */
export const authorization = (token = session.token) => `Bearer ${token}`;

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
