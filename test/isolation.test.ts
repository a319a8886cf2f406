import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROUTES } from '../rest/routes.js';
import { startTestApp, type TestApp } from './support/app.js';
import { createKey, createWorkspace, tenant, type Tenant } from './support/factories.js';
import { png } from './support/images.js';
import { SAMPLE_BODIES } from './support/samples.js';

let app: TestApp;
let a: Tenant;
let b: Tenant;
let bIds: { changelog: number; slug: string; page: string };
beforeAll(async () => {
  app = await startTestApp({ embeddingWorker: false });
  a = await tenant(app, { plan: 'pro', orgWide: true });
  b = await tenant(app, { plan: 'pro' });
  // Organization B's objects: the ids A will aim at.
  const W = '/api/v1/workspaces/-';
  await app.api('POST', `${W}/sections`, { key: b.key, body: { label: 'Docs', key: 'docs' } });
  await app.api('POST', `${W}/articles`, { key: b.key, body: { title: 'Shared', section: 'docs', markdown: 'secret' } });
  await app.api('PUT', `${W}/openapi`, { key: b.key, body: { spec: { openapi: '3.0.3', info: { title: 'B', version: '1' }, paths: { '/x': { get: { operationId: 'bOp', responses: { 200: { description: 'ok' } } } } } } } });
  const entry = await app.api('POST', `${W}/changelog`, { key: b.key, body: { title: 'B only', markdown: 'x', status: 'draft', tags: [], published_at: null } });
  await app.api('PUT', `${W}/memory/note`, { key: b.key, body: { path: 'b/secret', body: 'x', kind: 'note', links: [], tags: [] } });
  bIds = { changelog: entry.body.id, slug: 'shared', page: 'b-op' };
  // A has a section "docs" too, so bodies that name a section are valid in A's workspace.
  await app.api('POST', `/api/v1/workspaces/${a.workspace.id}/sections`, { key: a.key, body: { label: 'Docs', key: 'docs' } });
});
afterAll(async () => app?.close());

function pathFor(route: (typeof ROUTES)[number], workspace: string, ids: { id: number; slug: string }) {
  return route.path.replace('{workspace}', workspace).replace('{id}', String(ids.id)).replace('{slug}', route.path.includes('/openapi/pages/') ? ids.slug : ids.slug);
}

async function call(route: (typeof ROUTES)[number], key: string, path: string) {
  const query = route.query?.path ? '?path=b/secret' : route.query?.q ? '?q=secret' : '';
  const url = `/api/v1${path}${query}`;
  if (route.upload) {
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(png(1, 1))]), 'a.png');
    return app.api(route.method, url, { key, form });
  }
  return app.api(route.method, url, { key, body: route.body ? SAMPLE_BODIES[route.name] : undefined });
}

describe('tenant isolation sweep', () => {
  it.each(ROUTES.map((r) => [r.name, r] as const))('%s: another organization\'s workspace is a 404 identical to a nonexistent one', async (_name, route) => {
    const ids = { id: bIds.changelog, slug: route.path.includes('/openapi/pages/') ? bIds.page : bIds.slug };
    const foreign = await call(route, a.key, pathFor(route, b.workspace.id, ids));
    const missing = await call(route, a.key, pathFor(route, '00000000-0000-4000-8000-000000000000', ids));
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual(missing.body);
  });

  it('a workspace-bound key aimed at a sibling workspace gets the same 404 on every endpoint', async () => {
    const sibling = await createWorkspace(app, b.org.id);
    const bound = await createKey(app, b.member.id, { permissions: ['article.read', 'changelog.read', 'memory.read', 'search.read', 'openapi.read', 'proposal.read'], workspaceId: b.workspace.id });
    for (const route of ROUTES) {
      const res = await call(route, bound.key, pathFor(route, sibling.id, { id: 1, slug: 'x' }));
      expect(res.status, route.name).toBe(404);
      expect(res.body.error.message, route.name).toBe('Workspace was not found.');
    }
  });

  it('B\'s object ids in A\'s own workspace are 404s identical to nonexistent ids', async () => {
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
    expect(search.body).toEqual([]);
  });
});
