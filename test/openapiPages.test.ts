import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { stringify as toYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { createKey, tenant, type Tenant } from './support/factories.js';

let app: TestApp;
let specServer: Server;
let specUrl: string;
const served: { body: string; status: number; hits: string[] } = { body: '{}', status: 200, hits: [] };

beforeAll(async () => {
  app = await startTestApp({ outboundAllowLoopback: true, embeddingWorker: false });
  specServer = createServer((req, res) => {
    served.hits.push(req.url ?? '');
    if (req.url === '/redirect-to-metadata') {
      res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
      return;
    }
    const hop = /^\/hop\/(\d+)$/.exec(req.url ?? '');
    if (hop && Number(hop[1]) > 0) return void res.writeHead(302, { location: `/hop/${Number(hop[1]) - 1}` }).end();
    if (req.url === '/hang') return; // never answers
    if (req.url === '/huge') return void res.writeHead(200, { 'content-type': 'application/json' }).end(' '.repeat(5 * 1024 * 1024 + 1));
    res.writeHead(served.status, { 'content-type': 'application/json' }).end(served.body);
  });
  await new Promise<void>((r) => specServer.listen(0, '127.0.0.1', r));
  specUrl = `http://127.0.0.1:${(specServer.address() as AddressInfo).port}`;
});
afterAll(async () => {
  specServer?.closeAllConnections();
  specServer?.close();
  await app?.close();
});

const W = '/api/v1/workspaces/-';

type Op = { id?: string; method?: string; path: string; summary?: string; tag?: string; hidden?: boolean; description?: string };
function spec30(ops: Op[], version = '3.0.3'): Record<string, any> {
  const paths: Record<string, any> = {};
  for (const op of ops) {
    paths[op.path] ??= {};
    paths[op.path][op.method ?? 'get'] = {
      ...(op.id ? { operationId: op.id } : {}),
      ...(op.summary ? { summary: op.summary } : {}),
      ...(op.tag ? { tags: [op.tag] } : {}),
      ...(op.hidden ? { 'x-hidden': true } : {}),
      description: op.description ?? `Does ${op.path}.`,
      parameters: [{ name: 'limit', in: 'query', required: false, schema: { type: 'integer' }, description: 'Page size' }],
      responses: { 200: { description: 'OK', content: { 'application/json': { schema: { $ref: '#/components/schemas/Pet' } } } } },
    };
  }
  return {
    openapi: version,
    info: { title: 'Petstore', version: '1.0.0' },
    servers: [{ url: 'https://pets.example.com/v1' }],
    paths,
    components: {
      schemas: { Pet: { type: 'object', required: ['id'], properties: { id: { type: 'integer' }, name: { type: 'string' } } } },
    },
  };
}

const attach = (t: Tenant, body: Record<string, unknown>, key = t.key) => app.api('PUT', `${W}/openapi`, { key, body });
const pages = async (t: Tenant) => (await app.api('GET', `${W}/openapi/pages`, { key: t.key })).body;

describe('attach (23), status (22), pages (25)', () => {
  it('attaches a raw OpenAPI 3.0 object and generates one page per operation, grouped by first tag', async () => {
    const t = await tenant(app);
    const res = await attach(t, {
      spec: spec30([
        { id: 'listPets', path: '/pets', summary: 'List pets', tag: 'Pets' },
        { id: 'createPet', method: 'post', path: '/pets', summary: 'Create a pet', tag: 'Pets' },
        { path: '/health', tag: undefined },
        { id: 'secret', path: '/internal', hidden: true },
      ]),
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      source: 'raw',
      url: null,
      title: 'Petstore',
      version: '1.0.0',
      openapiVersion: '3.0.3',
      operationCount: 3,
      pageCount: 3,
      lastSyncResult: 'ok',
      warnings: [],
    });
    expect([...res.body.lastSync.added].sort()).toEqual(['GET /health', 'createPet', 'listPets']);
    const list = await pages(t);
    expect(list.map((p: any) => [p.slug, p.section, p.operationKey, p.method, p.path, p.state])).toEqual([
      ['list-pets', 'pets', 'listPets', 'GET', '/pets', 'generated'],
      ['create-pet', 'pets', 'createPet', 'POST', '/pets', 'generated'],
      ['get-health', 'api-reference', 'GET /health', 'GET', '/health', 'generated'],
    ]);
    const page = await app.api('GET', `${W}/articles/list-pets`, { key: t.key });
    expect(page.body).toMatchObject({ title: 'List pets', status: 'STABLE' });
    expect(page.body.markdown).toContain('| `limit` | query | integer | no | Page size |');
    expect(page.body.markdown).toContain("curl -X GET 'https://pets.example.com/v1/pets'");
    expect(page.body.markdown).toContain('"id": "integer"');
    const tree = (await app.api('GET', `${W}/articles`, { key: t.key })).body;
    expect(tree.map((s: any) => s.label)).toEqual(['Pets', 'API Reference']);
    const status = await app.api('GET', `${W}/openapi`, { key: t.key });
    expect(status.body, JSON.stringify([status.body, res.body])).toEqual(res.body);
    const found = await app.api('GET', `${W}/search?q=pets`, { key: t.key });
    expect(found.body.map((h: any) => h.slug)).toContain('list-pets');
  });

  it('accepts OpenAPI 3.1 as YAML text and Swagger 2.0 as JSON text', async () => {
    const t31 = await tenant(app);
    const yaml = toYaml(spec30([{ id: 'getPet', path: '/pets/{petId}', summary: 'Get a pet', tag: 'Pets' }], '3.1.0'));
    const r31 = await attach(t31, { spec: yaml });
    expect(r31.status, JSON.stringify(r31.body)).toBe(200);
    expect(r31.body).toMatchObject({ openapiVersion: '3.1.0', operationCount: 1 });
    const t20 = await tenant(app);
    const swagger = {
      swagger: '2.0',
      info: { title: 'Old API', version: '0.9' },
      host: 'old.example.com',
      basePath: '/api',
      schemes: ['https'],
      paths: {
        '/orders': {
          post: {
            operationId: 'placeOrder',
            summary: 'Place an order',
            tags: ['Orders'],
            parameters: [{ name: 'body', in: 'body', required: true, schema: { $ref: '#/definitions/Order' } }],
            responses: { 201: { description: 'Created', schema: { $ref: '#/definitions/Order' } } },
          },
        },
      },
      definitions: { Order: { type: 'object', properties: { sku: { type: 'string' }, qty: { type: 'integer' } } } },
    };
    const r20 = await attach(t20, { spec: JSON.stringify(swagger) });
    expect(r20.status, JSON.stringify(r20.body)).toBe(200);
    expect(r20.body).toMatchObject({ openapiVersion: '2.0', title: 'Old API' });
    const md = (await app.api('GET', `${W}/articles/place-order`, { key: t20.key })).body.markdown;
    expect(md).toContain('## Request body');
    expect(md).toContain('"sku?": "string"');
    expect(md).toContain("curl -X POST 'https://old.example.com/api/orders'");
  });

  it("answers 400 with the parser's findings for an invalid spec, and changes nothing", async () => {
    const t = await tenant(app);
    await attach(t, { spec: spec30([{ id: 'keep', path: '/keep' }]) });
    const bad = await attach(t, { spec: { openapi: '3.0.3', info: { title: 'x' }, paths: { '/x': { get: { responses: 'nope' } } } } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('invalid_request');
    expect(bad.body.error.details).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: '#/info', message: expect.stringContaining('version') }),
        expect.objectContaining({ path: '#/paths/~1x/get/responses' }),
      ]),
    );
    for (const spec of ['not: [valid', 'just text', '{"swagger": "1.2"}']) expect((await attach(t, { spec })).status).toBe(400);
    expect((await attach(t, {})).status).toBe(400);
    expect((await attach(t, { url: `${specUrl}/x`, spec: '{}' })).status).toBe(400);
    expect((await pages(t)).map((p: any) => p.operationKey)).toEqual(['keep']);
    expect((await app.api('GET', `${W}/openapi`, { key: t.key })).body.operationCount).toBe(1);
  });

  it('never fetches an external $ref', async () => {
    const t = await tenant(app);
    served.hits.length = 0;
    const spec = spec30([{ id: 'ext', path: '/ext' }]);
    spec.paths['/ext'].get.responses[200].content['application/json'].schema = { $ref: `${specUrl}/external-schema.json` };
    const res = await attach(t, { spec });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(served.hits).not.toContain('/external-schema.json');
  });

  it('answers 404 for status and sync when no spec is attached; needs openapi.read / openapi.manage', async () => {
    const t = await tenant(app);
    expect((await app.api('GET', `${W}/openapi`, { key: t.key })).status).toBe(404);
    expect((await app.api('POST', `${W}/openapi/sync`, { key: t.key })).status).toBe(404);
    expect((await app.api('DELETE', `${W}/openapi`, { key: t.key })).status).toBe(404);
    const reader = await createKey(app, t.member.id, { permissions: ['openapi.read'], workspaceId: t.workspace.id });
    const denied = await attach(t, { spec: spec30([{ id: 'a', path: '/a' }]) }, reader.key);
    expect(denied.status).toBe(403);
    expect(denied.body.error.details).toEqual({ missing: ['openapi.manage'] });
    const none = await createKey(app, t.member.id, { permissions: ['article.read'], workspaceId: t.workspace.id });
    expect((await app.api('GET', `${W}/openapi/pages`, { key: none.key })).status).toBe(403);
  });
});

describe('by URL, SSRF-safe', () => {
  it('fetches a spec from a URL (loopback allowed by the test-only setting) and re-fetches it on sync', async () => {
    const t = await tenant(app);
    served.body = JSON.stringify(
      spec30([
        { id: 'a', path: '/a', tag: 'T' },
        { id: 'b', path: '/b', tag: 'T' },
        { id: 'c', path: '/c', tag: 'T' },
      ]),
    );
    const res = await attach(t, { url: `${specUrl}/openapi.json` });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ source: 'url', url: `${specUrl}/openapi.json`, operationCount: 3 });
    served.body = JSON.stringify(
      spec30([
        { id: 'a', path: '/a', tag: 'T' },
        { id: 'b', path: '/b', tag: 'T', description: 'Changed.' },
        { id: 'd', path: '/d', tag: 'T' },
      ]),
    );
    const sync = await app.api('POST', `${W}/openapi/sync`, { key: t.key });
    expect(sync.status).toBe(200);
    expect(sync.body).toEqual({ added: ['d'], changed: ['b'], removed: ['c'], unchanged: 1, drifted: [] });
    expect((await pages(t)).map((p: any) => p.operationKey)).toEqual(['a', 'b', 'd']);
    const versions = async () => (await pages(t)).map((p: any) => p.slug);
    const before = await Promise.all(
      (await versions()).map(async (slug: string) => (await app.api('GET', `${W}/articles/${slug}`, { key: t.key })).body.version),
    );
    const again = await app.api('POST', `${W}/openapi/sync`, { key: t.key });
    expect(again.body).toEqual({ added: [], changed: [], removed: [], unchanged: 3, drifted: [] });
    const after = await Promise.all(
      (await versions()).map(async (slug: string) => (await app.api('GET', `${W}/articles/${slug}`, { key: t.key })).body.version),
    );
    expect(after).toEqual(before);
  });

  it('refuses loopback by default, and private, link-local and unspecified targets, and redirects to them', async () => {
    const strict = await startTestApp({ embeddingWorker: false });
    try {
      const t = await tenant(strict);
      const targets = [
        `${specUrl}/openapi.json`,
        'http://localhost:9/x',
        'http://[::1]:9/x',
        'http://169.254.169.254/latest/meta-data/',
        'http://10.0.0.1/x',
        'http://0.0.0.0:9/x',
        'ftp://example.com/spec.json',
      ];
      for (const url of targets) {
        const res = await strict.api('PUT', `${W}/openapi`, { key: t.key, body: { url } });
        expect(res.status, url).toBe(400);
        expect(res.body.error.details[0].field, url).toBe('url');
      }
      const viaRedirect = await attach(await tenant(app), { url: `${specUrl}/redirect-to-metadata` });
      expect(viaRedirect.status).toBe(400);
      // The refusal says the address is not allowed without echoing it (an internal address is never told back).
      expect(viaRedirect.body.error.message).toMatch(/not allowed/);
      expect(viaRedirect.body.error.message).not.toMatch(/169\.254/);
    } finally {
      await strict.close();
    }
  });
});

describe('fetch limits and failed syncs', () => {
  it('follows up to 5 redirects, and refuses 6, a body over 5 MiB and a URL that does not answer within 10 s', async () => {
    const t = await tenant(app);
    served.body = JSON.stringify(spec30([{ id: 'a', path: '/a', tag: 'T' }]));
    const five = await attach(t, { url: `${specUrl}/hop/5` });
    expect(five.status, JSON.stringify(five.body)).toBe(200);
    const refusals: [string, RegExp][] = [
      ['/hop/6', /too many redirects/],
      ['/huge', /larger than 5242880 bytes/],
      ['/hang', /within 10000 ms/],
    ];
    for (const [path, reason] of refusals) {
      const res = await attach(t, { url: `${specUrl}${path}` });
      expect(res.status, path).toBe(400);
      expect(res.body.error.details[0].field, path).toBe('url');
      expect(res.body.error.message, path).toMatch(reason);
    }
    // Refused attaches change nothing: the five-hop spec is still the attached one.
    const status = await app.api('GET', `${W}/openapi`, { key: t.key });
    expect(status.body).toMatchObject({ url: `${specUrl}/hop/5`, operationCount: 1 });
  }, 30_000);

  it('records a failed sync (an error answer, then an invalid document) with its reason, and changes no page', async () => {
    const t = await tenant(app);
    served.body = JSON.stringify(
      spec30([
        { id: 'a', path: '/a', tag: 'T' },
        { id: 'b', path: '/b', tag: 'T' },
      ]),
    );
    expect((await attach(t, { url: `${specUrl}/openapi.json` })).status).toBe(200);
    const snapshot = async () =>
      Promise.all(
        (await pages(t)).map(async (p: any) => {
          const article = (await app.api('GET', `${W}/articles/${p.slug}`, { key: t.key })).body;
          return `${p.operationKey} ${article.version} ${article.markdown}`;
        }),
      );
    const before = await snapshot();
    expect(before).toHaveLength(2);
    served.body = '{"openapi": "3.0.3", "paths": "not an object"}';
    const invalid = await app.api('POST', `${W}/openapi/sync`, { key: t.key });
    expect(invalid.status).toBe(400);
    let status = (await app.api('GET', `${W}/openapi`, { key: t.key })).body;
    expect(status).toMatchObject({ lastSyncResult: 'failed', lastSyncError: expect.any(String), operationCount: 2 });
    expect(status.lastSyncAt).toBeTruthy();
    expect(await snapshot()).toEqual(before);
    // A spec served with an error status fails the same way (the sync re-fetches the stored URL).
    served.body = JSON.stringify(spec30([{ id: 'c', path: '/c', tag: 'T' }]));
    served.status = 500;
    const erroring = await app.api('POST', `${W}/openapi/sync`, { key: t.key }).finally(() => (served.status = 200));
    expect(erroring.status).toBe(400);
    status = (await app.api('GET', `${W}/openapi`, { key: t.key })).body;
    expect(status).toMatchObject({ lastSyncResult: 'failed', lastSyncError: expect.stringMatching(/HTTP 500/) });
    expect(await snapshot()).toEqual(before);
  });

  it('names the operation and the schema fault of a 3.1 schema whose enum is not an array, on attach and in a failed sync', async () => {
    const t = await tenant(app);
    const withEnum = (value: unknown) => ({
      openapi: '3.1.0',
      info: { title: 'Odd', version: '1' },
      paths: {
        '/pets/{kind}': {
          get: {
            operationId: 'listPets',
            parameters: [{ name: 'kind', in: 'path', required: true, schema: { type: 'string', enum: value } }],
            responses: { 200: { description: 'OK' } },
          },
        },
      },
    });
    const attached = await attach(t, { spec: withEnum('dog') });
    expect(attached.status).toBe(400);
    expect(attached.body.error.message).toBe(
      'The spec\'s operation GET /pets/{kind} has a schema whose `enum` is a string ("dog"), not an array.',
    );
    expect(attached.body.error.details).toEqual([
      {
        field: 'spec',
        path: '#/paths/~1pets~1{kind}/get',
        message: 'GET /pets/{kind} has a schema whose `enum` is a string ("dog"), not an array',
      },
    ]);
    served.body = JSON.stringify(withEnum(['dog', 'cat']));
    expect((await attach(t, { url: `${specUrl}/openapi.json` })).status).toBe(200);
    served.body = JSON.stringify(withEnum({ dog: 1 }));
    expect((await app.api('POST', `${W}/openapi/sync`, { key: t.key })).status).toBe(400);
    const status = (await app.api('GET', `${W}/openapi`, { key: t.key })).body;
    expect(status).toMatchObject({
      lastSyncResult: 'failed',
      lastSyncError: "The spec's operation GET /pets/{kind} has a schema whose `enum` is an object, not an array.",
      operationCount: 1,
    });
  });
});

describe('detach, placement, sections, delete', () => {
  it('a detached page survives sync, becomes editable and shows drift; placement survives sync', async () => {
    const t = await tenant(app);
    const ops = [
      { id: 'one', path: '/one', tag: 'T' },
      { id: 'two', path: '/two', tag: 'T' },
      { id: 'three', path: '/three', tag: 'T' },
    ];
    await attach(t, { spec: spec30(ops) });
    const locked = await app.api('PATCH', `${W}/articles/one`, { key: t.key, body: { markdown: 'mine' } });
    expect(locked.status).toBe(409);
    const detached = await app.api('DELETE', `${W}/openapi/pages/one`, { key: t.key });
    expect(detached.status).toBe(200);
    expect(detached.body).toMatchObject({ slug: 'one', state: 'detached' });
    expect((await app.api('DELETE', `${W}/openapi/pages/one`, { key: t.key })).status).toBe(409);
    expect((await app.api('PATCH', `${W}/articles/one`, { key: t.key, body: { markdown: 'mine' } })).status).toBe(200);
    const moved = await app.api('POST', `${W}/openapi/pages/three/placement`, { key: t.key, body: { position: 0 } });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ slug: 'three', position: 0 });
    const changedOps = [
      { id: 'one', path: '/one', tag: 'T', description: 'New text.' },
      { id: 'two', path: '/two', tag: 'T', description: 'Also new.' },
      { id: 'three', path: '/three', tag: 'T' },
    ];
    const res = await attach(t, { spec: spec30(changedOps) });
    expect(res.body.lastSync).toEqual({
      added: [],
      changed: ['two'],
      removed: [],
      unchanged: 1,
      drifted: [{ slug: 'one', operationKey: 'one', reason: 'changed' }],
    });
    expect((await app.api('GET', `${W}/articles/one`, { key: t.key })).body.markdown).toBe('mine');
    expect((await pages(t)).map((p: any) => `${p.slug}@${p.position}`)).toEqual(['three@0', 'one@1', 'two@2']);
    const removed = await attach(t, { spec: spec30([{ id: 'three', path: '/three', tag: 'T' }]) });
    expect(removed.body.lastSync).toMatchObject({ removed: ['two'], drifted: [{ slug: 'one', reason: 'removed' }] });
  });

  it('creates sections collecting a tag (409 for a tag already collected); DELETE removes only generated pages', async () => {
    const t = await tenant(app);
    const section = await app.api('POST', `${W}/openapi/sections`, { key: t.key, body: { label: 'Pet endpoints', tag: 'Pets' } });
    expect(section.status).toBe(201);
    expect(section.body).toEqual({ key: 'pet-endpoints', label: 'Pet endpoints', visibility: 'public', articleCount: 0, tag: 'Pets' });
    expect((await app.api('POST', `${W}/openapi/sections`, { key: t.key, body: { label: 'Again', tag: 'Pets' } })).status).toBe(409);
    await attach(t, {
      spec: spec30([
        { id: 'listPets', path: '/pets', tag: 'Pets' },
        { id: 'other', path: '/other' },
      ]),
    });
    expect((await pages(t)).map((p: any) => [p.slug, p.section])).toEqual([
      ['list-pets', 'pet-endpoints'],
      ['other', 'api-reference'],
    ]);
    await app.api('DELETE', `${W}/openapi/pages/other`, { key: t.key });
    const res = await app.api('DELETE', `${W}/openapi`, { key: t.key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ detached: true, removedPages: 1 });
    expect((await app.api('GET', `${W}/articles/list-pets`, { key: t.key })).status).toBe(404);
    expect((await app.api('GET', `${W}/articles/other`, { key: t.key })).status).toBe(200);
    expect((await app.api('GET', `${W}/openapi`, { key: t.key })).status).toBe(404);
    expect((await app.api('DELETE', `${W}/openapi/pages/nope`, { key: t.key })).status).toBe(404);
  });

  it('syncs a large spec in one transaction', async () => {
    const t = await tenant(app);
    const ops = Array.from({ length: 2000 }, (_, i) => ({
      id: `op${i}`,
      path: `/things/${i}`,
      tag: `Group ${i % 20}`,
      summary: `Operation ${i}`,
    }));
    const started = performance.now();
    const res = await attach(t, { spec: spec30(ops) });
    const ms = performance.now() - started;
    expect(res.status).toBe(200);
    expect(res.body.pageCount).toBe(2000);
    const resync = performance.now();
    const plan = await app.api('POST', `${W}/openapi/sync`, { key: t.key });
    console.log(
      `large spec: 2000 operations attached in ${ms.toFixed(0)} ms, unchanged re-sync in ${(performance.now() - resync).toFixed(0)} ms`,
    );
    expect(plan.body.unchanged).toBe(2000);
    // Leave no 2,000 queued embeddings behind for the other test files' workers on a shared database.
    expect((await app.api('DELETE', `${W}/openapi`, { key: t.key })).body.removedPages).toBe(2000);
  }, 120_000);
});
