/**
 * A person's session: an HttpOnly cookie (SameSite=Lax, Secure behind https) holding a random token
 * that is stored only as its HMAC digest (member_sessions). Every request reads the session from the
 * database (one indexed lookup), so a sign-out or a revocation holds in every process at once; a
 * session ends when revoked, after SESSION_IDLE_MINUTES without a request, or SESSION_MAX_HOURS after
 * sign-in, whichever comes first. State-changing requests made with the cookie must carry the
 * session's CSRF token (`X-CSRF-Token`, or a form's `csrf` field), which pages embed and no other
 * origin can read.
 */
import { createHmac, randomUUID } from 'node:crypto';
import type { Context } from 'koa';
import type { MemberPrincipal } from '../context.js';
import type { SqlTarget } from '../db/sql.js';
import type { Middleware } from '../http/middleware.js';
import { liveSession, touchSession, type SessionRow } from '../store/sessions.js';
import { digestSecret, newSecret, safeEqual } from '../auth/keys.js';
import type { Role } from '../auth/permissions.js';
import { defaultOf } from '../config.js';
import { CsrfError } from './errors.js';

/** SESSION_IDLE_MINUTES, SESSION_MAX_HOURS and PUBLIC_URL (docs/configuration.md). */
export interface SessionSettings {
  idleSeconds: number;
  absoluteSeconds: number;
  /** The service's public origin; an https one makes cookies Secure (the app trusts no proxy header). */
  publicUrl?: string;
}

export const DEFAULT_SESSION_SETTINGS: SessionSettings = {
  idleSeconds: defaultOf('SESSION_IDLE_MINUTES') * 60,
  absoluteSeconds: defaultOf('SESSION_MAX_HOURS') * 3600,
};

/** The signed-in member of a request. */
export interface SignedIn {
  sessionId: string;
  memberId: string;
  organizationId: string;
  role: Role;
  email: string;
  /** How the person signed in: a sign-in link or the identity provider. */
  method: string;
  mfa: boolean;
  expiresAt: Date;
  /** The two-factor rule of the member's organization. */
  requireTwoFactor: boolean;
  plan: MemberPrincipal['plan'];
  /** This session's CSRF token (csrfTokenOf). */
  csrf: string;
}

/** What sessionOf needs, installed on every request by `sessionSupport`. */
export interface SessionDeps {
  db: SqlTarget;
  serverSecret: string;
  settings: SessionSettings;
}

const COOKIE = 'wks_session';
/** Behind https the cookie takes the `__Host-` prefix: Secure, no Domain, Path=/ (browsers enforce it). */
const SECURE_COOKIE = '__Host-wks_session';
const TOKEN_PREFIX = 'wks_sess_';
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Installs what sessionOf reads (the database, the server secret, the settings) on every request. */
export function sessionSupport(deps: SessionDeps): Middleware {
  return async (ctx, next) => {
    ctx.state.sessionDeps = deps;
    await next();
  };
}

function depsOf(ctx: Context): SessionDeps {
  const deps = ctx.state.sessionDeps as SessionDeps | undefined;
  if (!deps) throw new Error('sessionSupport() must run before sessionOf()');
  return deps;
}

/** Whether the session cookie is Secure: the request came over TLS, or PUBLIC_URL is https. */
export function secureCookies(ctx: Context): boolean {
  return ctx.secure || Boolean(depsOf(ctx).settings.publicUrl?.startsWith('https:'));
}

function cookieName(ctx: Context): string {
  return secureCookies(ctx) ? SECURE_COOKIE : COOKIE;
}

/** The value of one cookie of the request's Cookie header. */
export function cookieOf(ctx: Context, name: string): string | undefined {
  for (const part of (ctx.get('cookie') || '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** Adds a Set-Cookie line (HttpOnly, SameSite=Lax, Path=/, Secure behind https); `maxAge` 0 deletes the cookie. */
export function setCookie(ctx: Context, name: string, value: string, maxAgeSeconds: number, path = '/'): void {
  const parts = [`${name}=${value}`, `Path=${path}`, 'HttpOnly', 'SameSite=Lax', `Max-Age=${maxAgeSeconds}`];
  if (secureCookies(ctx)) parts.push('Secure');
  ctx.append('Set-Cookie', parts.join('; '));
}

/** The CSRF token of a session: an HMAC of its id under the server secret (nothing more to store). */
function csrfFor(serverSecret: string, sessionId: string): string {
  return createHmac('sha256', serverSecret).update(`csrf\0${sessionId}`).digest('base64url');
}

/** The token a page served to this session embeds, for the state-changing requests it makes. */
export function csrfTokenOf(signedIn: SignedIn): string {
  return signedIn.csrf;
}

/**
 * Throws the 403 (CsrfError) when a state-changing request (anything but GET, HEAD, OPTIONS) of this
 * session does not carry its CSRF token: `submitted` (a form's field) or the `X-CSRF-Token` header.
 */
export function requireCsrf(ctx: Context, signedIn: SignedIn, submitted?: string | null): void {
  if (SAFE_METHODS.has(ctx.method)) return;
  const token = submitted ?? ctx.get('x-csrf-token');
  if (!token || !safeEqual(token, signedIn.csrf)) throw new CsrfError();
}

/**
 * The signed-in member of the request's session cookie, or null when there is none, or it is
 * unknown, revoked, idle too long or past its absolute expiry. Read once per request.
 */
export async function sessionOf(ctx: Context): Promise<SignedIn | null> {
  if (ctx.state.signedIn !== undefined) return ctx.state.signedIn as SignedIn | null;
  const signedIn = await signedInByToken(depsOf(ctx), cookieOf(ctx, cookieName(ctx)));
  ctx.state.signedIn = signedIn;
  return signedIn;
}

/** The session cookie's token in a Cookie header (either name: a WebSocket upgrade's request has no Koa context). */
export function sessionTokenInCookies(cookieHeader: string | undefined): string | undefined {
  for (const part of (cookieHeader ?? '').split(';')) {
    const eq = part.indexOf('=');
    const name = eq > 0 ? part.slice(0, eq).trim() : '';
    if (name === COOKIE || name === SECURE_COOKIE) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** The live session a cookie token names, or null (and its idle expiry pushed forward, at most once a minute). */
export async function signedInByToken(deps: SessionDeps, token: string | undefined): Promise<SignedIn | null> {
  if (!token?.startsWith(TOKEN_PREFIX) || token.length >= 100) return null;
  const { db, serverSecret, settings } = deps;
  const row = await liveSession(db, digestSecret(serverSecret, token), settings.idleSeconds);
  if (!row) return null;
  // Idle expiry moves with use (one write a minute at most); a failed touch must not fail the request.
  if (Date.now() - new Date(row.last_seen_at).getTime() > 60_000) touchSession(db, row.id).catch(() => undefined);
  return toSignedIn(row, csrfFor(serverSecret, row.id));
}

function toSignedIn(row: SessionRow, csrf: string): SignedIn {
  return {
    sessionId: row.id,
    memberId: row.member_id,
    organizationId: row.organization_id,
    role: row.role,
    email: row.email,
    method: row.method,
    mfa: row.mfa,
    expiresAt: new Date(row.expires_at),
    requireTwoFactor: row.require_two_factor,
    plan: row.plan,
    csrf,
  };
}

/** The principal a session is over GraphQL. */
export function memberPrincipal(s: SignedIn): MemberPrincipal {
  return {
    kind: 'member',
    sessionId: s.sessionId,
    memberId: s.memberId,
    email: s.email,
    role: s.role,
    organizationId: s.organizationId,
    plan: s.plan,
    requireTwoFactor: s.requireTwoFactor,
    mfa: s.mfa,
  };
}

/** A new session's id, cookie token, the digest stored for it, and its CSRF token. */
export function newSessionToken(ctx: Context): { id: string; token: string; digest: string; csrf: string } {
  const { serverSecret } = depsOf(ctx);
  const token = newSecret(TOKEN_PREFIX);
  const id = randomUUID();
  return { id, token, digest: digestSecret(serverSecret, token), csrf: csrfFor(serverSecret, id) };
}

/** Gives the browser its session cookie (for the session's absolute lifetime). */
export function setSessionCookie(ctx: Context, token: string): void {
  setCookie(ctx, cookieName(ctx), token, depsOf(ctx).settings.absoluteSeconds);
  ctx.state.signedIn = undefined;
}

/** Deletes the browser's session cookie. */
export function clearSessionCookie(ctx: Context): void {
  setCookie(ctx, cookieName(ctx), '', 0);
  ctx.state.signedIn = null;
}

/** The settings and secret of the request's app (for the sign-in routes). */
export function sessionDepsOf(ctx: Context): SessionDeps {
  return depsOf(ctx);
}

/**
 * Where to go after signing in: a same-origin relative path (`/…`, not `//…` nor `/\…`, no control
 * characters), else the console. Anything else is ignored, so a crafted link cannot send a person elsewhere.
 */
export function safeReturnTo(value: unknown): string {
  if (typeof value !== 'string' || value.length > 2000) return '/console';
  if (!value.startsWith('/') || value.startsWith('//') || value.startsWith('/\\')) return '/console';
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f\\]/.test(value)) return '/console';
  return value;
}
