// Real OAuth clients end to end against a running service: the official MCP TypeScript SDK client
// with an OAuth client provider (once identified by a Client ID Metadata Document this test serves
// over https on loopback, once registered by DCR), and mcp-remote. The test plays the person: it
// signs in with a sign-in link and approves the consent screen over HTTP with the CSRF token.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serviceClient, type ServiceClient } from './support/app.js';
import { createOrg, createWorkspace } from './support/factories.js';
import {
  approve,
  callbackServer,
  MemoryOAuthProvider,
  Redirect,
  selfSignedCertificate,
  serveDocuments,
  Trickle,
  type Browser,
} from './support/oauthClient.js';
import { spawnService, type ServiceProcess } from './support/processes.js';
import { signIn as signInAs } from './support/signIn.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'wks-oauth-clients-'));
const admin = `adm_oauth_${Date.now()}_0123456789abcdef`;
const tls = selfSignedCertificate();
let service: ServiceProcess;
let client: ServiceClient;
let browser: Browser;
let workspaceId: string;
let organizationId: string;
/** Every secret the flows handled: none may appear in the service's log. */
const secrets: string[] = [];

beforeAll(async () => {
  service = await spawnService({
    ADMIN_TOKEN: admin,
    LOG_LEVEL: 'debug',
    OAUTH_ACCESS_TOKEN_TTL_S: '5',
    OAUTH_REGISTRATIONS_PER_HOUR: '100000',
    // Fetch budgets are counted per address across processes on a shared database: this file's must not meet other files'.
    OAUTH_METADATA_FETCHES_PER_ADDRESS: '100000',
    OAUTH_METADATA_FETCHES_PER_MINUTE: '100000',
    // The service trusts the test's self-signed certificate, as it would a public one.
    NODE_EXTRA_CA_CERTS: tls.certFile,
    ...(process.env.DATABASE_URL ? {} : { DATA_DIR: join(dir, 'data') }),
  });
  client = await serviceClient(service.url, admin);
  const org = await createOrg(client);
  organizationId = org.id;
  workspaceId = (await createWorkspace(client, org.id)).id;
  const email = `oauth-clients-${Date.now()}@example.com`;
  const created = await client.gql('mutation($input: CreateMemberInput!) { createMember(input: $input) { id } }', {
    input: { organizationId: org.id, email, role: 'editor' },
  });
  expect(created.errors).toBeUndefined();
  browser = await signInAs(service.url, admin, email);
  secrets.push(browser.cookie.split('=').slice(1).join('='));
}, 120_000);

afterAll(async () => {
  await service?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Connects the SDK client through the OAuth flow: 401, discovery, registration, the person's consent, tokens; then a connected client. */
async function connectWithOAuth(provider: MemoryOAuthProvider, callback: { next(): Promise<URL> }): Promise<Client> {
  const mcpUrl = new URL(`${service.url}/mcp`);
  const first = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
  await expect(new Client({ name: 'oauth-test', version: '1.0.0' }).connect(first)).rejects.toBeInstanceOf(UnauthorizedError);
  const asked = provider.authorizationUrl!;
  expect(asked.origin + asked.pathname).toBe(`${service.url}/oauth/authorize`);
  expect(asked.searchParams.get('code_challenge_method')).toBe('S256');
  expect(asked.searchParams.get('resource')).toBe(`${service.url}/mcp`);
  const arrived = callback.next();
  const back = await approve(service.url, asked, browser);
  await fetch(back); // the browser follows the redirect to the client's callback
  const received = await arrived;
  expect(received.searchParams.get('state')).toBe(asked.searchParams.get('state'));
  expect(received.searchParams.get('iss')).toBe(service.url);
  const code = received.searchParams.get('code')!;
  secrets.push(code);
  await first.finishAuth(code);
  const tokens = provider.tokens()!;
  secrets.push(tokens.access_token, tokens.refresh_token!);
  const connected = new Client({ name: 'oauth-test', version: '1.0.0' });
  await connected.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }));
  return connected;
}

async function useTools(connected: Client, path: string): Promise<string[]> {
  const names = (await connected.listTools()).tools.map((t) => t.name);
  const put = await connected.callTool({
    name: 'memory_put_note',
    arguments: { path, body: 'Written by an OAuth client.', kind: 'note', links: [], tags: [] },
  });
  expect(put.isError).toBeFalsy();
  const got = await connected.callTool({ name: 'memory_get_note', arguments: { path } });
  expect((got.structuredContent as { body: string; workspaceId: string }).workspaceId).toBe(workspaceId);
  return names;
}

describe('the MCP TypeScript SDK client with an OAuth client provider', () => {
  it('identified by a Client ID Metadata Document served on loopback (fetched once, then cached)', async () => {
    const callback = await callbackServer();
    const documents = new Map<string, unknown>();
    const served = await serveDocuments(tls, documents);
    const clientId = `${served.origin}/oauth/client.json`;
    const metadata = {
      client_id: clientId,
      client_name: 'Loopback Test Agent',
      redirect_uris: [callback.url],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
    documents.set('/oauth/client.json', metadata);
    try {
      const provider = new MemoryOAuthProvider(callback.url, metadata, clientId);
      const connected = await connectWithOAuth(provider, callback);
      expect(provider.authorizationUrl!.searchParams.get('client_id')).toBe(clientId);
      const names = await useTools(connected, 'oauth/cimd');
      // An editor's grant: no section creation, no publishing.
      expect(names).toContain('memory_put_note');
      expect(names).not.toContain('sections_create');
      expect(names).not.toContain('openapi_attach');
      await connected.close();
      // A second authorization of the same client reads the cached document.
      const again = new MemoryOAuthProvider(callback.url, metadata, clientId);
      await (await connectWithOAuth(again, callback)).close();
      expect(served.hits.get('/oauth/client.json')).toBe(1);
    } finally {
      served.server.close();
      callback.server.close();
    }
  }, 60_000);

  it('registered by Dynamic Client Registration, with a refresh on the way', async () => {
    const callback = await callbackServer();
    try {
      const provider = new MemoryOAuthProvider(callback.url, {
        client_name: 'DCR Test Agent',
        redirect_uris: [callback.url],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
      });
      const connected = await connectWithOAuth(provider, callback);
      expect(provider.clientInformation()!.client_id).toMatch(/^wks_client_/);
      await useTools(connected, 'oauth/dcr');
      // The access token lives 5 s here: once it has expired the SDK refreshes (rotating the refresh token) and goes on.
      const before = provider.tokens()!;
      await new Promise((resolve) => setTimeout(resolve, 5500));
      expect((await connected.callTool({ name: 'memory_get_note', arguments: { path: 'oauth/dcr' } })).isError).toBeFalsy();
      const after = provider.tokens()!;
      expect(after.refresh_token).not.toBe(before.refresh_token);
      secrets.push(after.access_token, after.refresh_token!);
      await connected.close();
      const grants = await client.gql('query($org: ID) { oauthGrants(organizationId: $org) { clientName scopes } }', {
        org: organizationId,
      });
      expect(grants.data.oauthGrants.map((g: { clientName: string }) => g.clientName)).toContain('DCR Test Agent');
    } finally {
      callback.server.close();
    }
  }, 60_000);
});

describe('Client ID Metadata Documents the service refuses', () => {
  it('a document naming another client_id, too large, asking for a secret, redirecting, not JSON or missing: an error page, no redirect followed', async () => {
    const documents = new Map<string, unknown>();
    const served = await serveDocuments(tls, documents);
    const doc = (path: string, extra: Record<string, unknown> = {}) => ({
      client_id: `${served.origin}${path}`,
      client_name: 'Refused',
      redirect_uris: ['http://127.0.0.1:9/cb'],
      ...extra,
    });
    documents.set('/other.json', doc('/other.json', { client_id: `${served.origin}/elsewhere.json` }));
    documents.set('/large.json', doc('/large.json', { padding: 'x'.repeat(20_000) }));
    documents.set('/secret.json', doc('/secret.json', { token_endpoint_auth_method: 'private_key_jwt' }));
    documents.set('/text.json', 'not json');
    // A valid document for /moved.json, served elsewhere: it would be accepted if the redirect were followed.
    documents.set('/moved.json', new Redirect('/target.json'));
    documents.set('/target.json', doc('/moved.json'));
    const cases: [string, string][] = [
      ['/other.json', 'client_id is not the URL it was fetched from'],
      ['/large.json', 'larger than 16384 bytes'],
      ['/secret.json', 'token_endpoint_auth_method must be "none"'],
      ['/moved.json', 'could not be fetched: it answered HTTP 302: redirects are not followed'],
      ['/text.json', 'is not JSON'],
      ['/missing.json', 'answered HTTP 404'],
    ];
    try {
      for (const [path, why] of cases) {
        const res = await authorizeWithDocument(`${served.origin}${path}`);
        expect(res.status, path).toBe(400);
        expect(res.headers.get('location')).toBeNull();
        expect(await res.text()).toContain(why.replace(/"/g, '&quot;'));
      }
      expect(served.hits.get('/moved.json')).toBe(1);
      expect(served.hits.get('/target.json')).toBeUndefined();
    } finally {
      served.server.close();
    }
  });

  it('a document that answers too slowly (a byte at a time, never finishing): refused when the 5 s bound is up', async () => {
    const documents = new Map<string, unknown>([['/slow.json', new Trickle()]]);
    const served = await serveDocuments(tls, documents);
    try {
      const started = Date.now();
      const res = await authorizeWithDocument(`${served.origin}/slow.json`);
      const elapsed = Date.now() - started;
      expect(res.status).toBe(400);
      expect(res.headers.get('location')).toBeNull();
      expect(await res.text()).toContain('could not be fetched: no complete answer within 5000 ms');
      expect(elapsed).toBeGreaterThanOrEqual(4900);
      expect(elapsed).toBeLessThan(10_000);
      expect(served.hits.get('/slow.json')).toBe(1);
    } finally {
      served.server.closeAllConnections();
      served.server.close();
    }
  }, 20_000);
});

/** Opens the authorization endpoint, signed in, for a client identified by the metadata document at `clientId`. */
function authorizeWithDocument(clientId: string): Promise<Response> {
  const params = new URLSearchParams({ client_id: clientId, redirect_uri: 'http://127.0.0.1:9/cb', response_type: 'code' });
  return fetch(`${service.url}/oauth/authorize?${params}`, { redirect: 'manual', headers: { cookie: browser.cookie } });
}

describe('mcp-remote', () => {
  it('connects the same way: it registers, prints the authorization URL, and gets the code on its callback port', async () => {
    const config = mkdtempSync(join(tmpdir(), 'wks-mcp-remote-'));
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    const transport = new StdioClientTransport({
      command: join(ROOT, 'node_modules/.bin/mcp-remote'),
      args: [`${service.url}/mcp`, String(port), '--allow-http'],
      env: { ...(process.env as Record<string, string>), MCP_REMOTE_CONFIG_DIR: config, BROWSER: 'true', DISPLAY: '' },
      stderr: 'pipe',
    });
    let output = '';
    const authorizationUrl = new Promise<string>((resolve) => {
      transport.stderr!.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        const match = /Please authorize this client by visiting:\s*(\S+)/.exec(output);
        if (match) resolve(match[1]);
      });
    });
    const remote = new Client({ name: 'via-mcp-remote', version: '1.0.0' });
    const connecting = remote.connect(transport);
    try {
      const url = await Promise.race([
        authorizationUrl,
        new Promise<string>((_, reject) => setTimeout(() => reject(new Error(`no authorization URL:\n${output}`)), 30_000)),
      ]);
      expect(new URL(url).searchParams.get('client_id')).toMatch(/^wks_client_/);
      const back = await approve(service.url, url, browser);
      secrets.push(back.searchParams.get('code')!);
      expect(back.host).toMatch(/^(localhost|127\.0\.0\.1):\d+$/);
      await fetch(back);
      await connecting;
      const names = (await remote.listTools()).tools.map((t) => t.name);
      expect(names).toContain('memory_get_note');
      const got = await remote.callTool({ name: 'memory_get_note', arguments: { path: 'oauth/dcr' } });
      expect(got.isError).toBeFalsy();
    } finally {
      await remote.close().catch(() => undefined);
      rmSync(config, { recursive: true, force: true });
    }
  }, 90_000);
});

describe('the start', () => {
  it('warns that PUBLIC_URL is unset while the service listens on every interface (the issuer follows the Host header)', () => {
    // The warning comes before the service listens: the whole output since the start is read, not only what came later.
    expect(service.output()).toMatch(/"level":40,[^\n]*"msg":"PUBLIC_URL is not set: the OAuth issuer/);
  });
});

describe('secrets stay out of logs and URLs', () => {
  it('no code, token or cookie appears in any log line of the service (request lines at debug level included)', () => {
    const log = service.output(); // debug level: one line per request, with its URL and headers
    expect(log).toContain('"msg":"request"'); // debug request lines were written
    expect(log).toContain('/oauth/token');
    expect(secrets.length).toBeGreaterThan(6);
    for (const secret of secrets) expect(log.includes(secret), `a secret (${secret.slice(0, 10)}…) reached the log`).toBe(false);
    expect(log).not.toMatch(/wks_(at|rt|ac)_/);
  });
});
