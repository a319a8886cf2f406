/**
 * How a person signs in and out of the console and GraphQL (sessions: sessions.ts):
 *   GET  /console/sign-in            the sign-in page (`?return_to=` a same-origin path; anything else is ignored),
 *                                    remembered for the page opened again without one (a sign-in link opened in a new tab)
 *   POST /console/sign-in/link       redeems a sign-in link's token (JSON; the page reads it from the link's fragment)
 *   GET  /console/sign-in/oidc       starts OpenID Connect at the identity provider (see oidcSignIn.ts)
 *   GET  /console/sign-in/oidc/callback
 *   GET  /console/session            who is signed in, and the session's CSRF token (same origin only)
 *   POST /console/sign-out           ends the session (CSRF token required)
 */
import type { Context } from 'koa';
import { roleColumn } from '../auth/permissions.js';
import {
  clearSessionCookie,
  cookieOf,
  csrfTokenOf,
  newSessionToken,
  requireCsrf,
  safeReturnTo,
  sessionDepsOf,
  memberPrincipal,
  sessionOf,
  setCookie,
  setSessionCookie,
} from './sessions.js';
import { DomainError, InvalidRequestError, invalidField } from '../errors.js';
import { readText } from '../http/body.js';
import type { Middleware } from '../http/middleware.js';
import { beginSession, SIGN_IN_LINK_SECONDS, signInWithLink, signOut, type SignInGrant } from './people.js';
import { pageHead, sameOriginCsp, sendPage } from '../http/page.js';
import { noticeText } from './signInNotices.js';

export const SIGN_IN_PATH = '/console/sign-in';

/**
 * Where the last sign-in page was asked to return (`?return_to=`), for as long as a sign-in link lives:
 * a person sent to sign in (from the consent page, a proposal's address) who then opens a link, which
 * comes as `/console/sign-in#link=…` in a tab of its own with no `return_to`, lands back there. Only
 * the sign-in routes read it (its path), and a sign-in forgets it.
 */
const RETURN_COOKIE = 'wks_return_to';

/** The sign-in page: its own script (the link's fragment) from the console's assets, nothing inline, forms post nowhere. */
const SIGN_IN_CSP = sameOriginCsp();

const escapeHtml = (text: string) => text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** What the sign-in page offers besides links: the identity provider's button, if one is configured. */
export interface SignInOptions {
  /** The identity provider's name on the button (OIDC_NAME), when OpenID Connect is configured. */
  providerName: string | null;
  /** The address of the page's script (the console's signInPage.js, by its digest). */
  script: () => Promise<string>;
}

function page(returnTo: string, options: SignInOptions, script: string, notice: string | null): string {
  const oidc = options.providerName
    ? `<p><a class="button-link" id="oidc" href="${SIGN_IN_PATH}/oidc?return_to=${encodeURIComponent(returnTo)}">` +
      `Sign in with ${escapeHtml(options.providerName)}</a></p>`
    : '';
  const links = `<link rel="stylesheet" href="/console/assets/console.css">\n<script type="module" src="${escapeHtml(script)}"></script>`;
  return `${pageHead('Sign in', links)}
<body data-return-to="${escapeHtml(returnTo)}">
<header class="topbar"><p class="brand">Review console <span class="brand-sub">Workspace Knowledge Service</span></p></header>
<main id="main" class="signin-wrap">
<h1 id="signin-title">Sign in</h1>
<p class="lead">Members of an organization sign in as themselves: with the organization's identity provider,
or with a single-use sign-in link from an owner.</p>
<div id="notice" role="status">${notice ? `<div class="message message-error">${escapeHtml(notice)}</div>` : ''}</div>
${oidc}
<form id="link-form" class="card signin-link" novalidate>
<div class="field"><label for="link-input">Sign-in link</label>
<input id="link-input" name="link" type="text" autocomplete="off" spellcheck="false" aria-describedby="link-hint"
 placeholder="…/console/sign-in#link=wks_link_…">
<p class="hint" id="link-hint">A sign-in link (<code>wks members login-link &lt;email&gt;</code>) works once, within 15 minutes:
open it in this browser, or paste it here.</p></div>
<button type="submit" class="primary">Sign in with the link</button>
</form>
</main>
</body>
</html>
`;
}

/**
 * Where the sign-in page returns to: its `?return_to=` (remembered from now on), else the one a page
 * asked for in the last 15 minutes, else the console.
 */
function returnToOf(ctx: Context): string {
  const asked = ctx.query.return_to;
  if (asked !== undefined) {
    const returnTo = safeReturnTo(asked);
    setCookie(ctx, RETURN_COOKIE, encodeURIComponent(returnTo), SIGN_IN_LINK_SECONDS, SIGN_IN_PATH);
    return returnTo;
  }
  const remembered = cookieOf(ctx, RETURN_COOKIE);
  if (!remembered) return '/console';
  try {
    return safeReturnTo(decodeURIComponent(remembered));
  } catch {
    return '/console';
  }
}

/** The sign-in page, with an optional notice (why the last attempt failed). */
export async function sendSignInPage(ctx: Context, options: SignInOptions, notice: string | null = null, status = 200): Promise<void> {
  const returnTo = returnToOf(ctx);
  sendPage(ctx, page(returnTo, options, await options.script(), notice), SIGN_IN_CSP);
  ctx.set('Cache-Control', 'no-store');
  ctx.status = status;
}

/**
 * A sign-in request must come from this origin's own page: JSON (which no other site's form can
 * send without a preflight this service never grants) and, when the browser names it, this Origin.
 */
function requireOwnPage(ctx: Context): void {
  if (!ctx.is('application/json'))
    throw new InvalidRequestError('Send the sign-in as JSON.', [{ field: 'content-type', message: 'must be application/json' }]);
  const origin = ctx.get('origin');
  // This service's own origin (Koa's `ctx.origin` is the request's Origin header in Koa 3, not this origin).
  const own = `${ctx.protocol}://${ctx.host}`;
  if (origin && origin !== own && origin !== sessionDepsOf(ctx).settings.publicUrl?.replace(/\/$/, ''))
    throw new DomainError('permission_denied', 'Sign-in requests come from this service’s own sign-in page.', { missing: [] });
}

async function readJson(ctx: Context): Promise<Record<string, unknown>> {
  const text = await readText(ctx, 16 * 1024, () => new DomainError('payload_too_large', 'The request body is too large.'));
  try {
    const value: unknown = JSON.parse(text);
    if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // the 400 below
  }
  throw new InvalidRequestError('The body is not a JSON object.');
}

/** Starts a session for a grant: the row (and its event), then the cookie. Returns the new session's CSRF token. */
export async function startSession(ctx: Context, grant: SignInGrant): Promise<string> {
  const { db, settings } = sessionDepsOf(ctx);
  const { id, token, digest, csrf } = newSessionToken(ctx);
  await beginSession(db, grant, {
    id,
    digest,
    userAgent: ctx.get('user-agent') || null,
    maxSeconds: settings.absoluteSeconds,
    requestId: ctx.state.requestId as string,
  });
  setSessionCookie(ctx, token);
  if (cookieOf(ctx, RETURN_COOKIE)) setCookie(ctx, RETURN_COOKIE, '', 0, SIGN_IN_PATH); // the way back is taken now
  ctx.set('Cache-Control', 'no-store');
  return csrf;
}

/**
 * POST /console/sign-in/link: `{token, returnTo, switch?}`. A browser signed in as someone else gets
 * 409 (who is signed in, whom the link is for) unless `switch: true` says the person chose to switch;
 * the session they leave is then ended.
 */
async function redeemLink(ctx: Context): Promise<void> {
  requireOwnPage(ctx);
  const body = await readJson(ctx);
  if (typeof body.token !== 'string' || !body.token) throw invalidField('token', 'is required');
  if (body.switch !== undefined && typeof body.switch !== 'boolean') throw invalidField('switch', 'must be a boolean');
  const { db, serverSecret } = sessionDepsOf(ctx);
  const current = await sessionOf(ctx);
  const grant = await signInWithLink(db, serverSecret, body.token, current, body.switch === true);
  if (current && current.memberId !== grant.member.id) await signOut(db, memberPrincipal(current), ctx.state.requestId as string);
  const csrf = await startSession(ctx, grant);
  ctx.body = {
    returnTo: safeReturnTo(body.returnTo),
    csrf,
    member: { id: grant.member.id, email: grant.member.email, role: grant.member.role },
  };
}

async function describeSession(ctx: Context): Promise<void> {
  const signedIn = await sessionOf(ctx);
  ctx.set('Cache-Control', 'no-store');
  ctx.body = signedIn
    ? {
        signedIn: true,
        csrf: csrfTokenOf(signedIn),
        session: { id: signedIn.sessionId, method: signedIn.method, mfa: signedIn.mfa, expiresAt: signedIn.expiresAt.toISOString() },
        member: { id: signedIn.memberId, email: signedIn.email, role: signedIn.role, organizationId: signedIn.organizationId },
        // The person's column of the role table: what the console offers them.
        allowed: roleColumn(signedIn.role),
      }
    : { signedIn: false };
}

async function signOutHere(ctx: Context): Promise<void> {
  const signedIn = await sessionOf(ctx);
  if (signedIn) {
    requireCsrf(ctx, signedIn);
    await signOut(sessionDepsOf(ctx).db, memberPrincipal(signedIn), ctx.state.requestId as string);
  }
  clearSessionCookie(ctx);
  ctx.status = 204;
}

/** Why the browser was sent to the sign-in page: the fixed sentence of a known `?notice=` code, nothing else. */
function noticeOf(ctx: Context): string | null {
  return noticeText(ctx.query.notice);
}

/** The sign-in and sign-out routes (mounted after sessionSupport). `oidc` serves the identity provider's two routes, if configured. */
export function signInRoutes(options: SignInOptions, oidc: Middleware | null): Middleware {
  return async (ctx, next) => {
    const { path, method } = ctx;
    if (path === SIGN_IN_PATH && (method === 'GET' || method === 'HEAD')) return sendSignInPage(ctx, options, noticeOf(ctx));
    if (path === `${SIGN_IN_PATH}/link` && method === 'POST') return redeemLink(ctx);
    if (path === '/console/session' && method === 'GET') return describeSession(ctx);
    if (path === '/console/sign-out' && method === 'POST') return signOutHere(ctx);
    if (oidc && path.startsWith(`${SIGN_IN_PATH}/oidc`)) return oidc(ctx, next);
    return next();
  };
}
