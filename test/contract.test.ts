import { readFileSync } from 'node:fs';
import { printSchema } from 'graphql';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROUTES } from '../rest/routes/index.js';
import { buildAppSchema } from '../src/schema.js';
import { startTestApp, type TestApp } from './support/app.js';
import { OpenApiChecker } from './support/openapiCheck.js';
import { tenant } from './support/factories.js';

let app: TestApp;
let doc: any;
beforeAll(async () => {
  app = await startTestApp();
  const res = await fetch(`${app.url}/api/v1/openapi.json`);
  expect(res.status).toBe(200);
  doc = await res.json();
});
afterAll(async () => app?.close());

describe('served OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document, served without auth', async () => {
    expect(doc.openapi).toBe('3.1.0');
    const result = await new Validator().validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('lists every route of the table, with its declared error statuses and the envelope schema', () => {
    for (const route of ROUTES) {
      const op = doc.paths[route.path]?.[route.method.toLowerCase()];
      expect(op, `${route.method} ${route.path}`).toBeDefined();
      expect(op.operationId).toBe(route.name);
      // 414 and 431 too: a URL over 8 KiB or headers over 16 KiB are refused before any route, on every endpoint.
      for (const status of ['400', '401', '403', '404', '414', '429', '431', '500'])
        expect(op.responses[status], `${route.name} ${status}`).toBeDefined();
      expect(op.responses[String(route.status)].content['application/json'].schema).toBeDefined();
    }
    const count = Object.values(doc.paths).reduce((n: number, ops: any) => n + Object.keys(ops).length, 0);
    expect(count).toBe(ROUTES.length);
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.components.schemas.Error.properties.error.required).toEqual(['code', 'message', 'status', 'details']);
  });

  it('documents the changelog entry exactly as the API names its fields', () => {
    const schema = doc.paths['/workspaces/{workspace}/changelog'].post.responses['201'].content['application/json'].schema;
    expect(Object.keys(schema.properties).sort()).toEqual([
      'author',
      'createdAt',
      'id',
      'markdown',
      'publishedAt',
      'status',
      'tags',
      'title',
      'updatedAt',
    ]);
    expect(schema.required.sort()).toEqual(['author', 'createdAt', 'id', 'markdown', 'status', 'tags', 'title', 'updatedAt']);
    expect(schema.properties.id.type).toBe('integer');
    const body = doc.paths['/workspaces/{workspace}/changelog'].post.requestBody.content['application/json'].schema;
    expect(body.required.sort()).toEqual(['markdown', 'published_at', 'status', 'tags', 'title']);
  });

  it('is enforced by the test client: undeclared statuses and undocumented fields fail', () => {
    const checker = new OpenApiChecker(doc);
    const url = '/api/v1/workspaces/-/changelog';
    expect(() => checker.check('GET', url, 200, 'application/json', [])).not.toThrow();
    expect(() => checker.check('GET', url, 418, 'application/json', {})).toThrow(/not declared/);
    expect(() => checker.check('GET', url, 200, 'application/json', [{ id: 1 }])).toThrow(/does not match/);
    expect(() =>
      checker.check('GET', url, 404, 'application/json', { error: { code: 'x', message: 'y', status: 404, details: null, extra: 1 } }),
    ).toThrow(/does not match/);
  });
});

describe('GraphQL schema and endpoint', () => {
  it('matches the committed SDL (run `npm run schema:emit` after changing resolvers)', async () => {
    const committed = readFileSync(new URL('../schema/schema.graphql', import.meta.url), 'utf8');
    expect(committed).toBe(`${printSchema(await buildAppSchema())}\n`);
  });

  it('serves the explorer on a browser’s GET: GraphiQL by default (test/explorer.test.ts has the rest)', async () => {
    const res = await fetch(`${app.url}/graphql`, { headers: { accept: 'text/html' } });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('<title>GraphiQL');
  });

  it('echoes X-Request-Id and records it on audit events', async () => {
    const t = await tenant(app);
    const res = await app.api('POST', '/api/v1/workspaces/-/changelog', {
      key: t.key,
      headers: { 'x-request-id': 'req-abc-123' },
      body: { title: 't', markdown: 'm', status: 'draft', tags: [], published_at: null },
    });
    expect(res.headers.get('x-request-id')).toBe('req-abc-123');
    const events = await app.gql(
      'query($w: ID!) { auditEvents(workspaceId: $w, limit: 1) { action requestId agentKeyId memberId targetType targetId } }',
      { w: t.workspace.id },
    );
    expect(events.data.auditEvents[0]).toEqual({
      action: 'changelog.created',
      requestId: 'req-abc-123',
      agentKeyId: t.keyId,
      memberId: t.member.id,
      targetType: 'changelog_entry',
      targetId: String(res.body.id),
    });
  });
});

describe('unknown routes', () => {
  it('answer a 404 envelope, and a known path with the wrong method a 405 with Allow', async () => {
    const t = await tenant(app);
    const missing = await app.api('GET', '/api/v1/nothing-here', { key: t.key });
    expect(missing.status).toBe(404);
    expect(missing.body.error).toMatchObject({ code: 'not_found', status: 404 });
    const wrong = await app.api('PUT', '/api/v1/workspaces/-/changelog', { key: t.key });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('GET, POST');
    expect(wrong.body.error.status).toBe(405);
  });

  it('match a route as the router does: HEAD by its GET, path parameters percent-decoded, a broken escape kept as sent', async () => {
    const t = await tenant(app);
    const put = await app.api('PUT', '/api/v1/workspaces/-/memory/note', {
      key: t.key,
      body: { path: 'routing/head', body: 'Routed.', kind: 'note', links: [], tags: [] },
    });
    expect(put.status).toBe(200);
    const auth = { authorization: `Bearer ${t.key}` };
    const get = await fetch(`${app.url}/api/v1/workspaces/-/memory/note?path=routing/head`, { headers: auth });
    expect(get.status).toBe(200);
    const head = await fetch(`${app.url}/api/v1/workspaces/-/memory/note?path=routing/head`, { method: 'HEAD', headers: auth });
    expect(head.status).toBe(200);
    expect(head.headers.get('etag')).toBe(get.headers.get('etag'));
    expect(await head.text()).toBe('');
    // "%2D" is "-", the key's own workspace: decoded before the route's parameter is checked.
    const encoded = await app.api('GET', '/api/v1/workspaces/%2D/memory/note?path=routing/head', { key: t.key });
    expect(encoded.status).toBe(200);
    expect(encoded.body).toMatchObject({ path: 'routing/head', body: 'Routed.' });
    // An escape that does not decode stays as sent, and is then a workspace like any unknown one (never a 500).
    const broken = await app.api('GET', '/api/v1/workspaces/%E0%A4%A/memory/note?path=routing/head', { key: t.key });
    expect(broken.status).toBe(404);
    expect(broken.body.error).toMatchObject({ code: 'not_found', message: 'Workspace was not found.' });
  });
});
