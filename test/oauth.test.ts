import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PERMISSIONS } from '../src/auth/permissions.js';
import { startTestApp, type TestApp } from './support/app.js';
import { freshEm } from '../src/db/orm.js';
import { sql } from '../src/db/sql.js';
import { createMember, createOrg, createWorkspace, tenant } from './support/factories.js';
import { signIn } from './support/signIn.js';

/** Fetch budgets out of the way (counted per address across the processes of a shared database; oauthAttacks tests them). */
const UNBOUNDED_FETCHES = { perAddress: 100_000, perService: 100_000, windowSeconds: 60 };
import { loopbackAddress, postJsonFrom } from './support/oauthClient.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ oauth: { registrationsPerHour: 12, metadataFetches: UNBOUNDED_FETCHES } });
});
afterAll(async () => app?.close());

const json = async (path: string, init?: RequestInit) => {
  const res = await fetch(`${app.url}${path}`, init);
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
};

// Registrations are counted per client address, across processes on a shared database: this file's come from an address of its own.
const from = loopbackAddress();
const register = async (body: unknown, raw?: string, address = from) => {
  const res = await postJsonFrom(`${app.url}/oauth/register`, raw ?? JSON.stringify(body), address);
  return { status: res.status, headers: new Headers(res.headers as Record<string, string>), body: res.body };
};

describe('discovery (RFC 9728, RFC 8414)', () => {
  it('serves protected-resource metadata for the service, /mcp and /api/v1', async () => {
    for (const [path, resource] of [
      ['/.well-known/oauth-protected-resource', `${app.url}/`],
      ['/.well-known/oauth-protected-resource/mcp', `${app.url}/mcp`],
      ['/.well-known/oauth-protected-resource/api/v1', `${app.url}/api/v1`],
    ]) {
      const res = await json(path);
      expect(res.status).toBe(200);
      expect(res.body.resource).toBe(resource);
      expect(res.body.authorization_servers).toEqual([app.url]);
      expect(res.body.scopes_supported).toEqual([...PERMISSIONS]);
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
    }
  });

  it('serves authorization-server metadata: S256 only, public clients, CIMD and DCR', async () => {
    const res = await json('/.well-known/oauth-authorization-server');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      issuer: app.url,
      authorization_endpoint: `${app.url}/oauth/authorize`,
      token_endpoint: `${app.url}/oauth/token`,
      registration_endpoint: `${app.url}/oauth/register`,
      revocation_endpoint: `${app.url}/oauth/revoke`,
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['none'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      client_id_metadata_document_supported: true,
    });
  });

  it('answers 404 for other well-known paths', async () => {
    expect((await fetch(`${app.url}/.well-known/oauth-protected-resource/graphql`)).status).toBe(404);
  });
});

describe('challenges', () => {
  const scope = PERMISSIONS.join(' ');
  it('/mcp without a credential: 401 with resource_metadata and scope', async () => {
    const res = await fetch(`${app.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${app.url}/.well-known/oauth-protected-resource/mcp", scope="${scope}"`,
    );
  });

  it('/api/v1 without a credential: 401 with its own resource_metadata', async () => {
    const res = await app.api('GET', '/api/v1/workspaces/-/changelog');
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('unauthorized');
    expect(res.headers.get('www-authenticate')).toContain(`resource_metadata="${app.url}/.well-known/oauth-protected-resource/api/v1"`);
  });

  it('an unknown access token: 401 invalid_token with resource_metadata', async () => {
    const res = await app.api('GET', '/api/v1/workspaces/-/changelog', { key: 'wks_at_notarealtoken' });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer resource_metadata="[^"]+", scope="[^"]+", error="invalid_token"/);
  });

  it('an agent key is never sent into OAuth: a bad key keeps the old challenge, a good one works as before', async () => {
    const bad = await fetch(`${app.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer svc_pat_${'a'.repeat(49)}` },
      body: '{}',
    });
    expect(bad.status).toBe(401);
    expect(bad.headers.get('www-authenticate')).toBe(
      'Bearer realm="workspace-knowledge-service", error="invalid_token", error_description="An agent key (svc_pat_...) is required"',
    );
    const restBad = await app.api('GET', '/api/v1/workspaces/-/changelog', { key: `svc_pat_${'a'.repeat(49)}` });
    expect(restBad.status).toBe(401);
    expect(restBad.headers.get('www-authenticate')).toBeNull();
    const t = await tenant(app, { permissions: ['changelog.read'] });
    const good = await app.api('GET', '/api/v1/workspaces/-/changelog', { key: t.key });
    expect(good.status).toBe(200);
    expect(good.headers.get('www-authenticate')).toBeNull();
    const denied = await app.api('GET', '/api/v1/workspaces/-/memory', { key: t.key });
    expect(denied.status).toBe(403);
    expect(denied.headers.get('www-authenticate')).toBeNull();
  });
});

describe('Dynamic Client Registration (RFC 7591)', () => {
  it('registers a public client with exact redirect URIs, and refuses unsafe ones', async () => {
    const ok = await register({ client_name: 'Test editor', redirect_uris: ['http://127.0.0.1:33418/callback'] });
    expect(ok.status).toBe(201);
    expect(ok.body.client_id).toMatch(/^wks_client_/);
    expect(ok.body).toMatchObject({
      client_name: 'Test editor',
      token_endpoint_auth_method: 'none',
      redirect_uris: ['http://127.0.0.1:33418/callback'],
    });
    expect(ok.body.client_secret).toBeUndefined();
    expect(ok.headers.get('cache-control')).toBe('no-store');
    for (const uri of ['http://evil.example/cb', 'javascript:alert(1)', 'https://a.example/cb#frag', 'not a url']) {
      const bad = await register({ client_name: 'x', redirect_uris: [uri] });
      expect(bad.status).toBe(400);
      expect(bad.body.error).toBe('invalid_redirect_uri');
    }
    expect((await register({ client_name: 'x' })).body.error).toBe('invalid_redirect_uri');
    expect((await register({ redirect_uris: ['https://a.example/cb'], grant_types: ['client_credentials'] })).body.error).toBe(
      'invalid_client_metadata',
    );
    const notJson = await register(null, '{');
    expect(notJson.body.error).toBe('invalid_client_metadata');
  });

  it('is rate-limited per address (429 with Retry-After)', async () => {
    let last;
    for (let i = 0; i < 14; i++) last = await register({ redirect_uris: ['https://app.example/cb'] });
    expect(last!.status).toBe(429);
    expect(Number(last!.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(last!.body.error).toBe('rate_limited');
  });
});

describe('authorization endpoint before sign-in', () => {
  it('refuses an unknown client or a redirect_uri it did not register on a page, never redirecting there', async () => {
    const unknown = await fetch(`${app.url}/oauth/authorize?client_id=wks_client_nope&redirect_uri=https%3A%2F%2Fevil.example%2F`, {
      redirect: 'manual',
    });
    expect(unknown.status).toBe(400);
    expect(unknown.headers.get('location')).toBeNull();
    expect(unknown.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
  });
});

describe('Client ID Metadata Documents under the outbound rules', () => {
  it('a client_id on a loopback or private address is not fetched (OUTBOUND_ALLOW_LOOPBACK is off here)', async () => {
    // Documents are fetched for a signed-in person only (an anonymous request goes to sign in first).
    const org = await createOrg(app);
    await createWorkspace(app, org.id);
    const member = await createMember(app, org.id, { role: 'viewer' });
    const [{ email }] = await sql<{ email: string }>(freshEm(app.server.orm), 'select email from members where id = ?::uuid', [member.id]);
    const { cookie } = await signIn(app.url, app.adminToken, email);
    const authorize = (clientId: string, redirectUri = 'https://a.example/cb') =>
      fetch(`${app.url}/oauth/authorize?client_id=${encodeURIComponent(clientId)}&redirect_uri=${encodeURIComponent(redirectUri)}`, {
        redirect: 'manual',
        headers: { cookie },
      });
    for (const clientId of ['https://127.0.0.1:9/client.json', 'https://10.1.2.3/client.json', 'https://[::1]:9/client.json']) {
      const res = await authorize(clientId);
      expect(res.status).toBe(400);
      expect(await res.text()).toContain('the address is not allowed');
    }
    const root = await authorize('https://a.example/', 'x');
    expect(await root.text()).toContain('an https URL with a path');
  });
});

describe('registrations no grant used expire', () => {
  it('past its expiry an unused registration is unknown, and the next registration deletes it', async () => {
    const address = loopbackAddress(); // not the address whose limit the test above used up
    const created = await register({ client_name: 'Short-lived', redirect_uris: ['https://app.example/cb'] }, undefined, address);
    expect(created.status).toBe(201);
    const id = created.body.client_id as string;
    const db = app.server.orm.em.fork().getConnection();
    // A day passes (the expiry is moved instead of waiting).
    await db.execute(`update oauth_clients set expires_at = now() - interval '1 second' where id = ?`, [id]);
    const res = await fetch(`${app.url}/oauth/authorize?client_id=${id}&redirect_uri=https%3A%2F%2Fapp.example%2Fcb`, {
      redirect: 'manual',
    });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('Unknown client_id');
    expect((await register({ client_name: 'Next', redirect_uris: ['https://app.example/cb'] }, undefined, address)).status).toBe(201);
    expect(await db.execute('select count(*)::int as n from oauth_clients where id = ?', [id])).toEqual([{ n: 0 }]);
  });
});

describe('token endpoint', () => {
  const post = (path: string, form: Record<string, string>) =>
    json(path, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form).toString(),
    });

  it('refuses unknown grants, codes and refresh tokens in OAuth terms', async () => {
    expect((await post('/oauth/token', { grant_type: 'password', client_id: 'x' })).body.error).toBe('unsupported_grant_type');
    expect((await post('/oauth/token', { grant_type: 'authorization_code' })).body.error).toBe('invalid_request');
    const badRefresh = await post('/oauth/token', { grant_type: 'refresh_token', client_id: 'x', refresh_token: 'wks_rt_nope' });
    expect(badRefresh.status).toBe(400);
    expect(badRefresh.body.error).toBe('invalid_grant');
    const notForm = await json('/oauth/token', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(notForm.body.error).toBe('invalid_request');
  });

  it('revocation answers 200 for unknown tokens (RFC 7009)', async () => {
    const res = await post('/oauth/revoke', { token: 'wks_rt_unknown', client_id: 'x' });
    expect(res.status).toBe(200);
  });
});
