import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { tenant } from './support/factories.js';

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
    logger: pino({ level: 'debug', redact: ['req.headers.authorization', '*.authorization', '*.key'] }, sink),
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

  it('refuses an over-long URL with 414 and oversized headers with 431', async () => {
    const t = await tenant(app);
    const long = await fetch(`${app.url}/api/v1/workspaces/-/memory/note?path=${'a'.repeat(9000)}`, {
      headers: { authorization: `Bearer ${t.key}` },
    });
    expect(long.status).toBe(414);
    expect((await long.json()).error.status).toBe(414);
    const big = await fetch(`${app.url}/api/v1/workspaces/-/changelog`, {
      headers: { authorization: `Bearer ${t.key}`, 'x-junk': 'x'.repeat(20_000) },
    }).catch(() => null);
    expect(big === null || big.status === 431).toBe(true);
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

  it('never logs keys or Authorization headers', async () => {
    const t = await tenant(app);
    await fetch(`${app.url}/api/v1/workspaces/-/changelog`, { headers: { authorization: `Bearer ${t.key}` } });
    await fetch(`${app.url}/api/v1/workspaces/-/memory/note`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
      body: '{"broken',
    });
    const all = lines.join('');
    expect(all).not.toContain(t.key);
    expect(all).not.toContain(app.adminToken);
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
});
