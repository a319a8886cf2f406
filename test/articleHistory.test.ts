import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { createKey, createMember, tenant, type Tenant } from './support/factories.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.close());

const W = '/api/v1/workspaces/-';

async function ok(res: Promise<{ status: number; body: any }>, status = 200): Promise<any> {
  const r = await res;
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  return r.body;
}
const section = (t: Tenant, label: string, extra: Record<string, unknown> = {}) =>
  ok(app.api('POST', `${W}/sections`, { key: t.key, body: { label, ...extra } }), 201);
const create = (t: Tenant, title: string, markdown: string, extra: Record<string, unknown> = {}) =>
  ok(app.api('POST', `${W}/articles`, { key: t.key, body: { title, section: 'docs', markdown, ...extra } }), 201);
const patch = (t: Tenant, slug: string, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  app.api('PATCH', `${W}/articles/${slug}`, { key: t.key, body, headers });
const revisions = (key: string, slug: string, extra = '') => app.api('GET', `${W}/articles/${slug}/revisions${extra}`, { key });
const revision = (key: string, slug: string, version: number | string) =>
  app.api('GET', `${W}/articles/${slug}/revisions/${version}`, { key });
const diff = (key: string, slug: string, query: string) => app.api('GET', `${W}/articles/${slug}/diff?${query}`, { key });
const restore = (key: string, slug: string, version: number | string, headers: Record<string, string> = {}) =>
  app.api('POST', `${W}/articles/${slug}/revisions/${version}/restore`, { key, headers });

/** A viewer-role key of the tenant's organization, bound to its workspace. */
async function viewerKey(t: Tenant, permissions = ['article.read']): Promise<string> {
  const member = await createMember(app, t.org.id, { role: 'viewer' });
  return (await createKey(app, member.id, { permissions, workspaceId: t.workspace.id })).key;
}

describe('article revisions', () => {
  it('records a version for every create, edit, status change and move, with who and what changed', async () => {
    const t = await tenant(app);
    await section(t, 'Docs');
    await section(t, 'Guides');
    await create(t, 'Install', 'one\ntwo\n');
    await ok(patch(t, 'install', { markdown: 'one\n2\n' }));
    await ok(patch(t, 'install', { status: 'STABLE' }));
    await ok(app.api('POST', `${W}/articles/install/placement`, { key: t.key, body: { section: 'guides' } }));
    const list = await revisions(t.key, 'install');
    expect(list.status).toBe(200);
    expect(list.body.map((r: any) => [r.version, r.action, r.changed, r.status, r.section])).toEqual([
      [4, 'moved', ['section'], 'STABLE', 'guides'],
      [3, 'status_changed', ['status'], 'STABLE', 'docs'],
      [2, 'updated', ['markdown'], 'DRAFT', 'docs'],
      [1, 'created', [], 'DRAFT', 'docs'],
    ]);
    expect(list.body[0]).toMatchObject({ agentKeyId: t.keyId, memberId: t.member.id, title: 'Install', size: 6, proposalId: null });
    expect(list.body[0]).not.toHaveProperty('markdown');
    // The current version is readable too, with its Markdown, as GET has it.
    const current = await ok(revision(t.key, 'install', 4));
    const article = await ok(app.api('GET', `${W}/articles/install`, { key: t.key }));
    expect(current).toMatchObject({ version: article.version, markdown: article.markdown, title: article.title });
    expect((await ok(revision(t.key, 'install', 1))).markdown).toBe('one\ntwo\n');
  });

  it('paginates newest first with a cursor and a Link header', async () => {
    const t = await tenant(app);
    await section(t, 'Docs');
    await create(t, 'Paged', 'v1');
    for (let v = 2; v <= 5; v++) await ok(patch(t, 'paged', { markdown: `v${v}` }));
    const first = await revisions(t.key, 'paged', '?limit=2');
    expect(first.body.map((r: any) => r.version)).toEqual([5, 4]);
    const next = /<([^>]+)>; rel="next"/.exec(first.headers.get('link') ?? '')?.[1];
    expect(next).toBeTruthy();
    const second = await app.api('GET', new URL(next!, 'http://x').pathname + new URL(next!, 'http://x').search, { key: t.key });
    expect(second.body.map((r: any) => r.version)).toEqual([3, 2]);
    expect((await revisions(t.key, 'paged', '?limit=0')).status).toBe(400);
    expect((await revisions(t.key, 'paged', '?cursor=nonsense')).status).toBe(400);
  });

  it('records an approved proposal with its id and summary', async () => {
    const t = await tenant(app);
    await section(t, 'Docs');
    await create(t, 'Faq', 'old answer');
    const proposal = await ok(
      app.api('POST', `${W}/proposals`, { key: t.key, body: { article: 'faq', markdown: 'new answer', summary: 'Fix the answer' } }),
      201,
    );
    const approved = await app.gql(
      'mutation($id: Int!) { approveProposal(workspace: "-", id: $id) { status } }',
      { id: proposal.id },
      t.key,
    );
    expect(approved.errors).toBeUndefined();
    const [latest] = (await revisions(t.key, 'faq')).body;
    expect(latest).toMatchObject({
      version: 2,
      action: 'proposal_approved',
      proposalId: proposal.id,
      summary: 'Fix the answer',
      changed: ['markdown'],
    });
  });

  it('diffs two versions: changed fields and a unified diff of the Markdown; `to` defaults to the current version', async () => {
    const t = await tenant(app);
    await section(t, 'Docs');
    await create(t, 'Guide', 'alpha\nbeta\ngamma\n');
    await ok(patch(t, 'guide', { title: 'The guide', markdown: 'alpha\nBETA\ngamma\ndelta\n', status: 'STABLE' }));
    const d = await ok(diff(t.key, 'guide', 'from=1'));
    expect(d).toMatchObject({ slug: 'guide', from: 1, to: 2, additions: 2, deletions: 1 });
    expect(d.changes).toEqual([
      { field: 'title', from: 'Guide', to: 'The guide' },
      { field: 'status', from: 'DRAFT', to: 'STABLE' },
    ]);
    expect(d.diff).toContain('--- guide@v1\n+++ guide@v2\n@@ -1,3 +1,4 @@\n alpha\n-beta\n+BETA\n gamma\n+delta\n');
    const back = await ok(diff(t.key, 'guide', 'from=2&to=1'));
    expect(back).toMatchObject({ from: 2, to: 1, additions: 1, deletions: 2 });
    const same = await ok(diff(t.key, 'guide', 'from=2&to=2'));
    expect(same).toMatchObject({ changes: [], additions: 0, deletions: 0 });
    expect((await diff(t.key, 'guide', 'from=1&to=9')).status).toBe(404);
    for (const bad of ['', 'from=x', 'from=0', 'from=1&to=-1']) {
      const res = await diff(t.key, 'guide', bad);
      expect(res.status, bad).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
    }
  });

  it('restores the title and Markdown of an earlier version as a new version, honouring If-Match', async () => {
    const t = await tenant(app);
    await section(t, 'Docs');
    await create(t, 'Setup', 'good text');
    await ok(patch(t, 'setup', { title: 'Setup (broken)', markdown: 'vandalised', status: 'STABLE' }));
    const stale = await restore(t.key, 'setup', 1, { 'if-match': '"v1"' });
    expect(stale.status).toBe(412);
    expect(stale.body.error).toMatchObject({ code: 'precondition_failed', details: { etag: '"v2"' } });
    expect((await revisions(t.key, 'setup')).body).toHaveLength(2);
    const restored = await restore(t.key, 'setup', 1, { 'if-match': '"v2"' });
    expect(restored.status).toBe(200);
    expect(restored.headers.get('etag')).toBe('"v3"');
    expect(restored.body).toMatchObject({ title: 'Setup', markdown: 'good text', status: 'STABLE', version: 3 });
    const [latest] = (await revisions(t.key, 'setup')).body;
    expect(latest).toMatchObject({ version: 3, action: 'restored', restoredFrom: 1, changed: ['title', 'markdown'], agentKeyId: t.keyId });
    expect(latest.summary).toContain('version 1');
    // An audit event records the restore.
    const events = await app.gql('query($w: ID!) { auditEvents(workspaceId: $w, limit: 5) { action targetId } }', { w: t.workspace.id });
    expect(events.data.auditEvents[0]).toMatchObject({ action: 'article.updated', targetId: 'setup' });
    expect((await restore(t.key, 'setup', 99)).status).toBe(404);
    expect((await restore(t.key, 'nope', 1)).status).toBe(404);
    expect((await restore(t.key, 'setup', 'x')).status).toBe(400);
    expect((await restore(t.key, 'setup', 1, { 'if-match': 'x'.repeat(5000) })).status).toBe(400);
  });

  it('needs article.read to read history and article.update to restore (403)', async () => {
    const t = await tenant(app);
    await section(t, 'Docs');
    await create(t, 'Locked', 'text');
    const reader = await createKey(app, t.member.id, { permissions: ['article.read'], workspaceId: t.workspace.id });
    const nobody = await createKey(app, t.member.id, { permissions: ['memory.read'], workspaceId: t.workspace.id });
    expect((await revisions(reader.key, 'locked')).status).toBe(200);
    expect((await diff(reader.key, 'locked', 'from=1')).status).toBe(200);
    const refused = await restore(reader.key, 'locked', 1);
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('permission_denied');
    for (const res of [
      await revisions(nobody.key, 'locked'),
      await revision(nobody.key, 'locked', 1),
      await diff(nobody.key, 'locked', 'from=1'),
    ])
      expect(res.status).toBe(403);
    expect((await revisions(t.key, 'locked')).body).toHaveLength(1);
  });

  it('refuses to restore a page generated from the OpenAPI spec (409), like an edit', async () => {
    const t = await tenant(app);
    const spec = {
      openapi: '3.0.3',
      info: { title: 'Pets', version: '1' },
      paths: { '/pets': { get: { operationId: 'listPets', tags: ['pets'], responses: { 200: { description: 'OK' } } } } },
    };
    await ok(app.api('PUT', `${W}/openapi`, { key: t.key, body: { spec } }));
    const [page] = (await ok(app.api('GET', `${W}/openapi/pages`, { key: t.key }))) as any[];
    const history = await ok(revisions(t.key, page.slug));
    expect(history[0]).toMatchObject({ version: 1, action: 'synced' });
    const res = await restore(t.key, page.slug, 1);
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({ code: 'conflict', details: { state: 'generated' } });
  });

  it('keeps restricted content from viewer keys in every history endpoint', async () => {
    const t = await tenant(app, { plan: 'pro' });
    await section(t, 'Docs');
    await section(t, 'Vault', { visibility: 'restricted' });
    await create(t, 'Secret', 'classified', { visibility: 'restricted' });
    await create(t, 'Opened', 'draft while restricted', { visibility: 'restricted' });
    await ok(patch(t, 'opened', { visibility: 'public', markdown: 'public text' }));
    const viewer = await viewerKey(t);
    // A restricted article: 404 everywhere, as for GET.
    for (const res of [await revisions(viewer, 'secret'), await revision(viewer, 'secret', 1), await diff(viewer, 'secret', 'from=1')]) {
      expect(res.status).toBe(404);
      expect(JSON.stringify(res.body)).not.toContain('classified');
    }
    // Now public, its restricted past stays hidden: only version 2 is listed, version 1 is 404.
    expect((await revisions(viewer, 'opened')).body.map((r: any) => r.version)).toEqual([2]);
    expect((await revision(viewer, 'opened', 1)).status).toBe(404);
    expect((await diff(viewer, 'opened', 'from=1&to=2')).status).toBe(404);
    expect((await revision(viewer, 'opened', 2)).body.markdown).toBe('public text');
    // The owner's key sees both.
    expect((await revisions(t.key, 'opened')).body.map((r: any) => r.version)).toEqual([2, 1]);
    // An article moved into a restricted section: that version is hidden from viewers.
    await create(t, 'Moving', 'text');
    await ok(app.api('POST', `${W}/articles/moving/placement`, { key: t.key, body: { section: 'vault' } }));
    expect((await revision(viewer, 'moving', 2)).status).toBe(404);
  });

  it("answers 404 for another tenant's article and versions", async () => {
    const a = await tenant(app);
    const b = await tenant(app);
    await section(b, 'Docs');
    await create(b, 'Private', 'b only');
    for (const res of [
      await revisions(a.key, 'private'),
      await revision(a.key, 'private', 1),
      await diff(a.key, 'private', 'from=1'),
      await restore(a.key, 'private', 1),
    ])
      expect(res.status).toBe(404);
    expect((await revisions(b.key, 'private')).body).toHaveLength(1);
  });

  it('is the same over GraphQL', async () => {
    const t = await tenant(app);
    await section(t, 'Docs');
    await create(t, 'Gql', 'first');
    await ok(patch(t, 'gql', { markdown: 'second' }));
    const res = await app.gql(
      `query { articleRevisions(workspace: "-", slug: "gql") { items { version action } nextCursor }
               articleDiff(workspace: "-", slug: "gql", from: 1) { additions deletions } }`,
      {},
      t.key,
    );
    expect(res.errors).toBeUndefined();
    expect(res.data.articleRevisions.items).toEqual([
      { version: 2, action: 'updated' },
      { version: 1, action: 'created' },
    ]);
    const stale = await app.gql(
      'mutation { restoreArticle(workspace: "-", slug: "gql", version: 1, ifMatch: "\\"v1\\"") { version } }',
      {},
      t.key,
    );
    expect(stale.errors?.[0].extensions?.code).toBe('precondition_failed');
  });
});
