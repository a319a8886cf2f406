import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROUTES } from '../rest/routes/index.js';
import { startTestApp, type TestApp } from './support/app.js';
import { createKey, createWorkspace, tenant, type Tenant } from './support/factories.js';
import { png } from './support/images.js';
import { SAMPLE_BODIES } from './support/samples.js';
import { deepSelection, introspect, operationFor, rootFields, sampleValue } from './support/introspect.js';

let app: TestApp;
let a: Tenant;
let b: Tenant;
let bIds: { changelog: number; slug: string; page: string };
beforeAll(async () => {
  app = await startTestApp({ embeddingWorker: false });
  a = await tenant(app, { plan: 'pro', orgWide: true });
  b = await tenant(app, { plan: 'pro' });
  // Organization B's objects: the ids A will aim at.
  // Every setup write is checked: "B's ids are 404 for A" proves nothing if B's objects do not exist.
  const W = '/api/v1/workspaces/-';
  const ok = (res: { status: number; text: string }, status: number) => expect(res.status, res.text).toBe(status);
  ok(await app.api('POST', `${W}/sections`, { key: b.key, body: { label: 'Docs', key: 'docs' } }), 201);
  ok(await app.api('POST', `${W}/articles`, { key: b.key, body: { title: 'Shared', section: 'docs', markdown: 'secret' } }), 201);
  const spec = await app.api('PUT', `${W}/openapi`, {
    key: b.key,
    body: {
      spec: {
        openapi: '3.0.3',
        info: { title: 'B', version: '1' },
        paths: { '/x': { get: { operationId: 'bOp', responses: { 200: { description: 'ok' } } } } },
      },
    },
  });
  expect(spec.status, spec.text).toBeLessThan(300);
  const entry = await app.api('POST', `${W}/changelog`, {
    key: b.key,
    body: { title: 'B only', markdown: 'x', status: 'draft', tags: [], published_at: null },
  });
  ok(entry, 201);
  // Written twice, so B's note has a revision (version 1) in its history too.
  for (const body of ['x', 'y'])
    expect(
      (await app.api('PUT', `${W}/memory/note`, { key: b.key, body: { path: 'b/secret', body, kind: 'note', links: [], tags: [] } }))
        .status,
    ).toBe(200);
  bIds = { changelog: entry.body.id, slug: 'shared', page: 'b-op' };
  // B reaches each of the ids A aims at.
  ok(await app.api('GET', `${W}/articles/${bIds.slug}`, { key: b.key }), 200);
  const pages = await app.api('GET', `${W}/openapi/pages`, { key: b.key });
  expect(JSON.stringify(pages.body)).toContain(`"${bIds.page}"`);
  ok(await app.api('GET', `${W}/memory/note/revisions/1?path=b/secret`, { key: b.key }), 200);
  const search = await app.api('GET', `${W}/search?q=secret`, { key: b.key });
  expect(search.body.map((h: { slug: string }) => h.slug)).toContain(bIds.slug);
  // A has a section "docs" too, so bodies that name a section are valid in A's workspace.
  ok(await app.api('POST', `/api/v1/workspaces/${a.workspace.id}/sections`, { key: a.key, body: { label: 'Docs', key: 'docs' } }), 201);
});
afterAll(async () => app?.close());

function pathFor(route: (typeof ROUTES)[number], workspace: string, ids: { id: number; slug: string }) {
  return route.path
    .replace('{workspace}', workspace)
    .replace('{id}', String(ids.id))
    .replace('{version}', '1')
    .replace('{group}', '1')
    .replace('{slug}', route.path.includes('/openapi/pages/') ? ids.slug : ids.slug);
}

async function call(route: (typeof ROUTES)[number], key: string, path: string) {
  const query = route.query?.path
    ? '?path=b/secret'
    : route.query?.q
      ? '?q=secret'
      : route.query?.from
        ? '?from=1'
        : route.query?.id
          ? `?id=${encodeURIComponent('note:b/secret')}` // a document id (the fetch row)
          : '';
  const url = `/api/v1${path}${query}`;
  if (route.upload) {
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(png(1, 1))]), 'a.png');
    return app.api(route.method, url, { key, form });
  }
  return app.api(route.method, url, { key, body: route.body ? SAMPLE_BODIES[route.name] : undefined });
}

describe('tenant isolation sweep', () => {
  it.each(ROUTES.map((r) => [r.name, r] as const))(
    "%s: another organization's workspace is a 404 identical to a nonexistent one",
    async (_name, route) => {
      const ids = { id: bIds.changelog, slug: route.path.includes('/openapi/pages/') ? bIds.page : bIds.slug };
      const foreign = await call(route, a.key, pathFor(route, b.workspace.id, ids));
      const missing = await call(route, a.key, pathFor(route, '00000000-0000-4000-8000-000000000000', ids));
      expect(foreign.status).toBe(404);
      expect(foreign.body).toEqual(missing.body);
    },
  );

  it('a workspace-bound key aimed at a sibling workspace gets the same 404 on every endpoint', async () => {
    const sibling = await createWorkspace(app, b.org.id);
    const bound = await createKey(app, b.member.id, {
      permissions: ['article.read', 'changelog.read', 'memory.read', 'search.read', 'openapi.read', 'proposal.read'],
      workspaceId: b.workspace.id,
    });
    for (const route of ROUTES) {
      const res = await call(route, bound.key, pathFor(route, sibling.id, { id: 1, slug: 'x' }));
      expect(res.status, route.name).toBe(404);
      expect(res.body.error.message, route.name).toBe('Workspace was not found.');
    }
  });

  it("B's object ids in A's own workspace are 404s identical to nonexistent ids", async () => {
    const W = `/api/v1/workspaces/${a.workspace.id}`;
    const pairs: [string, string, string][] = [
      ['PATCH', `${W}/changelog/${bIds.changelog}`, `${W}/changelog/2147483646`],
      ['DELETE', `${W}/changelog/${bIds.changelog}`, `${W}/changelog/2147483646`],
      ['GET', `${W}/articles/${bIds.slug}`, `${W}/articles/no-such-article`],
      ['GET', `${W}/memory/note?path=b/secret`, `${W}/memory/note?path=no/such`],
      ['DELETE', `${W}/openapi/pages/${bIds.page}`, `${W}/openapi/pages/no-such-page`],
    ];
    for (const [method, theirs, none] of pairs) {
      const body = method === 'PATCH' ? { title: 'x' } : undefined;
      const r1 = await app.api(method, theirs, { key: a.key, body });
      const r2 = await app.api(method, none, { key: a.key, body });
      expect(r1.status, theirs).toBe(404);
      expect(r1.body).toEqual(r2.body);
    }
    const search = await app.api('GET', `${W}/search?q=secret`, { key: a.key });
    expect(search.status).toBe(200);
    expect(search.body).toEqual([]);
  });
});

describe('tenant isolation over GraphQL and MCP', () => {
  const NOWHERE = '00000000-0000-4000-8000-000000000000';

  it("every root field taking a workspace answers another organization's workspace exactly like a nonexistent one", async () => {
    const schema = await introspect(app, a.key);
    let compared = 0;
    for (const field of rootFields(schema)) {
      const workspaceArg = field.args.find((x) => x.name === 'workspace' || x.name === 'workspaceId');
      if (!workspaceArg) continue;
      // fetchDocument's id is a document id (`note:<path>`), not a number.
      const named = {
        path: 'b/secret',
        slug: bIds.slug,
        q: 'secret',
        section: 'docs',
        ...(field.name === 'fetchDocument' ? { id: 'note:b/secret' } : {}),
      };
      const variables = (ws: string) => ({
        ...Object.fromEntries(field.args.map((x) => [x.name, sampleValue(x.name, x.type, named)])),
        [workspaceArg.name]: ws,
      });
      const query = operationFor(schema, field, deepSelection(field.type));
      const foreign = await app.gql(query, variables(b.workspace.id), a.key);
      const missing = await app.gql(query, variables(NOWHERE), a.key);
      expect(foreign.errors?.length, field.name).toBeGreaterThan(0);
      expect(['not_found', 'permission_denied'], field.name).toContain(foreign.errors![0].extensions.code);
      expect(foreign.errors![0].extensions, field.name).toEqual(missing.errors![0].extensions);
      expect(foreign.errors![0].message, field.name).toBe(missing.errors![0].message);
      compared++;
    }
    expect(compared).toBeGreaterThan(25);
  });

  it("every MCP tool answers another organization's workspace exactly like a nonexistent one", async () => {
    const post = async (args: Record<string, unknown>, name: string) => {
      const res = await fetch(`${app.url}/mcp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${a.key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
      });
      return ((await res.json()) as any).result;
    };
    for (const route of ROUTES) {
      const args: Record<string, unknown> = { ...(SAMPLE_BODIES[route.name] ?? {}) };
      if (route.path.includes('{slug}')) args.slug = route.path.includes('/openapi/pages/') ? bIds.page : bIds.slug;
      if (route.path.includes('{id}')) args.id = bIds.changelog;
      if (route.path.includes('{version}')) args.version = 1;
      if (route.path.includes('{group}')) args.group = 1;
      if (route.query?.q) args.q = 'secret';
      if (route.query?.from) args.from = 1;
      if (route.query?.path) args.path = 'b/secret';
      if (route.query?.id) args.id = 'note:b/secret'; // the fetch row's document id
      if (route.upload) args.file = png(1, 1).toString('base64');
      const foreign = await post({ ...args, workspace: b.workspace.id }, route.name);
      const missing = await post({ ...args, workspace: NOWHERE }, route.name);
      expect(foreign.isError, route.name).toBe(true);
      expect(foreign.structuredContent.error.code, route.name).toBe('not_found');
      expect(foreign.structuredContent, route.name).toEqual(missing.structuredContent);
    }
  });
});
