// Members sign in through OpenID Connect against a real provider (`oidc-provider`) on loopback:
// authorization code + PKCE S256, state and nonce, the member matched by verified e-mail, the
// organization's two-factor rule read from the ID token's `amr`; and no cookie, token or code in a
// log line (the service runs at debug level here, logging every request).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshEm } from '../src/db/orm.js';
import { sql } from '../src/db/sql.js';
import type { TestApp } from './support/app.js';
import { createMember, createOrg } from './support/factories.js';
import {
  Jar,
  signInWithProvider as providerSignIn,
  startAppWithIdentityProvider,
  visit,
  type TestIdentityProvider,
} from './support/oidcProvider.js';
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

/** The whole sign-in through this file's provider, as a browser would run it (test/support/oidcProvider.ts). */
const signInWithProvider = (email: string, options: { mfa?: boolean; returnTo?: string; tamper?: (url: URL) => void } = {}) =>
  providerSignIn(app.url, idp, email, options);

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
    expect(notice(without.answer)).toBe('two_factor_required');
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
    expect(notice(unknown.answer)).toBe('not_a_member');
    const unverified = await signInWithProvider('unverified-x@example.com');
    expect(notice(unverified.answer)).toBe('email_unverified');

    const p = await memberWithEmail('viewer');
    const tampered = await signInWithProvider(p.email, { tamper: (u) => u.searchParams.set('state', 'forged') });
    expect(notice(tampered.answer)).toBe('provider_unverified');
    expect(tampered.jar.get(app.url, 'wks_session')).toBeUndefined();

    const good = await signInWithProvider(p.email);
    expect(good.jar.get(app.url, 'wks_session')).toBeTruthy();
    // The same answer again (the flow cookie was spent): refused, no second session.
    const replay = await visit(good.jar, good.callback.href);
    expect(notice(replay)).toBe('flow_expired');
    // Another browser (no flow cookie) presenting someone's code: refused.
    const stranger = await visit(new Jar(), good.callback.href);
    expect(notice(stranger)).toBe('flow_expired');
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
