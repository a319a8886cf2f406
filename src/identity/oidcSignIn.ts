/**
 * Signing in with the deployment's identity provider (OpenID Connect, authorization code + PKCE S256,
 * with `state` and `nonce`, by openid-client):
 *   GET /console/sign-in/oidc?return_to=…   → 303 to the provider (the flow's secrets in a sealed, HttpOnly cookie)
 *   GET /console/sign-in/oidc/callback      → the code redeemed, the ID token checked, the member matched by
 *                                              verified e-mail, a session begun, 303 to return_to
 * The flow's state lives in an AES-GCM-sealed cookie (10 minutes, this path only), so any process
 * sharing the server secret can finish a flow another began. The provider's `amr` decides whether the
 * sign-in proved a second factor (`mfa`), which the organization's two-factor rule needs for admins and owners.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import type { Context } from 'koa';
import * as client from 'openid-client';
import type { Logger } from 'pino';
import { safeReturnTo, sessionDepsOf, setCookie, cookieOf } from './sessions.js';
import { DomainError } from '../errors.js';
import type { Middleware } from '../http/middleware.js';
import { membersForEmail, refuseWithoutSecondFactor } from './people.js';
import { SIGN_IN_PATH, startSession } from './signIn.js';
import { SignInRefused } from './errors.js';
import type { SignInNotice } from './signInNotices.js';

/** OIDC_ISSUER, OIDC_CLIENT_ID, OIDC_CLIENT_SECRET and OIDC_NAME (docs/configuration.md). */
export interface OidcSettings {
  issuer: string;
  clientId: string;
  /** Omitted: a public client (PKCE only, no client secret). */
  clientSecret?: string;
  /** The provider's name on the sign-in button. */
  name: string;
}

const FLOW_COOKIE = 'wks_oidc_flow';
const FLOW_PATH = `${SIGN_IN_PATH}/oidc`;
const FLOW_SECONDS = 600;
/** RFC 8176 authentication method references that count as a second factor (with `mfa` itself). */
const SECOND_FACTORS = new Set(['mfa', 'otp', 'hwk', 'swk', 'sms', 'fpt', 'face', 'iris', 'retina', 'vbm', 'sc', 'pop']);

interface Flow {
  state: string;
  nonce: string;
  verifier: string;
  returnTo: string;
  exp: number;
}

function flowKey(serverSecret: string): Buffer {
  return createHash('sha256').update(`oidc-flow\0${serverSecret}`).digest();
}

function seal(serverSecret: string, flow: Flow): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', flowKey(serverSecret), iv);
  const body = Buffer.concat([cipher.update(JSON.stringify(flow), 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
}

function unseal(serverSecret: string, sealed: string | undefined): Flow | null {
  if (!sealed || sealed.length > 4096) return null;
  try {
    const raw = Buffer.from(sealed, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', flowKey(serverSecret), raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    const flow = JSON.parse(Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8')) as Flow;
    return flow.exp > Date.now() ? flow : null;
  } catch {
    return null;
  }
}

/** Whether the provider may be spoken to over plain http: only on this machine (local development, tests). */
function loopbackHttp(issuer: URL): boolean {
  return issuer.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(issuer.hostname);
}

/** This service's origin as the provider sees it: PUBLIC_URL, else the request's own (the app trusts no proxy header). */
function ownOrigin(ctx: Context): string {
  return sessionDepsOf(ctx).settings.publicUrl?.replace(/\/$/, '') ?? `${ctx.protocol}://${ctx.host}`;
}

/** The provider's configuration, discovered on first use (and again after a failure). */
function discoverer(settings: OidcSettings): () => Promise<client.Configuration> {
  const issuer = new URL(settings.issuer);
  let discovered: Promise<client.Configuration> | null = null;
  return () =>
    (discovered ??= client
      .discovery(
        issuer,
        settings.clientId,
        settings.clientSecret ? { client_secret: settings.clientSecret } : undefined,
        settings.clientSecret ? undefined : client.None(),
        loopbackHttp(issuer) ? { execute: [client.allowInsecureRequests], timeout: 10 } : { timeout: 10 },
      )
      .catch((error: unknown) => {
        discovered = null;
        throw error;
      }));
}

/** GET /console/sign-in/oidc: the flow's secrets sealed in a cookie, then 303 to the provider. */
async function startFlow(ctx: Context, config: client.Configuration): Promise<void> {
  const flow: Flow = {
    state: client.randomState(),
    nonce: client.randomNonce(),
    verifier: client.randomPKCECodeVerifier(),
    returnTo: safeReturnTo(ctx.query.return_to),
    exp: Date.now() + FLOW_SECONDS * 1000,
  };
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: `${ownOrigin(ctx)}${FLOW_PATH}/callback`,
    scope: 'openid email',
    code_challenge: await client.calculatePKCECodeChallenge(flow.verifier),
    code_challenge_method: 'S256',
    state: flow.state,
    nonce: flow.nonce,
  });
  setFlowCookie(ctx, seal(sessionDepsOf(ctx).serverSecret, flow), FLOW_SECONDS);
  ctx.set('Cache-Control', 'no-store');
  ctx.status = 303;
  ctx.redirect(url.href);
}

/** The provider's answer redeemed and its ID token checked (state, nonce, PKCE, issuer, audience, signature): its claims. */
async function verifiedClaims(ctx: Context, config: client.Configuration, flow: Flow, logger: Logger): Promise<client.IDToken> {
  try {
    const tokens = await client.authorizationCodeGrant(config, new URL(ctx.url, ownOrigin(ctx)), {
      pkceCodeVerifier: flow.verifier,
      expectedState: flow.state,
      expectedNonce: flow.nonce,
      idTokenExpected: true,
    });
    const claims = tokens.claims();
    if (!claims) throw new Error('no ID token');
    if (typeof claims.email === 'string') return claims;
    // Many providers put the e-mail in the UserInfo answer only (for the same subject, checked by the library).
    const info = await client.fetchUserInfo(config, tokens.access_token, claims.sub);
    return { ...claims, email: info.email, email_verified: info.email_verified };
  } catch (error) {
    logger.warn({ err: { message: (error as Error).message, code: (error as { code?: string }).code } }, 'OpenID Connect sign-in refused');
  }
  throw new SignInRefused('provider_unverified');
}

/** GET /console/sign-in/oidc/callback: the member of the verified e-mail signed in, 303 to where the flow began. */
async function finishFlow(ctx: Context, config: client.Configuration, logger: Logger): Promise<void> {
  const { db, serverSecret } = sessionDepsOf(ctx);
  const flow = unseal(serverSecret, cookieOf(ctx, FLOW_COOKIE));
  setFlowCookie(ctx, '', 0); // one use, whatever happens next
  if (!flow) throw new SignInRefused('flow_expired');
  if (typeof ctx.query.error === 'string') throw new SignInRefused('provider_refused');
  const claims = await verifiedClaims(ctx, config, flow, logger);
  const email = typeof claims.email === 'string' ? claims.email : null;
  if (!email || claims.email_verified !== true) throw new SignInRefused('email_unverified');
  const members = await membersForEmail(db, email, null);
  if (!members.length) throw new SignInRefused('not_a_member');
  if (members.length > 1) throw new SignInRefused('several_organizations');
  const amr = Array.isArray(claims.amr) ? (claims.amr as unknown[]) : [];
  const grant = { member: members[0], method: 'oidc' as const, mfa: amr.some((m) => typeof m === 'string' && SECOND_FACTORS.has(m)) };
  refuseWithoutSecondFactor(grant);
  await startSession(ctx, grant);
  ctx.status = 303;
  ctx.redirect(flow.returnTo);
}

/** The identity provider's two routes; a refusal goes back to the sign-in page, saying why. */
export function oidcSignIn(settings: OidcSettings, logger: Logger): Middleware {
  const configuration = discoverer(settings);
  return async (ctx, next) => {
    if (ctx.method !== 'GET' || (ctx.path !== FLOW_PATH && ctx.path !== `${FLOW_PATH}/callback`)) return next();
    try {
      const config = await configuration();
      await (ctx.path === FLOW_PATH ? startFlow(ctx, config) : finishFlow(ctx, config, logger));
    } catch (error) {
      let notice: SignInNotice = 'provider_unreachable';
      if (error instanceof SignInRefused) notice = error.notice;
      else if (error instanceof DomainError && error.code === 'two_factor_required') notice = 'two_factor_required';
      else logger.warn({ err: { message: (error as Error).message } }, 'OpenID Connect sign-in failed');
      // Back to the sign-in page by a redirect: the provider's answer (its code) leaves the address bar.
      ctx.set('Cache-Control', 'no-store');
      ctx.status = 303;
      ctx.redirect(`${SIGN_IN_PATH}?${new URLSearchParams({ notice })}`);
    }
  };
}

function setFlowCookie(ctx: Context, value: string, maxAge: number): void {
  setCookie(ctx, FLOW_COOKIE, value, maxAge, FLOW_PATH);
}
