import { csrfTokenOf, sessionOf } from './sessions.js';
import type { Sessions } from './authorize.js';

/**
 * The console's sessions as the consent step uses them: the signed-in member of the request's
 * session cookie, the session's CSRF token (the consent form carries it), and the sign-in page,
 * which comes back to the authorization request once the person is signed in.
 */
export function oauthSessions(): Sessions {
  return {
    sessionOf,
    csrfTokenOf: (signedIn) => csrfTokenOf(signedIn as Parameters<typeof csrfTokenOf>[0]),
    signInUrl: (returnTo) => `/console/sign-in?return_to=${encodeURIComponent(returnTo)}`,
  };
}
