import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { failingEmbedder } from './support/embedders.js';
import { tenant } from './support/factories.js';
import { rawExchange } from './support/raw.js';
import { testLogger } from './support/internalErrors.js';

const EMBEDDER_SECRET = 'embedder-secret-c41e';
const lines: string[] = [];
let app: TestApp;
beforeAll(async () => {
  const sink = new Writable({
    write(chunk, _e, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  app = await startTestApp({
    // The product's own logger (its redaction), at debug level so every request is logged too.
    logger: testLogger({ level: 'debug', destination: sink }),
    embedder: failingEmbedder(EMBEDDER_SECRET),
    corsOrigins: ['https://dash.example.com'],
  });
});
afterAll(async () => app?.close());

describe('health', () => {
  it('answers /healthz and /readyz', async () => {
    expect(await (await fetch(`${app.url}/healthz`)).json()).toEqual({
      status: 'ok',
      uptimeSeconds: expect.any(Number),
      rssBytes: expect.any(Number),
      heapUsedBytes: expect.any(Number),
    });
    const ready = await fetch(`${app.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready', database: 'ok', migrations: 'applied' });
  });
});

describe('HTTP limits and headers', () => {
  it('sets security headers and echoes X-Request-Id', async () => {
    const res = await fetch(`${app.url}/api/v1/openapi.json`);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('x-frame-options')).toBe('SAMEORIGIN');
    expect(res.headers.get('strict-transport-security')).toBeTruthy();
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('refuses an over-long URL with 414', async () => {
    const t = await tenant(app);
    const long = await fetch(`${app.url}/api/v1/workspaces/-/memory/note?path=${'a'.repeat(9000)}`, {
      headers: { authorization: `Bearer ${t.key}` },
    });
    expect(long.status).toBe(414);
    expect((await long.json()).error.status).toBe(414);
  });

  it('answers headers over 16 KiB with a 431 envelope, or resets that connection (nothing else)', async () => {
    const t = await tenant(app);
    const head = `GET /api/v1/workspaces/-/changelog HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t.key}\r\nX-Junk: ${'x'.repeat(20_000)}\r\n\r\n`;
    const { received, error } = await rawExchange(app.url, head);
    if (error) {
      // The server may close while the client still writes: a reset, with no other answer.
      expect(error.code).toBe('ECONNRESET');
      expect(received === '' || received.startsWith('HTTP/1.1 431 ')).toBe(true);
    } else {
      expect(received).toMatch(/^HTTP\/1\.1 431 /);
      const body = JSON.parse(received.slice(received.indexOf('\r\n\r\n') + 4));
      expect(body.error).toMatchObject({ code: 'headers_too_large', status: 431 });
    }
    // Headers just under the limit are served: the refusal above is about size, not the header.
    const fine = await app.api('GET', '/api/v1/workspaces/-/changelog', { key: t.key, headers: { 'x-junk': 'x'.repeat(8_000) } });
    expect(fine.status).toBe(200);
  });

  it('allows CORS only for configured origins on the API, any origin on public documents', async () => {
    const allowed = await fetch(`${app.url}/api/v1/workspaces/-/changelog`, {
      method: 'OPTIONS',
      headers: { origin: 'https://dash.example.com', 'access-control-request-method': 'GET' },
    });
    expect(allowed.status).toBe(204);
    expect(allowed.headers.get('access-control-allow-origin')).toBe('https://dash.example.com');
    const other = await fetch(`${app.url}/api/v1/workspaces/-/changelog`, { headers: { origin: 'https://evil.example.com' } });
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
    const doc = await fetch(`${app.url}/api/v1/openapi.json`, { headers: { origin: 'https://evil.example.com' } });
    expect(doc.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('logs each request and an unexpected error at debug level, never a key or an Authorization header', async () => {
    const t = await tenant(app);
    app.expectInternalErrors(1); // the failing embedder's error, logged (without the key) is what this test reads
    const failed = await app.api('GET', '/api/v1/workspaces/-/search?q=keys&semantic=true', { key: t.key });
    expect(failed.status).toBe(500);
    await app.api('PUT', '/api/v1/workspaces/-/memory/note', {
      key: t.key,
      rawBody: '{"broken',
      headers: { 'content-type': 'application/json' },
    });
    const requestId = failed.headers.get('x-request-id');
    const entries = lines.map((line) => JSON.parse(line) as Record<string, any>);
    // The failure is logged with its cause and request id; the request line carries the headers, redacted.
    const error = entries.find((e) => e.requestId === requestId && e.msg === 'request failed');
    expect(error?.err.message).toContain(EMBEDDER_SECRET);
    const request = entries.find((e) => e.requestId === requestId && e.msg === 'request');
    expect(request).toMatchObject({ status: 500, req: { method: 'GET', headers: { authorization: '[Redacted]' } } });
    expect(entries.filter((e) => e.msg === 'request' && e.req.url.startsWith('/graphql')).length).toBeGreaterThan(0);
    const all = lines.join('');
    expect(all).not.toContain(t.key);
    expect(all).not.toContain(t.key.slice(8, 30));
    expect(all).not.toContain(app.adminToken);
  });

  it("never logs a client's state, a code or a token, even nested (percent-encoded, once or twice) in return_to or in the Referer", async () => {
    const secret = (name: string) => `${name}-${Math.random().toString(36).slice(2)}`;
    const [state, code, token, deeper, referred] = ['state', 'code', 'token', 'deeper', 'referred'].map(secret);
    const authorize = `/oauth/authorize?client_id=wks_client_x&state=${state}&code=${code}&redirect_uri=https%3A%2F%2Fa.example%2Fcb`;
    const twice = encodeURIComponent(`/oauth/authorize?access_token=${token}&state=${deeper}`);
    const res = await fetch(
      `${app.url}/console/sign-in?return_to=${encodeURIComponent(authorize)}&next=${encodeURIComponent(`/x?r=${twice}`)}`,
      {
        headers: { referer: `${app.url}/oauth/authorize?client_id=wks_client_x&state=${referred}` },
      },
    );
    expect(res.status).toBe(200);
    const entry = lines
      .map((line) => JSON.parse(line) as Record<string, any>)
      .find((e) => e.msg === 'request' && e.req.url.startsWith('/console/sign-in?return_to='));
    // The line still says where the request went and to which client; only the secrets are gone.
    expect(decodeURIComponent(entry!.req.url)).toContain('client_id=wks_client_x&state=[Redacted]&code=[Redacted]');
    expect(entry!.req.headers.referer).toBe(`${app.url}/oauth/authorize?client_id=wks_client_x&state=[Redacted]`);
    const all = lines.join('');
    for (const value of [state, code, token, deeper, referred]) expect(all).not.toContain(value);
  });
});

describe('GraphQL limits', () => {
  it('refuses deep, alias-heavy and batched queries; introspection stays on', async () => {
    const deep = `{ __schema { types { fields { type { ${'ofType { '.repeat(16)}name${' }'.repeat(16)} } } } } }`;
    const d = await app.gql(deep, {}, null);
    expect(d.errors?.[0].message).toMatch(/depth/i);
    const aliases = `{ ${Array.from({ length: 40 }, (_, i) => `a${i}: sections(workspace: "-") { key }`).join(' ')} }`;
    const a = await app.gql(aliases, {}, null);
    expect(a.errors?.[0].message).toMatch(/alias/i);
    const batch = await fetch(`${app.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify([{ query: '{ __typename }' }, { query: '{ __typename }' }]),
    });
    expect(batch.status).toBe(400);
    const intro = await app.gql('{ __schema { queryType { name } } }', {}, null);
    expect(intro.data.__schema.queryType.name).toBe('Query');
  });

  it("Apollo's own refusals (a GET mutation, a request its CSRF prevention stops) are client errors with codes of their own, never logged as errors", async () => {
    const get = (query: string, headers: Record<string, string> = {}) =>
      fetch(`${app.url}/graphql?query=${encodeURIComponent(query)}`, { headers: { accept: 'application/json', ...headers } });
    const mutation = await get('mutation { __typename }', { 'apollo-require-preflight': 'true' });
    expect(mutation.status).toBe(405);
    expect(mutation.headers.get('allow')).toBe('POST');
    expect(((await mutation.json()) as any).errors).toEqual([
      { message: 'A mutation is sent with POST; GET runs queries only.', extensions: { code: 'method_not_allowed', details: null } },
    ]);
    const csrf = await get('{ __typename }');
    expect(csrf.status).toBe(400);
    const refused = ((await csrf.json()) as any).errors;
    expect(refused).toHaveLength(1);
    expect(refused[0].message).toMatch(/Cross-Site Request Forgery/);
    expect(refused[0].extensions).toEqual({
      code: 'invalid_request',
      details: [{ field: 'apollo-require-preflight', in: 'header', message: expect.stringContaining('content-type') }],
    });
    // The rest of the family: a syntax error, an unknown operation name, a POST that is not JSON or has no body.
    const post = (body: string, contentType = 'application/json') =>
      fetch(`${app.url}/graphql`, { method: 'POST', headers: { 'content-type': contentType }, body });
    const others = [
      await post(JSON.stringify({ query: '{' })),
      await post(JSON.stringify({ query: 'query A { __typename }', operationName: 'Z' })),
      await post(JSON.stringify({ query: '{ __typename }' }), 'text/plain'),
      await post(''),
    ];
    for (const res of others) {
      expect(res.status).toBe(400);
      expect(((await res.json()) as any).errors[0].extensions.code).toBe('invalid_request');
    }
    const ids = [mutation, csrf, ...others].map((res) => res.headers.get('x-request-id'));
    const entries = lines.map((line) => JSON.parse(line) as Record<string, any>);
    // Neither is an error of the server: no error line (level 50) is written for them, and no stack.
    expect(entries.filter((e) => e.level >= 50 && e.msg === 'graphql resolver failed' && /POST|CSRF/.test(e.err?.message ?? ''))).toEqual(
      [],
    );
    for (const id of ids) expect(entries.filter((e) => e.requestId === id && e.level >= 50)).toEqual([]);
  });
});
