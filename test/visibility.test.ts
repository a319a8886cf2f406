import { getNamedType, getNullableType, isEnumType, isInputObjectType, isListType, isNonNullType, type GraphQLInputType } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROUTES } from '../rest/routes/index.js';
import { startTestApp, type TestApp } from './support/app.js';
import { ALL_PERMISSIONS, createKey, createMember, tenant, type Tenant } from './support/factories.js';
import { png } from './support/images.js';
import { deepSelection, introspect, operationFor } from './support/introspect.js';
import { SAMPLE_BODIES } from './support/samples.js';

// Restricted content does not exist for keys of viewer-role members: a viewer key calls every REST
// endpoint, every GraphQL query and every MCP tool over a workspace that holds a restricted
// section (with a public article and a generated page in it) and a restricted article in a public
// section. Every restricted title, slug and key carries the word "zebra"; no answer may contain it.
const MARK = /zebra/i;
const W = '/api/v1/workspaces/-';
let app: TestApp;
let owner: Tenant;
let viewerKey: string;
const restricted = { inSection: 'zebra-in-secret', article: 'zebra-article', page: 'zebra-op', section: 'zebra-section' };

beforeAll(async () => {
  app = await startTestApp();
  owner = await tenant(app, { plan: 'pro' });
  const api = (method: string, path: string, body?: unknown) => app.api(method, `${W}${path}`, { key: owner.key, body });
  const ok = async (p: Promise<{ status: number; body: any }>) => {
    const res = await p;
    if (res.status >= 300) throw new Error(`setup failed: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  await ok(api('POST', '/sections', { label: 'Docs', key: 'docs' }));
  await ok(api('POST', '/sections', { label: 'Zebra Section', key: restricted.section, visibility: 'restricted' }));
  await ok(
    api('POST', '/articles', { title: 'Zebra in secret', section: restricted.section, markdown: 'zebra stripes in a restricted section' }),
  );
  await ok(
    api('POST', '/articles', {
      title: 'Zebra article',
      section: 'docs',
      markdown: 'zebra stripes, restricted article',
      visibility: 'restricted',
    }),
  );
  await ok(api('POST', '/articles', { title: 'Open page', section: 'docs', markdown: 'public words about stripes' }));
  for (const slug of [restricted.inSection, restricted.article, 'open-page'])
    await ok(api('PATCH', `/articles/${slug}`, { status: 'STABLE' }));
  const spec = {
    openapi: '3.0.3',
    info: { title: 'Api', version: '1' },
    paths: {
      '/open': { get: { operationId: 'openOp', summary: 'Open operation', tags: ['Api'], responses: { 200: { description: 'ok' } } } },
      '/z': { get: { operationId: 'zebraOp', summary: 'Zebra operation', tags: ['Api'], responses: { 200: { description: 'ok' } } } },
    },
  };
  await ok(api('PUT', '/openapi', { spec }));
  await ok(api('POST', `/openapi/pages/${restricted.page}/placement`, { section: restricted.section }));
  await ok(api('POST', '/proposals', { article: restricted.article, markdown: 'zebra edit', summary: 'zebra summary' }));
  await app.server.drainEmbeddings(owner.workspace.id);
  const viewer = await createMember(app, owner.org.id, { role: 'viewer' });
  viewerKey = (await createKey(app, viewer.id, { permissions: ALL_PERMISSIONS, workspaceId: owner.workspace.id })).key;
}, 120_000);
afterAll(async () => app?.close());

function expectNoLeak(where: string, status: number, text: string) {
  expect(status, `${where}: ${text.slice(0, 200)}`).toBeLessThan(500);
  expect(text, `${where} leaks restricted content`).not.toMatch(MARK);
}

describe('visibility sweep over a viewer key', () => {
  it('the owner sees the restricted content (the sweep has something to hide)', async () => {
    const tree = JSON.stringify((await app.api('GET', `${W}/articles`, { key: owner.key })).body);
    for (const slug of [restricted.inSection, restricted.article, restricted.page]) expect(tree).toContain(slug);
    const pages = (await app.api('GET', `${W}/openapi/pages`, { key: owner.key })).body;
    expect(pages.map((p: any) => p.slug)).toContain(restricted.page);
    expect(JSON.stringify((await app.api('GET', `${W}/search?q=zebra`, { key: owner.key })).body)).toMatch(MARK);
  });

  it('every REST endpoint: no restricted title, slug or key in any answer; restricted slugs answer like unknown ones', async () => {
    for (const route of ROUTES) {
      for (const slug of [restricted.inSection, restricted.article, restricted.page]) {
        const path = route.path.replace('{workspace}', '-').replace('{id}', '1').replace('{group}', '1').replace('{slug}', slug);
        const query = route.query?.q ? '?q=zebra' : route.query?.path ? '?path=zebra' : '';
        const body =
          route.name === 'articles_place'
            ? { section: restricted.section }
            : route.name === 'content_gaps_report'
              ? { question: 'q', slug }
              : SAMPLE_BODIES[route.name];
        const form = route.upload ? new FormData() : undefined;
        form?.append('file', new Blob([new Uint8Array(png(1, 1))]), 'a.png');
        const res = await app.api(route.method, `/api/v1${path}${query}`, { key: viewerKey, body: route.upload ? undefined : body, form });
        expectNoLeak(`${route.method} ${path}`, res.status, JSON.stringify(res.body) + [...res.headers.values()].join(' '));
        if (route.path.includes('{slug}') && route.method === 'GET') {
          const unknown = await app.api(
            route.method,
            `/api/v1${route.path.replace('{workspace}', '-').replace('{slug}', 'no-such-slug')}`,
            { key: viewerKey },
          );
          expect(res.body, route.name).toEqual(unknown.body);
        }
      }
      const semantic = await app.api('GET', `${W}/search?q=zebra%20stripes&semantic=true`, { key: viewerKey });
      expectNoLeak('semantic search', semantic.status, JSON.stringify(semantic.body));
    }
  }, 120_000);

  it('content-gap answers are byte-identical for a restricted slug and an unknown one', async () => {
    const send = (slug: string) =>
      fetch(`${app.url}${W}/content-gaps`, {
        method: 'POST',
        headers: { authorization: `Bearer ${viewerKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ question: 'where are the stripes?', slug }),
      });
    const hidden = await send(restricted.article);
    const unknown = await send('zebra-none');
    expect(hidden.status).toBe(202);
    expect(await hidden.text()).toBe(await unknown.text());
    const seen = await fetch(`${app.url}${W}/content-gaps`, {
      method: 'POST',
      headers: { authorization: `Bearer ${owner.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ question: 'where are the stripes?', slug: restricted.article }),
    });
    expect(await seen.text()).not.toMatch(/no article has/);
  });

  it('every GraphQL query: no restricted content in any field', async () => {
    const schema = await introspect(app, viewerKey);
    let asked = 0;
    for (const field of Object.values(schema.getQueryType()!.getFields())) {
      const args = Object.fromEntries(field.args.map((a) => [a.name, argValue(a.name, a.type)]));
      const query = operationFor(schema, field, deepSelection(field.type));
      for (const slug of [restricted.article, restricted.page, restricted.inSection]) {
        const res = await fetch(`${app.url}/graphql`, {
          method: 'POST',
          headers: { authorization: `Bearer ${viewerKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ query, variables: { ...args, ...(args.slug ? { slug } : {}) } }),
        });
        expectNoLeak(`GraphQL ${field.name}`, res.status, await res.text());
        asked++;
      }
    }
    expect(asked).toBeGreaterThan(30);
  });

  it('every MCP tool: no restricted content in any result', async () => {
    const post = async (message: unknown) => {
      const res = await fetch(`${app.url}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${viewerKey}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify(message),
      });
      return { status: res.status, text: await res.text() };
    };
    const listed = await post({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expectNoLeak('tools/list', listed.status, listed.text);
    for (const route of ROUTES) {
      for (const slug of [restricted.article, restricted.page, restricted.inSection]) {
        const args: Record<string, unknown> = { ...(SAMPLE_BODIES[route.name] ?? {}) };
        if (route.path.includes('{slug}')) args.slug = slug;
        if (route.path.includes('{id}')) args.id = 1;
        if (route.path.includes('{group}')) args.group = 1;
        if (route.query?.q) args.q = 'zebra';
        if (route.query?.path) args.path = 'zebra';
        if (route.upload) args.file = png(1, 1).toString('base64');
        const res = await post({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: route.name, arguments: args } });
        expectNoLeak(`tool ${route.name}`, res.status, res.text);
      }
    }
  });
});

describe('restricted sections refuse viewer writes like unknown articles', () => {
  it('answers a viewer write aimed at the public article of a restricted section exactly like one at an unknown slug, changing nothing', async () => {
    const before = (await app.api('GET', `${W}/articles/${restricted.inSection}`, { key: owner.key })).body;
    const writes: [string, string, unknown][] = [
      ['PATCH', '/articles/{slug}', { markdown: 'overwritten' }],
      ['POST', '/articles/{slug}/placement', { section: 'docs' }],
      ['POST', '/proposals', { article: '{slug}', markdown: 'edit', summary: 's' }],
    ];
    for (const [method, path, body] of writes) {
      const aimed = (slug: string) =>
        app.api(method, `${W}${path.replace('{slug}', slug)}`, {
          key: viewerKey,
          body: JSON.parse(JSON.stringify(body).replace('{slug}', slug)),
        });
      const hidden = await aimed(restricted.inSection);
      const unknown = await aimed('no-such-article');
      expect(hidden.status, `${method} ${path}`).toBeGreaterThanOrEqual(400);
      expect(hidden.status, `${method} ${path}`).toBeLessThan(500);
      expect(hidden.body, `${method} ${path}`).toEqual(unknown.body);
    }
    expect((await app.api('GET', `${W}/articles/${restricted.inSection}`, { key: owner.key })).body).toEqual(before);
  });
});

describe('semantic search applies the visibility of full text', () => {
  it('never ranks restricted articles for a viewer, nor archived articles or draft changelog entries for anyone', async () => {
    const t = await tenant(app, { plan: 'pro' });
    const post = async (path: string, body: unknown) => {
      const res = await app.api('POST', `${W}${path}`, { key: t.key, body });
      expect(res.status, `${path} ${res.text}`).toBeLessThan(300);
      return res.body;
    };
    const text = 'If you forgot your login secret, request a reset link from the sign-in page.';
    await post('/sections', { label: 'Docs', key: 'docs' });
    await post('/sections', { label: 'Staff', key: 'staff', visibility: 'restricted' });
    await post('/articles', { title: 'Recovering account credentials', section: 'docs', markdown: text });
    await post('/articles', { title: 'Recovering staff credentials', section: 'staff', markdown: text });
    await post('/articles', { title: 'Recovering admin credentials', section: 'docs', markdown: text, visibility: 'restricted' });
    await post('/articles', { title: 'Recovering legacy credentials', section: 'docs', markdown: text });
    expect(
      (await app.api('PATCH', `${W}/articles/recovering-legacy-credentials`, { key: t.key, body: { status: 'ARCHIVED' } })).status,
    ).toBe(200);
    await post('/changelog', { title: 'Password reset links', markdown: text, status: 'published', tags: [], published_at: null });
    await post('/changelog', { title: 'Password reset drafts', markdown: text, status: 'draft', tags: [], published_at: null });
    await app.server.drainEmbeddings(t.workspace.id);
    const viewer = await createMember(app, t.org.id, { role: 'viewer' });
    const viewerOfT = (await createKey(app, viewer.id, { permissions: ALL_PERMISSIONS, workspaceId: t.workspace.id })).key;
    const ask = async (key: string) => {
      const res = await app.api('GET', `${W}/search?q=${encodeURIComponent('how do I change my password')}&semantic=true&limit=50`, {
        key,
      });
      expect(res.headers.get('x-search-ranking'), res.headers.get('x-search-fallback') ?? '').toBe('semantic');
      return res.body.map((h: { type: string; slug: string | null; title: string }) => h.slug ?? h.title).sort();
    };
    expect(await ask(t.key)).toEqual(
      ['Password reset links', 'recovering-account-credentials', 'recovering-admin-credentials', 'recovering-staff-credentials'].sort(),
    );
    expect(await ask(viewerOfT)).toEqual(['Password reset links', 'recovering-account-credentials'].sort());
  }, 60_000);
});

/** Values that reach the resolver: the bound workspace, a restricted slug, the marker word as a query. */
function argValue(name: string, type: GraphQLInputType): unknown {
  const inner = getNullableType(type);
  if (isListType(inner)) return [];
  const named = getNamedType(type);
  if (isEnumType(named)) return isNonNullType(type) ? named.getValues()[0].value : null;
  if (isInputObjectType(named)) return {};
  if (!isNonNullType(type) && !['slug', 'q', 'path'].includes(name)) return null;
  if (named.name === 'Int') return 1;
  if (named.name === 'Boolean') return true;
  if (named.name === 'ID') return owner.workspace.id;
  return { workspace: '-', slug: restricted.article, q: 'zebra', path: 'zebra' }[name] ?? 'x';
}
