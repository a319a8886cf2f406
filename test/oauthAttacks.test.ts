// The OAuth doors as an attacker tries them: the outbound fetch of a Client ID Metadata Document
// used as a network probe, open redirects through the authorization endpoint, anonymous requests
// that make the service fetch and store, and metadata whose issuer comes from the Host header.
import { randomBytes, randomInt } from 'node:crypto';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshEm } from '../src/db/orm.js';
import { sql } from '../src/db/sql.js';
import { publicUrlWarning } from '../src/identity/resources.js';
import { DEFAULT_OAUTH_SETTINGS } from '../src/identity/oauthSettings.js';
import { startTestApp, type TestApp } from './support/app.js';
import { createOrg, createWorkspace } from './support/factories.js';
import { backLink, getFrom, loopbackAddress } from './support/oauthClient.js';
import { rawRequest } from './support/raw.js';
import { signIn, type SignedInPerson } from './support/signIn.js';

let app: TestApp;
/** A signed-in editor (the consent step's person). */
let person: SignedInPerson;
beforeAll(async () => {
  // Budgets out of the way here (they are counted per address across the processes of a shared database); one test sets its own.
  const metadataFetches = { perAddress: 100_000, perService: 100_000, windowSeconds: 60 };
  app = await startTestApp({ outboundAllowLoopback: true, oauth: { registrationsPerHour: 100_000, metadataFetches } });
  const org = await createOrg(app);
  await createWorkspace(app, org.id);
  const email = `attacks-${randomBytes(4).toString('hex')}@example.com`;
  const created = await app.gql('mutation($input: CreateMemberInput!) { createMember(input: $input) { id } }', {
    input: { organizationId: org.id, email, role: 'editor' },
  });
  expect(created.errors).toBeUndefined();
  person = await signIn(app.url, app.adminToken, email);
});
afterAll(async () => app?.close());

const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

/** An authorization request's URL for `clientId`, with every other parameter valid unless overridden. */
function authorizeUrl(clientId: string, extra: Record<string, string> = {}): string {
  const params = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: 'http://127.0.0.1:9/cb',
    code_challenge: CHALLENGE,
    code_challenge_method: 'S256',
    state: 'st-1',
    ...extra,
  });
  return `${app.url}/oauth/authorize?${params}`;
}

/** GETs the authorization endpoint as the signed-in person's browser (or anonymously), not following redirects. */
function authorize(url: string, browser: SignedInPerson | null = person): Promise<Response> {
  return fetch(url, { redirect: 'manual', headers: browser ? { cookie: browser.cookie } : {} });
}

/** A loopback port nothing listens on (a server is opened there and closed again). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('the outbound fetch of a metadata document is no network probe', () => {
  it('refuses IPv4-compatible IPv6 addresses (::7f00:1 is 127.0.0.1) like every other internal address', async () => {
    for (const clientId of ['https://[::7f00:1]:9/client.json', 'https://[::a00:1]/client.json', 'https://[::]/client.json']) {
      const res = await authorize(authorizeUrl(clientId));
      expect(res.status, clientId).toBe(400);
      expect(res.headers.get('location')).toBeNull();
      expect(await res.text(), clientId).toContain('the address is not allowed');
    }
  });

  it('a name that does not resolve, or an address that refuses: one fixed sentence, never the socket error or the address', async () => {
    const port = await closedPort();
    for (const clientId of [`https://127.0.0.1:${port}/client.json`, `https://wks-${randomBytes(4).toString('hex')}.invalid/client.json`]) {
      const res = await authorize(authorizeUrl(clientId));
      expect(res.status, clientId).toBe(400);
      const html = await res.text();
      expect(html, clientId).toContain('could not be fetched: the connection failed');
      expect(html, clientId).not.toMatch(/E[A-Z]{4,}|getaddrinfo|127\.0\.0\.1|\.invalid|connect /);
    }
  });
});

describe('metadata whose issuer comes from the Host header', () => {
  it('without PUBLIC_URL the documents follow the Host header, so no shared cache may keep them (no-store, Vary: Host)', async () => {
    for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/oauth-protected-resource/mcp']) {
      const res = await rawRequest(app.url, 'GET', path, { headers: { host: 'evil.example' } });
      expect(res.status).toBe(200);
      expect(JSON.stringify(res.body)).toContain('http://evil.example');
      expect(res.headers['cache-control'], path).toBe('no-store');
      expect(String(res.headers.vary), path).toMatch(/\bHost\b/i);
    }
  });

  it('with PUBLIC_URL they name it whatever the Host, and may be cached publicly', async () => {
    const named = await startTestApp({ publicUrl: 'https://docs.example.com' });
    try {
      const res = await rawRequest(named.url, 'GET', '/.well-known/oauth-authorization-server', { headers: { host: 'evil.example' } });
      expect(res.body.issuer).toBe('https://docs.example.com');
      expect(res.headers['cache-control']).toBe('public, max-age=300');
    } finally {
      await named.close();
    }
  });

  it('the start warns when PUBLIC_URL is unset and the service listens beyond loopback', () => {
    expect(publicUrlWarning(undefined, '0.0.0.0')).toMatch(/^PUBLIC_URL is not set/);
    expect(publicUrlWarning(undefined, '127.0.0.1')).toBeNull();
    expect(publicUrlWarning('https://docs.example.com', '0.0.0.0')).toBeNull();
  });
});

/** Registers a client (DCR) and answers the response: 201 with its client_id, or the refusal. */
async function register(redirectUris: string[], name = 'Attacker app') {
  const res = await fetch(`${app.url}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: name, redirect_uris: redirectUris }),
  });
  return { status: res.status, body: (await res.json()) as { client_id?: string; error?: string; error_description?: string } };
}

describe('no open redirect through the authorization endpoint', () => {
  const ATTACKER = 'https://attacker.example/landing';
  /** Every way a request can be wrong once its client and redirect URI are established. */
  const BAD: Record<string, string>[] = [
    { response_type: 'x' },
    { response_type: 'token' },
    { code_challenge_method: 'plain' },
    { code_challenge: 'short' },
    { scope: 'memory.read admin' },
    { resource: 'https://evil.example/mcp' },
  ];

  it("an anonymous request with the attacker's own client and a bad parameter is refused on the service's page, never sent to the client", async () => {
    const { body } = await register([ATTACKER]);
    for (const bad of BAD) {
      const res = await authorize(authorizeUrl(body.client_id!, { redirect_uri: ATTACKER, ...bad }), null);
      expect(res.status, JSON.stringify(bad)).toBe(400);
      expect(res.headers.get('location')).toBeNull();
      const html = await res.text();
      expect(html).toContain('This request cannot be authorized');
      // Nor a link there: a person who has not signed in has not seen who the client is.
      expect(backLink(html), JSON.stringify(bad)).toBeNull();
      expect(html).not.toContain('attacker.example');
    }
  });

  it('a signed-in person sees the refusal on a page that names the client and where its link leads; only their click goes there', async () => {
    const { body } = await register([ATTACKER], 'Totally Legit');
    for (const bad of BAD) {
      const res = await authorize(authorizeUrl(body.client_id!, { redirect_uri: ATTACKER, ...bad }));
      expect(res.status, JSON.stringify(bad)).toBe(400);
      expect(res.headers.get('location')).toBeNull();
      const html = await res.text();
      expect(html).toContain('<b>Totally Legit</b> <span class="warn">(registered itself; this name is not verified)</span>');
      expect(html).toContain('<code>attacker.example</code>');
      expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'"); // its link cannot be clickjacked
      const back = backLink(html)!;
      expect(back.origin + back.pathname).toBe(ATTACKER);
      expect(back.searchParams.get('state')).toBe('st-1');
      expect(back.searchParams.get('iss')).toBe(app.url);
      expect(back.searchParams.get('error')).toMatch(/^(unsupported_response_type|invalid_request|invalid_scope|invalid_target)$/);
    }
  });

  it('refuses redirect URIs of one-word schemes that open anything on the device (RFC 8252 §7.1: reverse-domain only)', async () => {
    for (const uri of [
      'ms-msdt:/id PCWDiagnostic /skip force',
      'search-ms:query=x',
      'chrome://settings',
      'view-source:https://a.example/',
      'myapp://cb',
    ]) {
      const res = await register([uri]);
      expect(res.status, uri).toBe(400);
      expect(res.body.error).toBe('invalid_redirect_uri');
      expect(res.body.error_description).toContain('reverse-domain private scheme');
    }
    for (const uri of ['com.example.app:/oauth/callback', 'cursor://anysphere.cursor-mcp/oauth/callback'])
      expect((await register([uri])).status, uri).toBe(201);
  });

  it('a client stored before the rule with such a redirect URI is refused on a page, not followed', async () => {
    const { body } = await register(['com.example.app:/cb']);
    // A registration made under the old rules (when ms-msdt: was accepted).
    await sql(freshEm(app.server.orm), `update oauth_clients set redirect_uris = array['ms-msdt:/id x'] where id = ?`, [body.client_id]);
    const res = await authorize(authorizeUrl(body.client_id!, { redirect_uri: 'ms-msdt:/id x', response_type: 'x' }));
    expect(res.status).toBe(400);
    expect(res.headers.get('location')).toBeNull();
    const html = await res.text();
    expect(html).toContain('the ms-msdt: scheme is not allowed');
    expect(backLink(html)).toBeNull();
  });
});

/** A TLS-less listener on loopback that counts connections (each outbound fetch of a document opens one, then fails). */
async function countingListener(): Promise<{ origin: string; connections(): number; close(): void }> {
  let count = 0;
  const server = createServer((socket) => {
    count++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { origin: `https://127.0.0.1:${port}`, connections: () => count, close: () => server.close() };
}

describe('no anonymous amplification: what a metadata-document client_id may make the service fetch and store', () => {
  it('an anonymous authorization request fetches nothing (each new URL goes to sign in), nor does the token endpoint for a code it never issued', async () => {
    const listener = await countingListener();
    try {
      for (let i = 0; i < 25; i++) {
        const res = await authorize(authorizeUrl(`${listener.origin}/client-${i}.json?n=${i}`), null);
        expect(res.status).toBe(302);
        expect(new URL(res.headers.get('location')!, app.url).pathname).toBe('/console/sign-in');
      }
      const token = await fetch(`${app.url}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          client_id: `${listener.origin}/token.json`,
          code: 'wks_ac_never-issued',
          code_verifier: 'x'.repeat(43),
          redirect_uri: 'http://127.0.0.1:9/cb',
        }),
      });
      expect(token.status).toBe(400);
      expect(((await token.json()) as { error: string }).error).toBe('invalid_grant');
      expect(listener.connections()).toBe(0);
      const [{ n }] = await sql<{ n: number }>(freshEm(app.server.orm), 'select count(*)::int as n from oauth_clients where id like ?', [
        `${listener.origin}/%`,
      ]);
      expect(n).toBe(0);
    } finally {
      listener.close();
    }
  });

  it('a failed fetch is remembered: the same document asked for again is refused without a fetch', async () => {
    const listener = await countingListener();
    try {
      const url = authorizeUrl(`${listener.origin}/failing.json`);
      const first = await authorize(url);
      expect(first.status).toBe(400);
      expect(await first.text()).toContain('could not be fetched: the connection failed');
      for (let i = 0; i < 3; i++) {
        const again = await authorize(url);
        expect(again.status).toBe(400);
        expect(await again.text()).toMatch(/the connection failed .*\(this answer is kept; the document is fetched again in \d+ s\)/);
      }
      expect(listener.connections()).toBe(1);
    } finally {
      listener.close();
    }
  });

  it('fetches are bounded per client address and for the whole service (429 with Retry-After past either)', async () => {
    // A window of its own length (about an hour): its counters start at zero, and no window ends during the test.
    const metadataFetches = { perAddress: 3, perService: 5, windowSeconds: 3000 + randomInt(0, 1000) };
    const budgeted = await startTestApp({ outboundAllowLoopback: true, oauth: { ...DEFAULT_OAUTH_SETTINGS, metadataFetches } });
    const listener = await countingListener();
    try {
      const org = await createOrg(budgeted);
      await createWorkspace(budgeted, org.id);
      const email = `budget-${randomBytes(4).toString('hex')}@example.com`;
      await budgeted.gql('mutation($input: CreateMemberInput!) { createMember(input: $input) { id } }', {
        input: { organizationId: org.id, email, role: 'editor' },
      });
      const { cookie } = await signIn(budgeted.url, budgeted.adminToken, email);
      let n = 0;
      const attempt = (from: string) => {
        const url = `${budgeted.url}/oauth/authorize?${new URLSearchParams({ client_id: `${listener.origin}/doc-${n++}.json` })}`;
        return getFrom(url, from, { cookie });
      };
      const first = loopbackAddress();
      const answers = [];
      for (let i = 0; i < 5; i++) answers.push(await attempt(first));
      expect(answers.map((a) => a.status)).toEqual([400, 400, 400, 429, 429]);
      expect(listener.connections()).toBe(3);
      expect(answers[3].text).toContain('Too many client metadata documents fetched from this address');
      expect(Number(answers[3].headers['retry-after'])).toBeGreaterThan(0);
      // Another address has its own budget, until the service's is spent (5 in all).
      const second = loopbackAddress();
      const more = [await attempt(second), await attempt(second), await attempt(second)];
      expect(more.map((a) => a.status)).toEqual([400, 400, 429]);
      expect(more[2].text).toContain('Too many client metadata documents fetched by this service');
      expect(listener.connections()).toBe(5);
    } finally {
      listener.close();
      await budgeted.close();
    }
  });

  it('fetched documents that no grant used are deleted once they expire, like unused registrations', async () => {
    const db = freshEm(app.server.orm);
    const id = (name: string) => `https://clients.example/${name}-${randomBytes(4).toString('hex')}.json`;
    const [stale, used, fresh] = [id('stale'), id('used'), id('fresh')];
    const insert = (clientId: string, expires: string, lastUsed: string | null) =>
      sql(
        db,
        `insert into oauth_clients (id, kind, name, redirect_uris, metadata, refresh_after, expires_at, last_used_at)
         values (?, 'metadata', 'x', array['https://a.example/cb'], '{}'::jsonb, now(), now() + ?::interval, now() + ?::interval)`,
        [clientId, expires, lastUsed],
      );
    await insert(stale, '-1 minute', null);
    await insert(used, '-1 minute', '-2 minutes');
    await insert(fresh, '1 hour', null);
    // Each registration (and each fetch) deletes the clients past their expiry on the way.
    expect((await register(['https://a.example/cb'], 'Trigger')).status).toBe(201);
    const left = await sql<{ id: string }>(db, 'select id from oauth_clients where id in (?, ?, ?) order by id', [stale, used, fresh]);
    expect(left.map((r) => r.id).sort()).toEqual([used, fresh].sort());
  });
});
