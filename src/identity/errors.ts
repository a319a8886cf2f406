/**
 * The identity wing's own errors: OAuth's refusals in OAuth's terms (and whether the authorization
 * endpoint may address one to the client), a session's refused CSRF check, and why a sign-in at the
 * identity provider failed.
 */
import { DomainError } from '../errors.js';
import type { OAuthClient } from './oauthClient.js';
import { SIGN_IN_NOTICES, type SignInNotice } from './signInNotices.js';

/** A refusal in OAuth's own terms (`error` and `error_description`, RFC 6749 §5.2 / RFC 7591 §3.2.2). */
export class OAuthError extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
    readonly status = 400,
    /** Seconds to wait before asking again (a 429's Retry-After). */
    readonly retryAfterSeconds: number | null = null,
  ) {
    super(description);
  }
}

/** A metadata-document client the request may not fetch and the database does not hold: a person signs in first. */
export class ClientNotFetched extends OAuthError {
  constructor() {
    super('invalid_client', "The client's metadata document is fetched once a person has signed in", 401);
  }
}

/** A refusal before the redirect URI is known to be the client's: shown on a page, never redirected (no open redirect). */
export class UnsafeRedirectError extends OAuthError {}

/**
 * A refusal once the redirect URI is known to be the client's, addressed to the client there (RFC
 * 6749 §4.1.2.1). Whether the browser is sent there is the authorization endpoint's call
 * (authorize.ts): only once the person has signed in and seen who the client is, never by itself
 * (RFC 9700 §4.11.2).
 */
export class RedirectedError extends OAuthError {
  constructor(
    error: string,
    description: string,
    readonly to: { client: OAuthClient; redirectUri: string; state: string | null },
  ) {
    super(error, description);
  }
}

/** 403 for a refused CSRF check (the error envelope's `permission_denied`). */
export class CsrfError extends DomainError {
  constructor() {
    super('permission_denied', 'The CSRF token of this session is missing or wrong; reload the page and try again.', { missing: [] });
  }
}

/** Why a sign-in failed: a notice code, shown on the sign-in page as its fixed sentence (never the provider's answer). */
export class SignInRefused extends Error {
  constructor(readonly notice: SignInNotice) {
    super(SIGN_IN_NOTICES[notice]);
  }
}
