import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { createKey, createMember, tenant, type Tenant } from './support/factories.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.close());

const W = '/api/v1/workspaces/-';

async function setUp(plan = 'pro'): Promise<Tenant> {
  const t = await tenant(app, { plan });
  expect((await app.api('POST', `${W}/sections`, { key: t.key, body: { label: 'Docs', key: 'docs' } })).status).toBe(201);
  expect((await app.api('POST', `${W}/articles`, { key: t.key, body: { title: 'First', section: 'docs', markdown: 'x' } })).status).toBe(
    201,
  );
  return t;
}

const tree = (key: string, headers: Record<string, string> = {}, query = '') => app.api('GET', `${W}/articles${query}`, { key, headers });

/** The tree's ETag now; asserts a full answer. */
async function etagOf(key: string, query = ''): Promise<string> {
  const res = await tree(key, {}, query);
  expect(res.status).toBe(200);
  const etag = res.headers.get('etag');
  expect(etag).toMatch(/^"t\d+\.(all|public)(\.[a-z]+)?"$/);
  return etag!;
}

describe('sidebar tree ETag (GET /articles)', () => {
  it('answers 304 without a body while the tree is unchanged, in every form of If-None-Match', async () => {
    const t = await setUp();
    const etag = await etagOf(t.key);
    for (const header of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const res = await tree(t.key, { 'if-none-match': header });
      expect(res.status, header).toBe(304);
      expect(res.body, header).toBe('');
      expect(res.headers.get('etag')).toBe(etag);
    }
    const stale = await tree(t.key, { 'if-none-match': '"t0.all"' });
    expect(stale.status).toBe(200);
    expect(stale.body[0].articles.map((a: any) => a.slug)).toEqual(['first']);
  });

  it('changes with every change to sections and articles, and the old ETag then gets the new tree', async () => {
    const t = await setUp();
    const steps: [string, () => Promise<{ status: number }>, (body: any[]) => void][] = [
      [
        'section created',
        () => app.api('POST', `${W}/sections`, { key: t.key, body: { label: 'Guides', key: 'guides' } }),
        (b) => expect(b.map((s) => s.key)).toEqual(['docs', 'guides']),
      ],
      [
        'article created',
        () => app.api('POST', `${W}/articles`, { key: t.key, body: { title: 'Second', section: 'guides', markdown: 'y' } }),
        (b) => expect(b[1].articles.map((a: any) => a.slug)).toEqual(['second']),
      ],
      [
        'title edited',
        () => app.api('PATCH', `${W}/articles/first`, { key: t.key, body: { title: 'First, renamed' } }),
        (b) => expect(b[0].articles[0].title).toBe('First, renamed'),
      ],
      [
        'published',
        () => app.api('PATCH', `${W}/articles/first`, { key: t.key, body: { status: 'STABLE' } }),
        (b) => expect(b[0].articles[0].status).toBe('STABLE'),
      ],
      [
        'moved',
        () => app.api('POST', `${W}/articles/first/placement`, { key: t.key, body: { section: 'guides', position: 0 } }),
        (b) => expect(b[1].articles.map((a: any) => a.slug)).toEqual(['first', 'second']),
      ],
      [
        'made restricted',
        () => app.api('PATCH', `${W}/articles/second`, { key: t.key, body: { visibility: 'restricted' } }),
        (b) => expect(b[1].articles[1].visibility).toBe('restricted'),
      ],
    ];
    let etag = await etagOf(t.key);
    for (const [what, change, check] of steps) {
      const done = await change();
      expect(done.status, what).toBeLessThan(300);
      const res = await tree(t.key, { 'if-none-match': etag });
      expect(res.status, what).toBe(200);
      expect(res.headers.get('etag'), what).not.toBe(etag);
      check(res.body);
      etag = res.headers.get('etag')!;
    }
  });

  it('answers a repeated request without a header from the kept answer, byte for byte, and never a stale one', async () => {
    const t = await setUp();
    const first = await tree(t.key);
    const again = await tree(t.key);
    expect(again.status).toBe(200);
    expect(again.text).toBe(first.text);
    expect(again.headers.get('etag')).toBe(first.headers.get('etag'));
    // A client holding an older tag, and one holding none, both get the change at once.
    expect((await app.api('PATCH', `${W}/articles/first`, { key: t.key, body: { title: 'Changed' } })).status).toBe(200);
    const changed = await tree(t.key, { 'if-none-match': first.headers.get('etag')! });
    expect(changed.status).toBe(200);
    expect(changed.body[0].articles[0].title).toBe('Changed');
    const plain = await tree(t.key);
    expect(plain.text).toBe(changed.text);
    expect(plain.headers.get('etag')).toBe(changed.headers.get('etag'));
    // The kept answer is by request: the status filter is a different answer.
    const drafts = await tree(t.key, {}, '?status=STABLE');
    expect(drafts.body[0].articles).toEqual([]);
  });

  it('keeps the ETag through refused writes and through changes in another workspace', async () => {
    const t = await setUp();
    const other = await setUp();
    const etag = await etagOf(t.key);
    // An unknown section (400), a transition the rules forbid (400), and another tenant's article (404).
    expect((await app.api('POST', `${W}/articles`, { key: t.key, body: { title: 'X', section: 'nope', markdown: 'x' } })).status).toBe(400);
    expect((await app.api('PATCH', `${W}/articles/first`, { key: t.key, body: { status: 'DEPRECATED' } })).status).toBe(400);
    expect(
      (await app.api('POST', `${W}/articles`, { key: other.key, body: { title: 'Theirs', section: 'docs', markdown: 'x' } })).status,
    ).toBe(201);
    expect((await tree(t.key, { 'if-none-match': etag })).status).toBe(304);
  });

  it('names what the key may see and the status filter, and never serves one caller’s tree to another', async () => {
    const t = await setUp('pro');
    await app.api('POST', `${W}/articles`, {
      key: t.key,
      body: { title: 'Secret', section: 'docs', markdown: 's', visibility: 'restricted' },
    });
    const viewerMember = await createMember(app, t.org.id, { role: 'viewer' });
    const viewer = await createKey(app, viewerMember.id, { permissions: ['article.read'], workspaceId: t.workspace.id });
    // The editor builds (and caches) the full tree first; the viewer must still get the public one.
    const full = await etagOf(t.key);
    const publicOnly = await etagOf(viewer.key);
    expect(full).not.toBe(publicOnly);
    expect(publicOnly).toMatch(/\.public"$/);
    const seen = await tree(viewer.key);
    expect(seen.body[0].articles.map((a: any) => a.slug)).toEqual(['first']);
    // The editor's ETag is not the viewer's: a full answer, still without the secret.
    const crossed = await tree(viewer.key, { 'if-none-match': full });
    expect(crossed.status).toBe(200);
    expect(crossed.body[0].articles.map((a: any) => a.slug)).toEqual(['first']);
    const drafts = await etagOf(t.key, '?status=DRAFT');
    expect(drafts).toMatch(/\.draft"$/);
    expect((await tree(t.key, { 'if-none-match': full }, '?status=DRAFT')).status).toBe(200);
    expect((await tree(t.key, { 'if-none-match': drafts }, '?status=DRAFT')).status).toBe(304);
  });

  it('answers 400 naming the header for an over-long If-None-Match, and 401/404 before any 304', async () => {
    const t = await setUp();
    const etag = await etagOf(t.key);
    const long = await tree(t.key, { 'if-none-match': `"${'x'.repeat(300)}"` });
    expect(long.status).toBe(400);
    expect(long.body.error.details).toEqual([expect.objectContaining({ field: 'if-none-match', in: 'header' })]);
    expect((await app.api('GET', `${W}/articles`, { key: null, headers: { 'if-none-match': etag } })).status).toBe(401);
    const stranger = await tenant(app);
    const res = await app.api('GET', `/api/v1/workspaces/${t.workspace.id}/articles`, {
      key: stranger.key,
      headers: { 'if-none-match': etag },
    });
    expect(res.status).toBe(404);
  });

  it('is documented: the route declares If-None-Match, the ETag header and a 304 without a body', async () => {
    const doc = await (await fetch(`${app.url}/api/v1/openapi.json`)).json();
    const op = doc.paths['/workspaces/{workspace}/articles'].get;
    expect(op.parameters.map((p: any) => `${p.in}:${p.name}`)).toContain('header:if-none-match');
    expect(op.responses['200'].headers.ETag).toBeDefined();
    expect(op.responses['304']).toEqual({ description: expect.any(String), headers: { ETag: expect.any(Object) } });
  });

  it('works on GraphQL (ETag header on a one-field operation, the not_modified code) and as an agent tool', async () => {
    const t = await setUp();
    const query = 'query($w: String!, $e: String) { articleTree(workspace: $w, ifNoneMatch: $e) { key articles { slug } } }';
    const first = await fetch(`${app.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${t.key}` },
      body: JSON.stringify({ query, variables: { w: '-' } }),
    });
    const etag = first.headers.get('etag');
    expect(etag).toMatch(/^"t\d+\.all"$/);
    expect(((await first.json()) as any).data.articleTree[0].articles).toEqual([{ slug: 'first' }]);
    const again = await app.gql(query, { w: '-', e: etag }, t.key);
    expect(again.errors?.[0].extensions).toMatchObject({ code: 'not_modified', details: { etag } });

    const client = new Client({ name: 'etag-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${app.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${t.key}` } } }),
    );
    try {
      const unchanged: any = await client.callTool({ name: 'articles_tree', arguments: { ifNoneMatch: etag } });
      expect(unchanged.isError).toBeFalsy();
      expect(unchanged.structuredContent).toEqual({ notModified: true, etag });
      const full: any = await client.callTool({ name: 'articles_tree', arguments: {} });
      expect(full.structuredContent.items[0].articles[0].slug).toBe('first');
    } finally {
      await client.close();
    }
  });
});

// Two processes' caches on one database: only a PostgreSQL server can be shared.
describe.runIf(process.env.DATABASE_URL)('sidebar tree across processes', () => {
  it('serves a change made through another process at once, whatever this one cached', async () => {
    const other = await startTestApp();
    try {
      const t = await setUp();
      const etag = await etagOf(t.key);
      expect((await tree(t.key, { 'if-none-match': etag })).status).toBe(304);
      const created = await other.api('POST', `${W}/articles`, {
        key: t.key,
        body: { title: 'Elsewhere', section: 'docs', markdown: 'x' },
      });
      expect(created.status).toBe(201);
      const res = await tree(t.key, { 'if-none-match': etag });
      expect(res.status).toBe(200);
      expect(res.body[0].articles.map((a: any) => a.slug)).toEqual(['first', 'elsewhere']);
    } finally {
      await other.close();
    }
  });
});
