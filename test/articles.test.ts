import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { createKey, tenant, type Tenant } from './support/factories.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.close());

const W = '/api/v1/workspaces/-';

async function section(t: Tenant, label: string, extra: Record<string, unknown> = {}) {
  const res = await app.api('POST', `${W}/sections`, { key: t.key, body: { label, ...extra } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

async function article(t: Tenant, title: string, sectionKey: string, extra: Record<string, unknown> = {}) {
  const res = await app.api('POST', `${W}/articles`, {
    key: t.key,
    body: { title, section: sectionKey, markdown: `# ${title}`, ...extra },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

const order = async (t: Tenant) =>
  (await app.api('GET', `${W}/articles`, { key: t.key })).body.map((s: any) => `${s.key}:${s.articles.map((a: any) => a.slug).join(',')}`);

describe('sections (18, 19)', () => {
  it('creates sections in sidebar order with keys from labels, at a position when asked', async () => {
    const t = await tenant(app);
    expect(await section(t, 'Getting Started')).toEqual({
      key: 'getting-started',
      label: 'Getting Started',
      visibility: 'public',
      articleCount: 0,
    });
    await section(t, 'Guides');
    await section(t, 'Intro', { key: 'intro', position: 0 });
    expect((await section(t, 'Guides')).key).toBe('guides-2');
    const list = await app.api('GET', `${W}/sections`, { key: t.key });
    expect(list.status).toBe(200);
    expect(list.body.map((s: any) => s.key)).toEqual(['intro', 'getting-started', 'guides', 'guides-2']);
    expect(Object.keys(list.body[0]).sort()).toEqual(['articleCount', 'key', 'label', 'visibility']);
  });

  it('creates 20 sections sent at once, each at its own position (no deadlock, no 500)', async () => {
    const t = await tenant(app);
    const created = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        app.api('POST', `${W}/sections`, { key: t.key, body: { label: `Part ${i}`, ...(i % 4 === 3 ? { position: 0 } : {}) } }),
      ),
    );
    expect(created.map((r) => r.status)).toEqual(Array(20).fill(201));
    const list = (await app.api('GET', `${W}/sections`, { key: t.key })).body.map((s: any) => s.key);
    expect(list.sort()).toEqual(Array.from({ length: 20 }, (_, i) => `part-${i}`).sort());
    const positions = await app.server.orm.em
      .fork()
      .getConnection()
      .execute('select position from sections where workspace_id = ? order by position', [t.workspace.id]);
    expect(positions.map((r: any) => r.position)).toEqual(Array.from({ length: 20 }, (_, i) => i));
  });

  it('refuses a duplicate explicit key (409), a bad key or position (400), and needs section.create', async () => {
    const t = await tenant(app);
    await section(t, 'API', { key: 'api' });
    const dup = await app.api('POST', `${W}/sections`, { key: t.key, body: { label: 'Other', key: 'api' } });
    expect(dup.status).toBe(409);
    expect(dup.body.error.code).toBe('conflict');
    expect((await app.api('POST', `${W}/sections`, { key: t.key, body: { label: 'X', key: 'Not A Slug' } })).status).toBe(400);
    expect((await app.api('POST', `${W}/sections`, { key: t.key, body: { label: 'X', position: 5 } })).status).toBe(400);
    expect((await app.api('POST', `${W}/sections`, { key: t.key, body: {} })).status).toBe(400);
    const editor = await createKey(app, t.member.id, { permissions: ['article.read', 'article.create'], workspaceId: t.workspace.id });
    const denied = await app.api('POST', `${W}/sections`, { key: editor.key, body: { label: 'Nope' } });
    expect(denied.status).toBe(403);
    expect(denied.body.error.details).toEqual({ missing: ['section.create'] });
  });

  it('needs a paid plan for restricted visibility (403 plan_required on free)', async () => {
    const free = await tenant(app, { plan: 'free' });
    const res = await app.api('POST', `${W}/sections`, { key: free.key, body: { label: 'Internal', visibility: 'restricted' } });
    expect(res.status).toBe(403);
    expect(res.body.error).toMatchObject({ code: 'plan_required', details: { currentPlan: 'free', requiredPlans: ['pro', 'enterprise'] } });
    const pro = await tenant(app, { plan: 'pro' });
    expect((await section(pro, 'Internal', { visibility: 'restricted' })).visibility).toBe('restricted');
  });

  it('needs article.read to list', async () => {
    const t = await tenant(app, { permissions: ['section.create'] });
    expect((await app.api('GET', `${W}/sections`, { key: t.key })).status).toBe(403);
  });
});

describe('articles (11–14)', () => {
  it("tells apart drafts whose titles are the same past the slug's 80 characters", async () => {
    const t = await tenant(app);
    await section(t, 'Guides');
    // The numbered slugs cut the title shorter than the first one's: the third must not take the second's.
    const long = 'Survey of progress and trend of development and use of automatic data processing in business';
    const slugs: string[] = [];
    for (let i = 0; i < 4; i++) slugs.push((await article(t, long, 'guides')).slug);
    expect(new Set(slugs).size).toBe(4);
    expect(slugs.every((s) => s.length <= 80)).toBe(true);
    expect(slugs.slice(1).map((s) => s.slice(-2))).toEqual(['-2', '-3', '-4']);
  });

  it('creates drafts with stable unique slugs and shows them in the tree in order', async () => {
    const t = await tenant(app);
    await section(t, 'Guides');
    const a = await article(t, 'Deploy to Production!', 'guides');
    expect(a).toMatchObject({
      slug: 'deploy-to-production',
      status: 'DRAFT',
      visibility: 'public',
      section: 'guides',
      position: 0,
      version: 1,
      publishedAt: null,
    });
    const b = await article(t, 'Deploy to production', 'guides');
    expect(b.slug).toBe('deploy-to-production-2');

    const renamed = await app.api('PATCH', `${W}/articles/${a.slug}`, { key: t.key, body: { title: 'Shipping' } });
    expect(renamed.body).toMatchObject({ slug: 'deploy-to-production', title: 'Shipping', version: 2 });
    const tree = await app.api('GET', `${W}/articles`, { key: t.key });
    expect(tree.status).toBe(200);
    expect(tree.body).toEqual([
      {
        key: 'guides',
        label: 'Guides',
        visibility: 'public',
        articleCount: 2,
        articles: [
          expect.objectContaining({ slug: 'deploy-to-production', title: 'Shipping', position: 0 }),
          expect.objectContaining({ slug: 'deploy-to-production-2', position: 1 }),
        ],
      },
    ]);
    expect((await app.api('GET', `${W}/articles?status=STABLE`, { key: t.key })).body[0].articles).toEqual([]);
  });

  it('answers 400 for an unknown section and invalid bodies, 403 without article.create', async () => {
    const t = await tenant(app);
    const res = await app.api('POST', `${W}/articles`, { key: t.key, body: { title: 'X', section: 'nowhere', markdown: '' } });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([{ field: 'section', message: expect.stringContaining('nowhere') }]);
    const bad = await app.api('POST', `${W}/articles`, { key: t.key, body: { title: '', markdown: 1 } });
    expect(bad.body.error.details.map((d: any) => d.field).sort()).toEqual(['markdown', 'section', 'title']);
    const reader = await createKey(app, t.member.id, { permissions: ['article.read'], workspaceId: t.workspace.id });
    expect(
      (await app.api('POST', `${W}/articles`, { key: reader.key, body: { title: 'X', section: 'nowhere', markdown: '' } })).status,
    ).toBe(403);
  });

  it("gets by slug with an ETag; another workspace's article is 404", async () => {
    const t = await tenant(app);
    const other = await tenant(app);
    await section(t, 'Docs');
    const a = await article(t, 'Hello', 'docs');
    const res = await app.api('GET', `${W}/articles/hello`, { key: t.key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(a);
    expect(res.headers.get('etag')).toBe('"v1"');
    expect((await app.api('GET', `${W}/articles/hello`, { key: other.key })).status).toBe(404);
    expect((await app.api('GET', `/api/v1/workspaces/${t.workspace.id}/articles/hello`, { key: other.key })).status).toBe(404);
    expect((await app.api('GET', `${W}/articles/missing`, { key: t.key })).status).toBe(404);
  });

  it('follows the transition table and needs article.publish to change status', async () => {
    const t = await tenant(app);
    await section(t, 'Docs');
    await article(t, 'Flow', 'docs');
    const patch = (status: string, key = t.key) => app.api('PATCH', `${W}/articles/flow`, { key, body: { status } });
    const refused = await patch('DEPRECATED');
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toMatch(/DRAFT.*DEPRECATED/);
    expect(refused.body.error.details[0].field).toBe('status');
    const editor = await createKey(app, t.member.id, { permissions: ['article.read', 'article.update'], workspaceId: t.workspace.id });
    const noPublish = await patch('STABLE', editor.key);
    expect(noPublish.status).toBe(403);
    expect(noPublish.body.error.details).toEqual({ missing: ['article.publish'] });
    expect((await app.api('PATCH', `${W}/articles/flow`, { key: editor.key, body: { markdown: 'edited', status: 'DRAFT' } })).status).toBe(
      200,
    );
    const stable = await patch('STABLE');
    expect(stable.body).toMatchObject({ status: 'STABLE' });
    expect(stable.body.publishedAt).not.toBeNull();
    for (const [to, ok] of [
      ['DEPRECATED', 200],
      ['DRAFT', 400],
      ['ARCHIVED', 200],
      ['STABLE', 400],
      ['DEPRECATED', 400],
      ['DRAFT', 200],
    ] as const) {
      expect((await patch(to)).status, `→ ${to}`).toBe(ok);
    }
    const events = await app.gql('query($w: ID!) { auditEvents(workspaceId: $w) { action } }', { w: t.workspace.id });
    expect(events.data.auditEvents.filter((e: any) => e.action === 'article.status_changed')).toHaveLength(4);
  });

  it('honours If-Match: 412 on a stale ETag, and nothing changes', async () => {
    const t = await tenant(app);
    await section(t, 'Docs');
    await article(t, 'Etag', 'docs');
    const first = await app.api('PATCH', `${W}/articles/etag`, { key: t.key, headers: { 'if-match': '"v1"' }, body: { markdown: 'one' } });
    expect(first.status).toBe(200);
    expect(first.headers.get('etag')).toBe('"v2"');
    const stale = await app.api('PATCH', `${W}/articles/etag`, { key: t.key, headers: { 'if-match': '"v1"' }, body: { markdown: 'two' } });
    expect(stale.status).toBe(412);
    expect(stale.body.error).toMatchObject({ code: 'precondition_failed', details: { etag: '"v2"' } });
    expect((await app.api('GET', `${W}/articles/etag`, { key: t.key })).body.markdown).toBe('one');
    expect(
      (await app.api('PATCH', `${W}/articles/etag`, { key: t.key, headers: { 'if-match': 'W/"v2"' }, body: { markdown: 'two' } })).status,
    ).toBe(200);
    expect(
      (await app.api('PATCH', `${W}/articles/etag`, { key: t.key, headers: { 'if-match': '*' }, body: { markdown: 'three' } })).status,
    ).toBe(200);
  });

  it('needs a paid plan for restricted articles and hides them from viewer-role keys', async () => {
    const free = await tenant(app, { plan: 'free' });
    await section(free, 'Docs');
    await article(free, 'Open', 'docs');
    const res = await app.api('PATCH', `${W}/articles/open`, { key: free.key, body: { visibility: 'restricted' } });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('plan_required');
    expect(
      (
        await app.api('POST', `${W}/articles`, {
          key: free.key,
          body: { title: 'R', section: 'docs', markdown: '', visibility: 'restricted' },
        })
      ).status,
    ).toBe(403);

    const pro = await tenant(app, { plan: 'pro' });
    await section(pro, 'Docs');
    await article(pro, 'Public page', 'docs');
    await article(pro, 'Secret page', 'docs', { visibility: 'restricted' });
    const viewerMember = await app.gql(
      'mutation($o: ID!) { createMember(input: { organizationId: $o, email: "viewer@x.io", role: "viewer" }) { id } }',
      { o: pro.org.id },
    );
    const viewer = await createKey(app, viewerMember.data.createMember.id, {
      permissions: ['article.read'],
      workspaceId: pro.workspace.id,
    });
    expect((await app.api('GET', `${W}/articles/secret-page`, { key: viewer.key })).status).toBe(404);
    expect((await app.api('GET', `${W}/articles/secret-page`, { key: pro.key })).status).toBe(200);
    const tree = await app.api('GET', `${W}/articles`, { key: viewer.key });
    expect(tree.body[0].articles.map((a: any) => a.slug)).toEqual(['public-page']);
    expect(tree.body[0].articleCount).toBe(1);
  });

  it('answers 400 for an empty PATCH and 404 for an unknown slug', async () => {
    const t = await tenant(app);
    await section(t, 'Docs');
    await article(t, 'P', 'docs');
    expect((await app.api('PATCH', `${W}/articles/p`, { key: t.key, body: {} })).status).toBe(400);
    expect((await app.api('PATCH', `${W}/articles/nope`, { key: t.key, body: { title: 'x' } })).status).toBe(404);
    expect((await app.api('PATCH', `${W}/articles/p`, { key: t.key, body: { status: 'LIVE' } })).status).toBe(400);
  });
});

describe('placement (15)', () => {
  it('moves within and across sections, renumbering both atomically', async () => {
    const t = await tenant(app);
    await section(t, 'A');
    await section(t, 'B');
    for (const title of ['a1', 'a2', 'a3']) await article(t, title, 'a');
    await article(t, 'b1', 'b');
    const place = (slug: string, body: Record<string, unknown>) => app.api('POST', `${W}/articles/${slug}/placement`, { key: t.key, body });
    const moved = await place('a3', { section: 'a', position: 0 });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ slug: 'a3', section: 'a', position: 0 });
    expect(await order(t)).toEqual(['a:a3,a1,a2', 'b:b1']);
    expect((await place('a1', { section: 'b', position: 1 })).body).toMatchObject({ section: 'b', position: 1 });
    expect(await order(t)).toEqual(['a:a3,a2', 'b:b1,a1']);
    expect((await place('b1', { section: 'a' })).body).toMatchObject({ section: 'a', position: 2 });
    expect(await order(t)).toEqual(['a:a3,a2,b1', 'b:a1']);
    const tree = (await app.api('GET', `${W}/articles`, { key: t.key })).body;
    for (const s of tree) expect(s.articles.map((a: any) => a.position)).toEqual(s.articles.map((_: unknown, i: number) => i));
    const sections = (await app.api('GET', `${W}/sections`, { key: t.key })).body;
    expect(sections.map((s: any) => s.articleCount)).toEqual([3, 1]);
  });

  it('answers 400 for an unknown section or out-of-range position, 404 for an unknown article', async () => {
    const t = await tenant(app);
    await section(t, 'A');
    await article(t, 'x', 'a');
    const place = (slug: string, body: Record<string, unknown>) => app.api('POST', `${W}/articles/${slug}/placement`, { key: t.key, body });
    expect((await place('x', { section: 'zzz' })).status).toBe(400);
    const range = await place('x', { section: 'a', position: 2 });
    expect(range.status).toBe(400);
    expect(range.body.error.details[0].field).toBe('position');
    expect((await place('x', { section: 'a', position: -1 })).status).toBe(400);
    expect((await place('nope', { section: 'a' })).status).toBe(404);
    const reader = await createKey(app, t.member.id, { permissions: ['article.read'], workspaceId: t.workspace.id });
    expect((await app.api('POST', `${W}/articles/x/placement`, { key: reader.key, body: { section: 'a' } })).status).toBe(403);
  });

  it('keeps positions contiguous when many moves race', async () => {
    const t = await tenant(app);
    await section(t, 'A');
    await section(t, 'B');
    const slugs: string[] = [];
    for (let i = 0; i < 8; i++) slugs.push((await article(t, `r${i}`, i % 2 ? 'a' : 'b')).slug);
    await Promise.all(
      slugs.map((slug, i) =>
        app.api('POST', `${W}/articles/${slug}/placement`, { key: t.key, body: { section: i % 3 ? 'a' : 'b', position: 0 } }),
      ),
    );
    const tree = (await app.api('GET', `${W}/articles`, { key: t.key })).body;
    expect(tree.reduce((n: number, s: any) => n + s.articles.length, 0)).toBe(8);
    for (const s of tree) expect(s.articles.map((a: any) => a.position)).toEqual(s.articles.map((_: unknown, i: number) => i));
  });
});
