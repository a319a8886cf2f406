// Members sign in through OpenID Connect against a real provider (`oidc-provider`) on loopback:
// authorization code + PKCE S256, state and nonce, the member matched by verified e-mail, the
// organization's two-factor rule read from the ID token's `amr`; and no cookie, token or code in a
// log line (the service runs at debug level here, logging every request).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshEm } from '../src/db/orm.js';
import { sql } from '../src/db/sql.js';
import type { TestApp } from './support/app.js';
import { createMember, createOrg } from './support/factories.js';
import { startAppWithIdentityProvider, type TestIdentityProvider } from './support/oidcProvider.js';
import { personGql } from './support/signIn.js';

let app: TestApp;
let idp: TestIdentityProvider;
let logLines: string[] = [];

beforeAll(async () => {
  ({ app, idp, logLines } = await startAppWithIdentityProvider());
}, 60_000);
afterAll(async () => {
  await app?.close();
  await idp?.close();
});

/** A browser's cookies, per origin (enough for these two loopback servers). */
class Jar {
  private readonly cookies = new Map<string, Map<string, string>>();
  take(url: string, res: Response): void {
    const origin = new URL(url).origin;
    const jar = this.cookies.get(origin) ?? new Map<string, string>();
    this.cookies.set(origin, jar);
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair.indexOf('=');
      const value = pair.slice(eq + 1);
      if (value && !/Max-Age=0/i.test(line)) jar.set(pair.slice(0, eq), value);
      else jar.delete(pair.slice(0, eq));
    }
  }
  header(url: string): string {
    return [...(this.cookies.get(new URL(url).origin) ?? [])].map(([k, v]) => `${k}=${v}`).join('; ');
  }
  get(url: string, name: string): string | undefined {
    return this.cookies.get(new URL(url).origin)?.get(name);
  }
}

/** One request as a browser sends it (cookies of the jar, no redirect followed). */
async function visit(jar: Jar, url: string, init: RequestInit = {}): Promise<Response> {
  const res = await fetch(url, {
    ...init,
    redirect: 'manual',
    headers: { ...(init.headers as Record<string, string>), cookie: jar.header(url) },
  });
  jar.take(url, res);
  return res;
}

/**
 * Runs the whole flow as a browser would, the person typing `email` on the provider's page; stops
 * before the service's callback when `beforeCallback` says so. Returns the service's last answer.
 */
async function signInWithProvider(email: string, options: { mfa?: boolean; returnTo?: string; tamper?: (url: URL) => void } = {}) {
  const jar = new Jar();
  const start = await visit(jar, `${app.url}/console/sign-in/oidc?return_to=${encodeURIComponent(options.returnTo ?? '/console')}`);
  expect(start.status).toBe(303);
  const authorize = new URL(start.headers.get('location')!);
  expect(authorize.origin).toBe(idp.issuer);
  expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
  expect(authorize.searchParams.get('state')).toBeTruthy();
  expect(authorize.searchParams.get('nonce')).toBeTruthy();
  let res = await visit(jar, authorize.href);
  let url = new URL(res.headers.get('location')!, idp.issuer).href;
  expect(url).toMatch(/\/interaction\//);
  await visit(jar, url);
  const body = new URLSearchParams({ email, ...(options.mfa ? { mfa: 'yes' } : {}) });
  res = await visit(jar, `${url}/login`, { method: 'POST', body, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  // The provider resumes the authorization, then sends the browser back with the code.
  while (res.status >= 300 && res.status < 400) {
    url = new URL(res.headers.get('location')!, url).href;
    if (url.startsWith(app.url)) break;
    res = await visit(jar, url);
  }
  const callback = new URL(url);
  expect(callback.pathname).toBe('/console/sign-in/oidc/callback');
  options.tamper?.(callback);
  const answer = await visit(jar, callback.href);
  return { jar, answer, callback };
}

async function memberWithEmail(role: string, options: { requireTwoFactor?: boolean } = {}) {
  const org = await createOrg(app, { requireTwoFactor: options.requireTwoFactor });
  const member = await createMember(app, org.id, { role });
  const [{ email }] = await sql<{ email: string }>(freshEm(app.server.orm), 'select email from members where id = ?::uuid', [member.id]);
  return { org, member, email };
}

const notice = (res: Response) => new URL(res.headers.get('location')!, app.url).searchParams.get('notice');

describe('OpenID Connect sign-in', () => {
  it('signs a member in by verified e-mail and goes back to return_to', async () => {
    const p = await memberWithEmail('editor');
    const { jar, answer } = await signInWithProvider(p.email, { returnTo: '/console#/proposals' });
    expect(answer.status).toBe(303);
    expect(answer.headers.get('location')).toBe('/console#/proposals');
    const cookie = jar.get(app.url, 'wks_session');
    expect(cookie).toMatch(/^wks_sess_/);
    // The flow's cookie is spent.
    expect(jar.get(app.url, 'wks_oidc_flow')).toBeUndefined();
    const session = await (await fetch(`${app.url}/console/session`, { headers: { cookie: `wks_session=${cookie}` } })).json();
    expect(session).toMatchObject({ signedIn: true, member: { id: p.member.id, role: 'editor' }, session: { method: 'oidc', mfa: false } });
  });

  it('applies the two-factor rule from the ID token amr: an owner needs a second factor when the organization requires it', async () => {
    const p = await memberWithEmail('owner', { requireTwoFactor: true });
    const without = await signInWithProvider(p.email);
    expect(notice(without.answer)).toMatch(/two-factor/);
    expect(without.jar.get(app.url, 'wks_session')).toBeUndefined();
    const withMfa = await signInWithProvider(p.email, { mfa: true });
    expect(withMfa.answer.headers.get('location')).toBe('/console');
    const cookie = withMfa.jar.get(app.url, 'wks_session')!;
    const session = await (await fetch(`${app.url}/console/session`, { headers: { cookie: `wks_session=${cookie}` } })).json();
    expect(session.session).toMatchObject({ method: 'oidc', mfa: true });
    const viewer = await personGql(app.url, { cookie: `wks_session=${cookie}`, csrf: session.csrf }, 'query { viewer { role mfa } }');
    expect(viewer.data.viewer).toEqual({ role: 'owner', mfa: true });
  });

  it('refuses an unknown or unverified e-mail, a tampered state, a replayed callback and a callback without its flow', async () => {
    const unknown = await signInWithProvider('nobody-here@example.com');
    expect(notice(unknown.answer)).toMatch(/not a member/);
    const unverified = await signInWithProvider('unverified-x@example.com');
    expect(notice(unverified.answer)).toMatch(/verified e-mail/);

    const p = await memberWithEmail('viewer');
    const tampered = await signInWithProvider(p.email, { tamper: (u) => u.searchParams.set('state', 'forged') });
    expect(notice(tampered.answer)).toMatch(/could not be verified/);
    expect(tampered.jar.get(app.url, 'wks_session')).toBeUndefined();

    const good = await signInWithProvider(p.email);
    expect(good.jar.get(app.url, 'wks_session')).toBeTruthy();
    // The same answer again (the flow cookie was spent): refused, no second session.
    const replay = await visit(good.jar, good.callback.href);
    expect(notice(replay)).toMatch(/too long ago or in another browser/);
    // Another browser (no flow cookie) presenting someone's code: refused.
    const stranger = await visit(new Jar(), good.callback.href);
    expect(notice(stranger)).toMatch(/too long ago or in another browser/);
    const sessions = await sql(freshEm(app.server.orm), 'select id from member_sessions where member_id = ?::uuid', [p.member.id]);
    expect(sessions).toHaveLength(1);
  });

  it('the sign-in page offers the provider, keeping return_to', async () => {
    const html = await (await fetch(`${app.url}/console/sign-in?return_to=%2Fconsole%23%2Fgaps`)).text();
    expect(html).toContain('href="/console/sign-in/oidc?return_to=%2Fconsole%23%2Fgaps"');
    expect(html).toContain('Sign in with Test IdP');
  });

  it('writes no cookie, CSRF token, session token, sign-in link or authorization code into a log line', async () => {
    expect(logLines.some((l) => l.includes('/console/sign-in/oidc/callback'))).toBe(true); // requests are logged
    const all = logLines.join('\n');
    expect(all).not.toMatch(/wks_sess_/);
    expect(all).not.toMatch(/wks_link_/);
    expect(all).not.toMatch(/wks_oidc_flow=/);
    expect(all).not.toMatch(/[?&]code=(?!\[Redacted\])/);
    expect(all).not.toMatch(/"x-csrf-token":"(?!\[Redacted\])/);
  });
});
