import type { EntityManager } from '@mikro-orm/postgresql';
import type { Context } from 'koa';
import { personBlockedByTwoFactor } from '../auth/authorize.js';
import { effectivePermissions, type Role } from '../auth/permissions.js';
import { digestSecret, newSecret, safeEqual } from '../auth/keys.js';
import { insertCode } from '../store/oauthCodes.js';
import { consentMember, organizationWorkspaces, type ConsentMemberRow } from '../store/oauthConsent.js';
import { checkAuthorizationRequest, redirectWith, REQUEST_PARAMS, type AuthorizationRequest } from './authorizationRequest.js';
import type { MetadataFetcher } from './clients.js';
import { ClientNotFetched, OAuthError, RedirectedError, UnsafeRedirectError } from './errors.js';
import { consentPage, errorPage, pageCsp } from './consentPage.js';
import type { Resources } from './resources.js';
import { CODE_PREFIX } from './secrets.js';
import { CODE_TTL_S } from './oauthSettings.js';

/** The signed-in member of a request's session (the console's sign-in). */
export interface SignedInMember {
  memberId: string;
  organizationId: string;
  /** The sign-in proved a second factor (the organization's two-factor rule for people). */
  mfa: boolean;
}

/** What the consent step needs of sessions: who is signed in, and their CSRF token. */
export interface Sessions<S extends SignedInMember = SignedInMember> {
  sessionOf(ctx: Context): Promise<S | null>;
  csrfTokenOf(signedIn: S): string;
  /** Where a person signs in, coming back to `returnTo` (a same-origin path). */
  signInUrl(returnTo: string): string;
}

/** What the authorization endpoint needs. */
export interface AuthorizeDeps {
  em: EntityManager;
  serverSecret: string;
  /** How a signed-in person's request may fetch a client's metadata document (its budget is the caller's address's). */
  fetcher: MetadataFetcher;
  resources: Resources;
  sessions: Sessions;
}

function sendPage(ctx: Context, status: number, html: string, redirectUri?: string): void {
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.set('Content-Security-Policy', pageCsp(redirectUri));
  ctx.set('Cache-Control', 'no-store');
  ctx.body = html;
}

function redirectTo(ctx: Context, status: 302 | 303, location: string): void {
  ctx.status = status;
  ctx.set('Cache-Control', 'no-store');
  ctx.redirect(location);
  ctx.status = status;
}

/** The client's redirect URI carrying a refusal (`error`, `error_description`, `state`, `iss`). */
function refusalLocation(error: RedirectedError, resources: Resources): string {
  return redirectWith(error.to.redirectUri, {
    error: error.error,
    error_description: error.description,
    state: error.to.state,
    iss: resources.issuer,
  });
}

/**
 * A refusal of GET /oauth/authorize, always on a page of the service: a client that registered itself
 * (or publishes its own metadata) could otherwise send any browser to its redirect URI through this
 * origin (RFC 9700 §4.11.2). Once the client is established and a person is signed in, the page names
 * the client and offers the way back, which the person may follow.
 */
function refusePage(ctx: Context, error: unknown, resources: Resources, signedIn: boolean): void {
  if (error instanceof RedirectedError) {
    const back = signedIn ? { client: error.to.client, href: refusalLocation(error, resources) } : undefined;
    return sendPage(ctx, 400, errorPage('This request cannot be authorized', error.description, back));
  }
  if (error instanceof OAuthError) return unsafeRefusalPage(ctx, error);
  throw error;
}

/** A refusal with no client to go back to (or past the fetch budget: 429 with Retry-After), on a page. */
function unsafeRefusalPage(ctx: Context, error: OAuthError): void {
  if (error.retryAfterSeconds) ctx.set('Retry-After', String(error.retryAfterSeconds));
  sendPage(ctx, error.status === 429 ? 429 : 400, errorPage('This request cannot be authorized', error.description));
}

/** A refusal of the consent form: the person saw who the client is and acted, so the answer goes back to it (a 303). */
function refuseDecision(ctx: Context, error: unknown, resources: Resources): void {
  if (error instanceof RedirectedError) return redirectTo(ctx, 303, refusalLocation(error, resources));
  if (error instanceof OAuthError) return unsafeRefusalPage(ctx, error);
  throw error;
}

/** The member behind the session, unless the organization's two-factor rule stops them (as it stops their keys). */
async function memberOf(deps: AuthorizeDeps, signedIn: SignedInMember, request: AuthorizationRequest): Promise<ConsentMemberRow> {
  const member = await consentMember(deps.em, signedIn.memberId);
  if (!member) throw new UnsafeRedirectError('access_denied', 'Your session no longer names a member.');
  const blocked = personBlockedByTwoFactor({ requireTwoFactor: member.require_two_factor, role: member.role as Role, mfa: signedIn.mfa });
  if (blocked)
    throw new RedirectedError('access_denied', 'The organization requires a second factor for your role: sign in with it, then try again', {
      client: request.client,
      redirectUri: request.redirectUri,
      state: request.state,
    });
  return member;
}

function carriedParams(params: URLSearchParams): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of REQUEST_PARAMS) {
    const value = params.get(name);
    if (value !== null) out[name] = value;
  }
  return out;
}

/**
 * GET /oauth/authorize: the request is checked, then the signed-in member sees the consent screen (or
 * signs in first). Whatever is wrong is shown on a page here, never redirected (see refusePage).
 */
export async function showConsent(ctx: Context, deps: AuthorizeDeps): Promise<void> {
  const params = new URLSearchParams(ctx.querystring);
  const signedIn = await deps.sessions.sessionOf(ctx);
  try {
    // Nothing is fetched for an anonymous request: whoever sends one costs the service no outbound request.
    const request = await checkAuthorizationRequest(deps.em, params, deps.resources, signedIn ? deps.fetcher : null);
    if (!signedIn) return redirectTo(ctx, 302, deps.sessions.signInUrl(ctx.url));
    const member = await memberOf(deps, signedIn, request);
    const workspaces = await organizationWorkspaces(deps.em, member.organization_id);
    if (!workspaces.length)
      throw new RedirectedError('access_denied', 'Your organization has no workspace yet', {
        client: request.client,
        redirectUri: request.redirectUri,
        state: request.state,
      });
    const granted = [...effectivePermissions(request.scopes, member.role as Role)];
    const view = {
      request,
      resources: deps.resources,
      member: { email: member.email, role: member.role, organizationName: member.organization_name },
      workspaces,
      granted,
      csrfToken: deps.sessions.csrfTokenOf(signedIn),
      params: carriedParams(params),
    };
    sendPage(ctx, 200, consentPage(view), request.redirectUri);
  } catch (error) {
    if (error instanceof ClientNotFetched) return redirectTo(ctx, 302, deps.sessions.signInUrl(ctx.url));
    refusePage(ctx, error, deps.resources, Boolean(signedIn));
  }
}

/**
 * POST /oauth/authorize: the member's decision, with the session's CSRF token. Allow issues a
 * one-time code (stored as a digest) for the scopes the member's role allows in the chosen
 * workspace of their organization, and sends the browser back with `code`, `state` and `iss`.
 * The code records whether the session proved a second factor; the grant it starts keeps that.
 */
export async function decideConsent(ctx: Context, deps: AuthorizeDeps, form: URLSearchParams): Promise<void> {
  const signedIn = await deps.sessions.sessionOf(ctx);
  if (!signedIn) return sendPage(ctx, 401, errorPage('Signed out', 'Sign in again, then start over from the application.'));
  const csrf = form.get('csrf_token') ?? '';
  if (!csrf || !safeEqual(csrf, deps.sessions.csrfTokenOf(signedIn)))
    return sendPage(
      ctx,
      403,
      errorPage('Request refused', 'The form is missing its CSRF token or it is wrong; start over from the application.'),
    );
  try {
    const request = await checkAuthorizationRequest(deps.em, form, deps.resources, deps.fetcher);
    const member = await memberOf(deps, signedIn, request);
    const to = { client: request.client, redirectUri: request.redirectUri, state: request.state };
    const refuseWith = (description: string) => new RedirectedError('access_denied', description, to);
    if (form.get('decision') !== 'allow') throw refuseWith('The member denied the request');
    const workspaceId = form.get('workspace') ?? '';
    const workspaces = await organizationWorkspaces(deps.em, member.organization_id);
    if (!workspaces.some((w) => w.id === workspaceId))
      return sendPage(ctx, 400, errorPage('Unknown workspace', "Choose one of your organization's workspaces."));
    const granted = [...effectivePermissions(request.scopes, member.role as Role)];
    if (!granted.length) throw refuseWith('Your role allows none of the requested permissions');
    const code = newSecret(CODE_PREFIX);
    await insertCode(deps.em, {
      digest: digestSecret(deps.serverSecret, code),
      client_id: request.client.id,
      redirect_uri: request.redirectUri,
      code_challenge: request.codeChallenge,
      resource: request.resource,
      scopes: granted,
      member_id: member.id,
      workspace_id: workspaceId,
      mfa: signedIn.mfa,
      expiresAt: new Date(Date.now() + CODE_TTL_S * 1000),
    });
    ctx.set('Content-Security-Policy', pageCsp(request.redirectUri));
    redirectTo(ctx, 303, redirectWith(request.redirectUri, { code, state: request.state, iss: deps.resources.issuer }));
  } catch (error) {
    refuseDecision(ctx, error, deps.resources);
  }
}
