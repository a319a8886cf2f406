// The authorization-code flow with a signed-in member, driven over HTTP as a browser and a client
// would, and every way it must refuse: PKCE, code reuse, another client, redirect URIs, CSRF,
// refresh rotation and expiry, audiences, scopes, revocation, demotion and the two-factor rule.
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshEm } from '../src/db/orm.js';
import { sql } from '../src/db/sql.js';
import type { TestApp } from './support/app.js';
import { spawnService } from './support/processes.js';
import { createOrg, createWorkspace, type MemberRow } from './support/factories.js';
import { MCP_CLIENTS } from './support/mcpClients.js';
import { approve, backLink, consentFields, openAuthorization, submitConsent, type Browser } from './support/oauthClient.js';
import { signedInWithProvider, startAppWithIdentityProvider, type TestIdentityProvider } from './support/oidcProvider.js';
import { mintSignInLink, personGql, redeemSignInLink, signIn as signInAs, type SignedInPerson } from './support/signIn.js';
import { testLogger } from './support/internalErrors.js';

let app: TestApp;
/** The identity provider people may also sign in with (its `amr` proves a second factor). */
let idp: TestIdentityProvider;
beforeAll(async () => {
  ({ app, idp } = await startAppWithIdentityProvider({
    oauth: { refreshTokenTtlS: 3, registrationsPerHour: 100_000 },
    logger: testLogger(),
  }));
}, 60_000);
afterAll(async () => {
  await app?.close();
  await idp?.close();
});

const REDIRECT = 'http://127.0.0.1:45678/callback';

const form = (path: string, values: Record<string, string>) =>
  fetch(`${app.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(values).toString(),
  }).then(async (res) => ({ status: res.status, body: await res.json() }));

async function registerClient(name = 'Test client', redirectUris = [REDIRECT]): Promise<string> {
  const res = await fetch(`${app.url}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: name, redirect_uris: redirectUris }),
  });
  return ((await res.json()) as { client_id: string }).client_id;
}

function pkce() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

function authorizationUrl(clientId: string, challenge: string, extra: Record<string, string> = {}): string {
  const params = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state: randomBytes(8).toString('hex'),
    resource: `${app.url}/mcp`,
    ...extra,
  });
  return `${app.url}/oauth/authorize?${params}`;
}

interface Person {
  member: MemberRow;
  workspaceId: string;
  organizationId: string;
  browser: Browser & SignedInPerson;
  email: string;
}

/**
 * A member of a new organization (or of `into`'s), signed in with a sign-in link (no second factor),
 * or through the identity provider with `signIn: 'second factor'` (its `amr` proves one).
 */
async function person(
  role = 'editor',
  into?: Person,
  options: { requireTwoFactor?: boolean; signIn?: 'link' | 'second factor' } = {},
): Promise<Person> {
  const org = into ? { id: into.organizationId } : await createOrg(app, { requireTwoFactor: options.requireTwoFactor });
  const workspace = into ? { id: into.workspaceId } : await createWorkspace(app, org.id);
  const email = `oauth-${randomBytes(4).toString('hex')}@example.com`;
  const created = await app.gql<{ createMember: MemberRow }>(
    'mutation($input: CreateMemberInput!) { createMember(input: $input) { id role } }',
    { input: { organizationId: org.id, email, role } },
  );
  const browser =
    options.signIn === 'second factor'
      ? await signedInWithProvider(app.url, idp, email, { mfa: true })
      : await signInAs(app.url, app.adminToken, email);
  return { member: created.data.createMember, workspaceId: workspace.id, organizationId: org.id, browser, email };
}

/** A code for `clientId` as the person approves it, with the verifier that redeems it. */
async function code(p: Person, clientId: string, extra: Record<string, string> = {}) {
  const { verifier, challenge } = pkce();
  const back = await approve(app.url, authorizationUrl(clientId, challenge, extra), p.browser);
  return { code: back.searchParams.get('code')!, verifier, back };
}

const redeem = (clientId: string, c: { code: string; verifier: string }, extra: Record<string, string> = {}) =>
  form('/oauth/token', {
    grant_type: 'authorization_code',
    client_id: clientId,
    code: c.code,
    code_verifier: c.verifier,
    redirect_uri: REDIRECT,
    ...extra,
  });

const refresh = (clientId: string, token: string) =>
  form('/oauth/token', { grant_type: 'refresh_token', client_id: clientId, refresh_token: token });

const mcp = (token: string, body: unknown) =>
  fetch(`${app.url}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
  });

const listTools = async (token: string) => {
  const res = await mcp(token, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
  return {
    status: res.status,
    names: res.status === 200 ? ((await res.json()) as any).result.tools.map((t: { name: string }) => t.name) : [],
  };
};

describe('the flow as a browser and a client drive it', () => {
  it('sign-in first, then a consent screen naming the workspace and the permissions, capped by the role', async () => {
    const p = await person('viewer');
    const clientId = await registerClient('Capped client');
    const { challenge } = pkce();
    const url = authorizationUrl(clientId, challenge, { scope: 'memory.read memory.write' });
    const signedOut = await openAuthorization(url, null);
    expect(signedOut.status).toBe(302);
    const to = new URL(signedOut.headers.get('location')!, app.url);
    expect(to.pathname).toBe('/console/sign-in');
    expect(to.searchParams.get('return_to')).toBe(url.slice(app.url.length));
    // Signing in there comes back to the authorization request.
    const link = await mintSignInLink(app.url, app.adminToken, p.email);
    const again = await redeemSignInLink(app.url, link.token, to.searchParams.get('return_to')!);
    expect(again.returnTo).toBe(url.slice(app.url.length));
    const page = await openAuthorization(url, p.browser);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("form-action 'self' http://127.0.0.1:45678");
    const html = await page.text();
    expect(html).toContain('Capped client');
    expect(html).toContain('not verified');
    expect(html).toMatch(/<li>Read shared memory notes <code>memory\.read<\/code><\/li>/);
    expect(html).toMatch(
      /<li class="no"><span class="what">Write and delete shared memory notes <code>memory\.write<\/code><\/span><small>not granted: your role \(viewer\)/,
    );
    expect(html).toContain('Workspace');
    const done = await submitConsent(app.url, p.browser, consentFields(html));
    expect(done.status).toBe(303);
    const back = new URL(done.headers.get('location')!);
    expect(back.origin + back.pathname).toBe(REDIRECT);
    expect(back.searchParams.get('state')).toBe(new URL(url).searchParams.get('state'));
    expect(back.searchParams.get('iss')).toBe(app.url);
    const tokens = await redeem(clientId, { code: back.searchParams.get('code')!, verifier: '' }).catch(() => null);
    expect(tokens?.body.error).toBe('invalid_request'); // no verifier
  });

  it('issues audience-bound tokens that call MCP tools and list only what the grant allows', async () => {
    const p = await person('editor');
    const clientId = await registerClient();
    const c = await code(p, clientId, { scope: 'memory.read memory.write search.read offline_access' });
    const tokens = await redeem(clientId, c);
    expect(tokens.status).toBe(200);
    expect(tokens.body).toMatchObject({ token_type: 'Bearer', expires_in: 600, scope: 'memory.read memory.write search.read' });
    const { names } = await listTools(tokens.body.access_token);
    expect(names).toContain('memory_put_note');
    expect(names).toContain('search');
    expect(names).not.toContain('changelog_list');
    const put = await mcp(tokens.body.access_token, {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'memory_put_note', arguments: { path: 'oauth/hello', body: 'hi', kind: 'note', links: [], tags: [] } },
    });
    expect(put.status).toBe(200);
    const result = ((await put.json()) as any).result;
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent.workspaceId).toBe(p.workspaceId);
    // The token is for /mcp: the REST API refuses it.
    const rest = await app.api('GET', '/api/v1/workspaces/-/memory', { key: tokens.body.access_token });
    expect(rest.status).toBe(401);
    expect(rest.headers.get('www-authenticate')).toContain('error="invalid_token"');
    // The audit trail has the grant and the write under the member.
    const audit = await app.gql('query($w: ID!) { auditEvents(workspaceId: $w) { action agentKeyId } }', { w: p.workspaceId });
    expect(audit.data.auditEvents.map((e: { action: string }) => e.action)).toEqual([
      'memory.note.created',
      'oauth_grant.created',
      'workspace.created',
    ]);
    expect(audit.data.auditEvents[0].agentKeyId).toBeNull(); // a grant is not a key: the member acted through an app
    const byApps = await app.gql(
      'query($w: ID) { auditTrail(workspaceId: $w, actor: "oauth") { edges { node { action actor memberId } } } }',
      {
        w: p.workspaceId,
      },
    );
    expect(byApps.data.auditTrail.edges.map((e: { node: unknown }) => e.node)).toEqual([
      { action: 'memory.note.created', actor: 'oauth', memberId: p.member.id },
      { action: 'oauth_grant.created', actor: 'oauth', memberId: p.member.id },
    ]);
  });

  it('a token for /api/v1 works on REST and not on /mcp; an unknown resource is refused at the client', async () => {
    const p = await person('owner');
    const clientId = await registerClient();
    const c = await code(p, clientId, { scope: 'changelog.read', resource: `${app.url}/api/v1` });
    const tokens = await redeem(clientId, c);
    expect((await app.api('GET', '/api/v1/workspaces/-/changelog', { key: tokens.body.access_token })).status).toBe(200);
    expect((await listTools(tokens.body.access_token)).status).toBe(401);
    const { challenge } = pkce();
    // Refused on a page of the service naming the client; the person may follow its link back to the client.
    const evil = await openAuthorization(authorizationUrl(clientId, challenge, { resource: 'https://evil.example/mcp' }), p.browser);
    expect(evil.status).toBe(400);
    expect(evil.headers.get('location')).toBeNull();
    const back = backLink(await evil.text())!;
    expect(back.origin + back.pathname).toBe(REDIRECT);
    expect(back.searchParams.get('error')).toBe('invalid_target');
    const unknownScope = await openAuthorization(authorizationUrl(clientId, challenge, { scope: 'memory.read admin' }), p.browser);
    expect(backLink(await unknownScope.text())!.searchParams.get('error')).toBe('invalid_scope');
  });
});

describe('refusals', () => {
  it('PKCE: a missing or wrong verifier is refused, and a wrong one spends the code', async () => {
    const p = await person();
    const clientId = await registerClient();
    const c = await code(p, clientId);
    expect((await redeem(clientId, { code: c.code, verifier: '' })).body.error).toBe('invalid_request');
    expect((await redeem(clientId, { code: c.code, verifier: pkce().verifier })).body.error).toBe('invalid_grant');
    expect((await redeem(clientId, c)).body.error).toBe('invalid_grant');
    const { challenge } = pkce();
    const plain = await openAuthorization(authorizationUrl(clientId, challenge, { code_challenge_method: 'plain' }), p.browser);
    expect(plain.status).toBe(400);
    expect(backLink(await plain.text())!.searchParams.get('error')).toBe('invalid_request');
  });

  it('a code redeemed twice revokes what the first redemption gave', async () => {
    const p = await person();
    const clientId = await registerClient();
    const c = await code(p, clientId, { scope: 'memory.read' });
    const first = await redeem(clientId, c);
    expect(first.status).toBe(200);
    expect((await listTools(first.body.access_token)).status).toBe(200);
    const second = await redeem(clientId, c);
    expect(second.body.error).toBe('invalid_grant');
    expect((await listTools(first.body.access_token)).status).toBe(401);
    expect((await refresh(clientId, first.body.refresh_token)).body.error).toBe('invalid_grant');
  });

  it('a code redeemed by another client, or with another redirect_uri, is refused', async () => {
    const p = await person();
    const clientId = await registerClient();
    const other = await registerClient('Other');
    const c = await code(p, clientId);
    expect((await redeem(other, c)).body.error).toBe('invalid_grant');
    expect((await redeem(clientId, c, { redirect_uri: 'http://127.0.0.1:45678/other' })).body.error).toBe('invalid_grant');
    expect((await redeem(clientId, c)).status).toBe(200);
  });

  it('a redirect_uri the client did not register is refused on a page, never followed (no open redirect)', async () => {
    const p = await person();
    const clientId = await registerClient();
    const { challenge } = pkce();
    for (const uri of ['https://evil.example/cb', 'http://127.0.0.1:45678/callback/../x', 'http://127.0.0.1:45679/callback']) {
      const res = await openAuthorization(authorizationUrl(clientId, challenge, { redirect_uri: uri }), p.browser);
      expect(res.status).toBe(400);
      expect(res.headers.get('location')).toBeNull();
      expect(await res.text()).toContain('redirect_uri is not one this client registered');
    }
  });

  it("a consent without the CSRF token (or with another session's) issues nothing", async () => {
    const p = await person();
    const q = await person();
    const clientId = await registerClient();
    const { challenge } = pkce();
    const html = await (await openAuthorization(authorizationUrl(clientId, challenge), p.browser)).text();
    const fields = consentFields(html);
    for (const csrf of [
      null,
      '',
      consentFields(await (await openAuthorization(authorizationUrl(clientId, challenge), q.browser)).text()).csrf_token,
    ]) {
      const res = await submitConsent(app.url, p.browser, fields, { csrf_token: csrf });
      expect(res.status).toBe(403);
      expect(res.headers.get('location')).toBeNull();
    }
    const signedOut = await submitConsent(app.url, null, fields);
    expect(signedOut.status).toBe(401);
  });

  it('refresh tokens rotate; a reused one revokes the family; an expired one is refused', async () => {
    const p = await person();
    const clientId = await registerClient();
    const tokens = (await redeem(clientId, await code(p, clientId, { scope: 'memory.read' }))).body;
    const rotated = await refresh(clientId, tokens.refresh_token);
    expect(rotated.status).toBe(200);
    expect(rotated.body.refresh_token).not.toBe(tokens.refresh_token);
    expect((await listTools(rotated.body.access_token)).status).toBe(200);
    expect((await refresh(await registerClient('Thief'), rotated.body.refresh_token)).body.error).toBe('invalid_grant');
    const reuse = await refresh(clientId, tokens.refresh_token);
    expect(reuse.body.error).toBe('invalid_grant');
    expect((await listTools(rotated.body.access_token)).status).toBe(401);
    expect((await refresh(clientId, rotated.body.refresh_token)).body.error).toBe('invalid_grant');

    const later = (await redeem(clientId, await code(p, clientId, { scope: 'memory.read' }))).body;
    await new Promise((resolve) => setTimeout(resolve, 3500)); // OAUTH_REFRESH_TOKEN_TTL_S is 3 here
    const expired = await refresh(clientId, later.refresh_token);
    expect(expired.body).toMatchObject({ error: 'invalid_grant', error_description: 'The refresh token has expired' });
  });

  it('a scope the grant lacks: 403 insufficient_scope naming it, on MCP and on REST', async () => {
    const p = await person('editor');
    const clientId = await registerClient();
    const mcpTokens = (await redeem(clientId, await code(p, clientId, { scope: 'memory.read' }))).body;
    const call = await mcp(mcpTokens.access_token, {
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/call',
      params: { name: 'memory_put_note', arguments: { path: 'x', body: 'y', kind: 'note', links: [], tags: [] } },
    });
    expect(call.status).toBe(403);
    expect(call.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${app.url}/.well-known/oauth-protected-resource/mcp", scope="memory.read memory.write", ` +
        'error="insufficient_scope", error_description="The grant lacks a scope"',
    );
    const restTokens = (await redeem(clientId, await code(p, clientId, { scope: 'memory.read', resource: `${app.url}/api/v1` }))).body;
    const put = await app.api('PUT', '/api/v1/workspaces/-/memory/note', {
      key: restTokens.access_token,
      body: { path: 'x', body: 'y', kind: 'note', links: [], tags: [] },
    });
    expect(put.status).toBe(403);
    expect(put.body.error.code).toBe('permission_denied');
    expect(put.headers.get('www-authenticate')).toContain('error="insufficient_scope"');
    expect(put.headers.get('www-authenticate')).toContain('scope="memory.read memory.write"');
  });

  it('revoking the grant (GraphQL) or demoting the member takes effect at once', async () => {
    const p = await person('editor');
    const clientId = await registerClient();
    const tokens = (await redeem(clientId, await code(p, clientId, { scope: 'memory.read memory.write' }))).body;
    expect((await listTools(tokens.access_token)).names).toContain('memory_put_note');
    await app.gql('mutation($id: ID!, $input: UpdateMemberInput!) { updateMember(id: $id, input: $input) { id } }', {
      id: p.member.id,
      input: { role: 'viewer' },
    });
    const demoted = await listTools(tokens.access_token);
    expect(demoted.names).toContain('memory_get_note');
    expect(demoted.names).not.toContain('memory_put_note');
    const grants = await app.gql('query($org: ID) { oauthGrants(organizationId: $org) { id clientName scopes memberId } }', {
      org: p.organizationId,
    });
    expect(grants.data.oauthGrants).toHaveLength(1);
    const revoked = await app.gql('mutation($id: ID!, $org: ID) { revokeOAuthGrant(id: $id, organizationId: $org) { id revokedAt } }', {
      id: grants.data.oauthGrants[0].id,
      org: p.organizationId,
    });
    expect(revoked.data.revokeOAuthGrant.revokedAt).toBeTruthy();
    expect((await listTools(tokens.access_token)).status).toBe(401);
    expect((await refresh(clientId, tokens.refresh_token)).body.error).toBe('invalid_grant');
    const other = await person();
    const hidden = await app.gql('mutation($id: ID!, $org: ID) { revokeOAuthGrant(id: $id, organizationId: $org) { id } }', {
      id: grants.data.oauthGrants[0].id,
      org: other.organizationId,
    });
    expect(hidden.errors?.[0].extensions.code).toBe('not_found');
  });

  it('RFC 7009: revoking an access token ends it; revoking a refresh token ends the grant', async () => {
    const p = await person();
    const clientId = await registerClient();
    const tokens = (await redeem(clientId, await code(p, clientId, { scope: 'memory.read' }))).body;
    expect((await form('/oauth/revoke', { token: tokens.access_token, client_id: clientId })).status).toBe(200);
    expect((await listTools(tokens.access_token)).status).toBe(401);
    const next = (await refresh(clientId, tokens.refresh_token)).body;
    expect((await listTools(next.access_token)).status).toBe(200);
    expect((await form('/oauth/revoke', { token: next.refresh_token, client_id: clientId })).status).toBe(200);
    expect((await listTools(next.access_token)).status).toBe(401);
  });
});

describe("the organization's two-factor rule on grants", () => {
  const requireTwoFactor = (organizationId: string) =>
    app.gql('mutation($id: ID!) { updateOrganization(id: $id, input: { requireTwoFactor: true }) { id } }', { id: organizationId });
  const putNote = (token: string, path: string) =>
    mcp(token, {
      jsonrpc: '2.0',
      id: 4,
      method: 'tools/call',
      params: { name: 'memory_put_note', arguments: { path, body: 'two-factor', kind: 'note', links: [], tags: [] } },
    }).then(async (res) => ({ status: res.status, result: ((await res.json()) as any).result }));
  const listNotes = (token: string) => app.api('GET', '/api/v1/workspaces/-/memory', { key: token });
  /** A token for the whole service (MCP and REST) that `p` consents to. */
  const serviceToken = async (p: Person, clientId: string) =>
    (await redeem(clientId, await code(p, clientId, { scope: 'memory.read memory.write', resource: `${app.url}/` }))).body;
  /** Where the consent (page or form) sent the browser: back to the client, with an error or a code. */
  const sentBack = (res: Response) => {
    const back = new URL(res.headers.get('location')!);
    expect(back.origin + back.pathname).toBe(REDIRECT);
    return back.searchParams;
  };

  it('an owner whose session proved no second factor is refused at consent: access_denied back to the client, no code', async () => {
    const p = await person('owner'); // signed in with a link before the organization required two-factor
    const clientId = await registerClient();
    const { challenge } = pkce();
    const url = authorizationUrl(clientId, challenge);
    const page = await openAuthorization(url, p.browser);
    expect(page.status).toBe(200);
    const fields = consentFields(await page.text());
    await requireTwoFactor(p.organizationId);
    const shown = await openAuthorization(url, p.browser);
    expect(shown.status).toBe(400); // a page naming the client, whose link goes back to it
    const back = backLink(await shown.text())!;
    expect(back.origin + back.pathname).toBe(REDIRECT);
    const refusedPage = back.searchParams;
    expect(refusedPage.get('error')).toBe('access_denied');
    expect(refusedPage.get('error_description')).toMatch(/second factor/);
    expect(refusedPage.get('state')).toBe(new URL(url).searchParams.get('state'));
    // The form served before the rule was turned on issues no code either.
    const decided = await submitConsent(app.url, p.browser, fields);
    expect(decided.status).toBe(303);
    const refusedForm = sentBack(decided);
    expect(refusedForm.get('error')).toBe('access_denied');
    expect(refusedForm.get('code')).toBeNull();
    const [{ codes }] = await sql<{ codes: number }>(
      freshEm(app.server.orm),
      'select count(*)::int as codes from oauth_codes where member_id = ?::uuid',
      [p.member.id],
    );
    expect(codes).toBe(0);
  });

  it("an owner whose session proved a second factor consents; the grant's calls pass the rule (MCP, REST, refreshed) with the member's flag off", async () => {
    const p = await person('owner', undefined, { requireTwoFactor: true, signIn: 'second factor' });
    const session = (await (await fetch(`${app.url}/console/session`, { headers: { cookie: p.browser.cookie } })).json()) as any;
    expect(session.session).toMatchObject({ method: 'oidc', mfa: true });
    const clientId = await registerClient();
    const tokens = await serviceToken(p, clientId);
    expect(tokens.access_token).toBeTruthy();
    const db = freshEm(app.server.orm);
    const [member] = await sql<{ two_factor_enabled: boolean }>(db, 'select two_factor_enabled from members where id = ?::uuid', [
      p.member.id,
    ]);
    expect(member.two_factor_enabled).toBe(false);
    const [grant] = await sql<{ mfa: boolean }>(db, 'select mfa from oauth_grants where member_id = ?::uuid', [p.member.id]);
    expect(grant.mfa).toBe(true);
    const put = await putNote(tokens.access_token, 'oauth/two-factor');
    expect(put.status).toBe(200);
    expect(put.result.isError).toBeFalsy();
    expect((await listTools(tokens.access_token)).names).toContain('memory_put_note');
    const rest = await listNotes(tokens.access_token);
    expect(rest.status).toBe(200);
    // A refresh keeps the grant, and so what its consent proved.
    const refreshed = await refresh(clientId, tokens.refresh_token);
    expect(refreshed.status).toBe(200);
    expect((await listNotes(refreshed.body.access_token)).status).toBe(200);
    expect((await putNote(refreshed.body.access_token, 'oauth/two-factor-2')).result.isError).toBeFalsy();
  });

  it('a grant made without a second factor is refused with the two-factor 403 once the rule covers it (turned on, or the member became owner)', async () => {
    const expectRefused = async (token: string) => {
      const rest = await listNotes(token);
      expect(rest.status).toBe(403);
      expect(rest.body.error.code).toBe('two_factor_required');
      const call = await putNote(token, 'oauth/refused');
      expect(call.result.isError).toBe(true);
      expect(call.result.structuredContent.error).toMatchObject({ code: 'two_factor_required', status: 403 });
    };
    // The organization turns the rule on after an owner's consent.
    const owner = await person('owner');
    const clientId = await registerClient();
    const ownerTokens = await serviceToken(owner, clientId);
    expect((await listNotes(ownerTokens.access_token)).status).toBe(200);
    await requireTwoFactor(owner.organizationId);
    await expectRefused(ownerTokens.access_token);

    // An editor of an organization that requires two-factor (the rule does not concern editors) becomes owner.
    const editor = await person('editor', undefined, { requireTwoFactor: true });
    const editorTokens = await serviceToken(editor, clientId);
    expect((await putNote(editorTokens.access_token, 'oauth/editor')).result.isError).toBeFalsy();
    await app.gql('mutation($id: ID!, $input: UpdateMemberInput!) { updateMember(id: $id, input: $input) { id } }', {
      id: editor.member.id,
      input: { role: 'owner' },
    });
    await expectRefused(editorTokens.access_token);
    // Turning two-factor on for the member lets the grant through again.
    await app.gql('mutation($id: ID!, $input: UpdateMemberInput!) { updateMember(id: $id, input: $input) { id } }', {
      id: editor.member.id,
      input: { twoFactorEnabled: true },
    });
    expect((await listNotes(editorTokens.access_token)).status).toBe(200);
  });
});

describe('grants as the people see them (GraphQL with a session)', () => {
  const GRANTS = 'query { oauthGrants { id clientName memberId scopes workspaceName } }';
  const REVOKE = 'mutation($id: ID!) { revokeOAuthGrant(id: $id) { id revokedAt } }';

  it("a member lists and revokes their own grants (with the CSRF token); an owner sees every member's; others see none of them", async () => {
    const editor = await person('editor');
    const viewer = await person('viewer', editor);
    const owner = await person('owner', editor);
    const clientId = await registerClient('Editor app');
    const tokens = (await redeem(clientId, await code(editor, clientId, { scope: 'memory.read' }))).body;
    const mine = await personGql(app.url, editor.browser, GRANTS);
    expect(mine.data.oauthGrants).toMatchObject([{ clientName: 'Editor app', memberId: editor.member.id, scopes: ['memory.read'] }]);
    expect((await personGql(app.url, viewer.browser, GRANTS)).data.oauthGrants).toEqual([]);
    expect((await personGql(app.url, owner.browser, GRANTS)).data.oauthGrants).toHaveLength(1);
    const id = mine.data.oauthGrants[0].id;
    const byViewer = await personGql(app.url, viewer.browser, REVOKE, { id });
    expect(byViewer.errors?.[0].extensions.code).toBe('not_found');
    const noCsrf = await personGql(app.url, editor.browser, REVOKE, { id }, { csrf: null });
    expect(noCsrf.errors?.[0].extensions.code).toBe('permission_denied');
    expect((await listTools(tokens.access_token)).status).toBe(200);
    const revoked = await personGql(app.url, editor.browser, REVOKE, { id });
    expect(revoked.data.revokeOAuthGrant.revokedAt).toBeTruthy();
    expect((await listTools(tokens.access_token)).status).toBe(401);
    const audit = await app.gql('query($w: ID!) { auditEvents(workspaceId: $w) { action actor memberId } }', { w: editor.workspaceId });
    expect(audit.data.auditEvents[0]).toMatchObject({ action: 'oauth_grant.revoked', actor: 'member', memberId: editor.member.id });
  });
});

describe.skipIf(!process.env.DATABASE_URL)('in every process (a second process on the same PostgreSQL)', () => {
  it('demoting the member and revoking the grant reach the other process within seconds', async () => {
    // Both processes are one service: the same public address (PUBLIC_URL), so the token's audience holds in both.
    const other = await spawnService({
      DATABASE_URL: process.env.DATABASE_URL!,
      ADMIN_TOKEN: app.adminToken,
      PUBLIC_URL: app.url,
      OAUTH_REGISTRATIONS_PER_HOUR: '100000',
    });
    const at = (token: string) =>
      fetch(`${other.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}` },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
    const toolsThere = async (token: string) => {
      const res = await at(token);
      return res.status === 200 ? ((await res.json()) as any).result.tools.map((t: { name: string }) => t.name) : res.status;
    };
    const within = async (check: () => Promise<boolean>, ms = 5000): Promise<number> => {
      const started = Date.now();
      while (!(await check())) {
        if (Date.now() - started > ms) throw new Error(`not within ${ms} ms`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return Date.now() - started;
    };
    try {
      const p = await person('editor');
      const clientId = await registerClient();
      const tokens = (await redeem(clientId, await code(p, clientId, { scope: 'memory.read memory.write' }))).body;
      expect(await toolsThere(tokens.access_token)).toContain('memory_put_note'); // now in the other process's cache
      await app.gql('mutation($id: ID!, $input: UpdateMemberInput!) { updateMember(id: $id, input: $input) { id } }', {
        id: p.member.id,
        input: { role: 'viewer' },
      });
      const demotedMs = await within(async () => !((await toolsThere(tokens.access_token)) as string[]).includes('memory_put_note'));
      const grant = (await personGql(app.url, p.browser, 'query { oauthGrants { id } }')).data.oauthGrants[0];
      await personGql(app.url, p.browser, 'mutation($id: ID!) { revokeOAuthGrant(id: $id) { id } }', { id: grant.id });
      const revokedMs = await within(async () => (await at(tokens.access_token)).status === 401);
      console.log(`other process: demotion seen after ${demotedMs} ms, revocation after ${revokedMs} ms`);
    } finally {
      await other.stop();
    }
  }, 90_000);
});

// Hosts as they behave (docs/mcp.md): Claude Desktop builds /authorize, /token and /register at the
// host's root instead of reading the advertised endpoints, and registers without a client_name.
describe('hosts as they behave', () => {
  it('registers at the root without client_name: named by its redirect host, on the registration and the consent page', async () => {
    const res = await fetch(`${app.url}/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' }),
    });
    expect(res.status).toBe(201);
    const client = (await res.json()) as { client_id: string; client_name: string };
    expect(client.client_name).toBe('127.0.0.1:45678');
    const p = await person('editor');
    const page = await openAuthorization(authorizationUrl(client.client_id, pkce().challenge), p.browser);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain(
      'An app returning to <b>127.0.0.1:45678</b> <span class="warn">(registered itself without a name)</span>',
    );
  });

  it('sends GET /authorize on to the advertised endpoint with its query, and answers POST /token at the root', async () => {
    const p = await person('editor');
    const clientId = await registerClient('Root-path host');
    const { verifier, challenge } = pkce();
    const advertised = new URL(authorizationUrl(clientId, challenge, { scope: 'memory.read' }));
    const atRoot = await fetch(`${app.url}/authorize${advertised.search}`, { redirect: 'manual', headers: { cookie: p.browser.cookie } });
    expect(atRoot.status).toBe(302);
    expect(atRoot.headers.get('location')).toBe(`/oauth/authorize${advertised.search}`);
    const back = await approve(app.url, advertised, p.browser);
    const tokens = await form('/token', {
      grant_type: 'authorization_code',
      client_id: clientId,
      code: back.searchParams.get('code')!,
      code_verifier: verifier,
      redirect_uri: REDIRECT,
    });
    expect(tokens.status).toBe(200);
    expect(tokens.body).toMatchObject({ token_type: 'Bearer', scope: 'memory.read' });
    expect((await listTools(tokens.body.access_token)).names).toContain('memory_get_note');
    // On the 2026-07-28 revision the token, its scopes and their refusal are the same.
    const modern = await MCP_CLIENTS[2].connect(app.url, tokens.body.access_token);
    const names = (await modern.listTools()).tools.map((t) => t.name as string);
    await modern.close();
    expect(names).toContain('memory_get_note');
    expect(names).not.toContain('memory_put_note');
    const put = await fetch(`${app.url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${tokens.body.access_token}`,
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': 'memory_put_note',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: {
          name: 'memory_put_note',
          arguments: { path: 'x', body: 'y', kind: 'note', links: [], tags: [] },
          _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} },
        },
      }),
    });
    expect(put.status).toBe(403);
    expect(put.headers.get('www-authenticate')).toContain('error="insufficient_scope"');
    const refreshed = await form('/token', { grant_type: 'refresh_token', client_id: clientId, refresh_token: tokens.body.refresh_token });
    expect(refreshed.status).toBe(200);
    // The root answers errors like the advertised endpoint.
    const refused = await form('/token', {
      grant_type: 'authorization_code',
      client_id: clientId,
      code: 'nope',
      code_verifier: verifier,
      redirect_uri: REDIRECT,
    });
    expect(refused).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
  });
});
