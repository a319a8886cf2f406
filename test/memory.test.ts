import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { createKey, tenant, type Tenant } from './support/factories.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.close());

const NOTE = '/api/v1/workspaces/-/memory/note';
const note = (path: string, over: Record<string, unknown> = {}) => ({
  path,
  body: `Body of ${path}`,
  kind: 'note',
  links: [],
  tags: [],
  ...over,
});

async function put(t: Tenant, path: string, over: Record<string, unknown> = {}) {
  return app.api('PUT', NOTE, { key: t.key, body: note(path, over) });
}

async function get(t: Tenant, path: string) {
  return app.api('GET', `${NOTE}?path=${encodeURIComponent(path)}`, { key: t.key });
}

async function seed(t: Tenant, count: number, prefix = 'n') {
  // Through the GraphQL mutation in parallel batches (same service as PUT), to reach quotas quickly.
  for (let i = 0; i < count; i += 25) {
    await Promise.all(
      Array.from({ length: Math.min(25, count - i) }, (_, j) =>
        app
          .gql(
            'mutation($input: PutMemoryNoteInput!) { putMemoryNote(workspace: "-", input: $input) { id } }',
            { input: note(`${prefix}/${i + j}`) },
            t.key,
          )
          .then((r) => {
            if (r.errors) throw new Error(JSON.stringify(r.errors));
          }),
      ),
    );
  }
}

describe('PUT /memory/note (7)', () => {
  it('creates on a new path and updates on an existing one, keeping id and createdAt', async () => {
    const t = await tenant(app);
    const created = await put(t, 'runbooks/deploy', { tags: ['ops', 'say "hi"', 'back\\slash, {braces}'], links: ['/runbooks/rollback/'] });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({
      workspaceId: t.workspace.id,
      path: 'runbooks/deploy',
      kind: 'note',
      tags: ['ops', 'say "hi"', 'back\\slash, {braces}'],
      links: ['runbooks/rollback'],
    });
    expect(Object.keys(created.body).sort()).toEqual([
      'accessedAt',
      'body',
      'createdAt',
      'id',
      'kind',
      'links',
      'path',
      'tags',
      'updatedAt',
      'version',
      'workspaceId',
    ]);
    expect(created.body.version).toBe(1);
    expect(created.headers.get('etag')).toBe('"v1"');
    await new Promise((r) => setTimeout(r, 10));
    const updated = await put(t, '/runbooks/deploy', { body: 'v2', kind: 'runbook' });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ id: created.body.id, createdAt: created.body.createdAt, body: 'v2', kind: 'runbook', version: 2 });
    expect(updated.headers.get('etag')).toBe('"v2"');
    expect(new Date(updated.body.updatedAt).getTime()).toBeGreaterThan(new Date(created.body.updatedAt).getTime());
    const events = await app.gql('query($w: ID!) { auditEvents(workspaceId: $w, limit: 2) { action targetId } }', { w: t.workspace.id });
    expect(events.data.auditEvents).toEqual([
      { action: 'memory.note.updated', targetId: 'runbooks/deploy' },
      { action: 'memory.note.created', targetId: 'runbooks/deploy' },
    ]);
  });

  it('accepts a 16,384-byte body and refuses 16,385 bytes, counting UTF-8 bytes', async () => {
    const t = await tenant(app);
    const euro = '€'.repeat(5461); // 3 bytes each: 16,383 bytes
    expect((await put(t, 'a', { body: `${euro}x` })).status).toBe(200); // 16,384
    const over = await put(t, 'b', { body: `${euro}xy` }); // 16,385 bytes in 5,463 characters
    expect(over.status).toBe(400);
    expect(over.body.error.details).toEqual([{ field: 'body', message: expect.stringContaining('16385') }]);
    expect((await get(t, 'b')).status).toBe(404);
  });

  it.each([
    ['', 'path'],
    ['/', 'path'],
    ['a//b', 'path'],
    ['a/./b', 'path'],
    ['../etc/passwd', 'path'],
    ['a/..', 'path'],
    ['bad\u0000byte', 'path'],
    ['tab\there', 'path'],
    ['x'.repeat(513), 'path'],
    ['é'.repeat(257), 'path'],
  ])('refuses the path %j with 400 naming it', async (path, field) => {
    const t = await tenant(app);
    const res = await put(t, path);
    expect(res.status).toBe(400);
    expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
  });

  it('answers a PUT with the note as stored, which a GET then reads: a lone surrogate becomes U+FFFD in both', async () => {
    const t = await tenant(app);
    const sent = { body: 'half \ud800 of a pair, then 😀 and é', tags: ['odd\udc00tag', 'ok'], links: ['docs/\ud83dx'] };
    const written = await put(t, 'surrogates/one', sent);
    expect(written.status, JSON.stringify(written.body)).toBe(200);
    const read = await get(t, 'surrogates/one');
    expect(read.status).toBe(200);
    expect(written.body.body).toBe('half \ufffd of a pair, then 😀 and é');
    expect(written.body.tags).toEqual(['odd\ufffdtag', 'ok']);
    expect(written.body.links).toEqual(['docs/\ufffdx']);
    for (const field of ['body', 'tags', 'links', 'kind', 'path', 'version', 'createdAt', 'updatedAt', 'id', 'workspaceId'])
      expect(read.body[field], field).toEqual(written.body[field]);
    // An update answers the same way.
    const again = await put(t, 'surrogates/one', { ...sent, body: 'second \udfff' });
    expect(again.body).toMatchObject({ body: 'second \ufffd', version: 2, id: written.body.id, createdAt: written.body.createdAt });
    expect((await get(t, 'surrogates/one')).body.body).toBe('second \ufffd');
  });

  it('treats paths as case-sensitive', async () => {
    const t = await tenant(app);
    await put(t, 'Notes/A');
    await put(t, 'notes/a');
    expect((await get(t, 'Notes/A')).body.body).toBe('Body of Notes/A');
    expect((await get(t, 'notes/a')).body.body).toBe('Body of notes/a');
  });

  it.each([
    [{ kind: 'has space' }, 'kind'],
    [{ kind: '' }, 'kind'],
    [{ tags: Array.from({ length: 21 }, (_, i) => `t${i}`) }, 'tags'],
    [{ tags: [''] }, 'tags[0]'],
    [{ links: ['a//b'] }, 'links[0]'],
    [{ links: 'x' }, 'links'],
    [{ body: null }, 'body'],
    [{ extra: 1 }, 'extra'],
  ])('refuses %j with 400', async (over, field) => {
    const t = await tenant(app);
    const res = await put(t, 'p', over);
    expect(res.status).toBe(400);
    expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
  });

  it('requires every field', async () => {
    const t = await tenant(app);
    const res = await app.api('PUT', NOTE, { key: t.key, body: { path: 'p' } });
    expect(res.status).toBe(400);
    expect(res.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(['body', 'kind', 'links', 'tags']);
  });

  it('needs memory.write: a read-only key gets 403 on PUT and DELETE', async () => {
    const t = await tenant(app);
    await put(t, 'kept');
    const reader = await createKey(app, t.member.id, { permissions: ['memory.read'], workspaceId: t.workspace.id });
    const putRes = await app.api('PUT', NOTE, { key: reader.key, body: note('kept', { body: 'changed' }) });
    expect(putRes.status).toBe(403);
    expect(putRes.body.error.details).toEqual({ missing: ['memory.write'] });
    expect((await app.api('DELETE', `${NOTE}?path=kept`, { key: reader.key })).status).toBe(403);
    expect((await app.api('GET', `${NOTE}?path=kept`, { key: reader.key })).body.body).toBe('Body of kept');
  });
});

describe('quota (rule 2)', () => {
  it('holds exactly at 200 on free: the 201st is 409, updates stay allowed, a delete frees a slot', async () => {
    const t = await tenant(app, { plan: 'free' });
    await seed(t, 200);
    const over = await put(t, 'one-too-many');
    expect(over.status).toBe(409);
    expect(over.body.error).toMatchObject({
      code: 'memory_quota_exceeded',
      status: 409,
      details: { limit: 200, usage: 200, plan: 'free' },
    });
    expect((await put(t, 'n/7', { body: 'updated at quota' })).status).toBe(200);
    expect((await app.api('DELETE', `${NOTE}?path=n/3`, { key: t.key })).status).toBe(200);
    expect((await put(t, 'one-too-many')).status).toBe(200);
    expect((await put(t, 'and-another')).status).toBe(409);
  }, 60_000);

  it('counts again before refusing: a counter that drifted above the real count is corrected, not obeyed', async () => {
    const t = await tenant(app, { plan: 'free' });
    await seed(t, 3);
    const db = app.server.orm.em.fork().getConnection();
    await db.execute('update memory_usage set used = 200 where workspace_id = ?', [t.workspace.id]);
    expect((await put(t, 'fits-after-all')).status).toBe(200);
    expect((await db.execute('select used from memory_usage where workspace_id = ?', [t.workspace.id]))[0].used).toBe(4);
  });

  it('is 10,000 on pro, so the 201st note is fine', async () => {
    const t = await tenant(app, { plan: 'pro' });
    await seed(t, 200);
    expect((await put(t, 'the-201st')).status).toBe(200);
  }, 60_000);
});

describe('GET /memory/note (6) and DELETE (8)', () => {
  it('reads by path, advancing accessedAt; 404 when absent', async () => {
    const t = await tenant(app);
    const created = await put(t, 'docs/a');
    await new Promise((r) => setTimeout(r, 1100)); // accessedAt has 1-second resolution
    const read = await get(t, 'docs/a');
    expect(read.status).toBe(200);
    expect(read.body.body).toBe('Body of docs/a');
    expect(new Date(read.body.accessedAt).getTime()).toBeGreaterThan(new Date(created.body.accessedAt).getTime());
    expect((await get(t, 'docs/missing')).status).toBe(404);
    const missingParam = await app.api('GET', NOTE, { key: t.key });
    expect(missingParam.status).toBe(400);
    expect(missingParam.body.error.details[0]).toMatchObject({ field: 'path', in: 'query' });
  });

  it('deletes by path, then 404', async () => {
    const t = await tenant(app);
    await put(t, 'tmp/x');
    const res = await app.api('DELETE', `${NOTE}?path=/tmp/x`, { key: t.key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ path: 'tmp/x', deleted: true });
    expect((await app.api('DELETE', `${NOTE}?path=tmp/x`, { key: t.key })).status).toBe(404);
    expect((await get(t, 'tmp/x')).status).toBe(404);
  });

  it("answers another workspace's note with 404", async () => {
    const a = await tenant(app);
    const b = await tenant(app);
    await put(b, 'secret/plan');
    expect((await get(a, 'secret/plan')).status).toBe(404);
    expect((await app.api('DELETE', `${NOTE}?path=secret/plan`, { key: a.key })).status).toBe(404);
    expect((await app.api('GET', `/api/v1/workspaces/${b.workspace.id}/memory/note?path=secret/plan`, { key: a.key })).status).toBe(404);
    expect((await get(b, 'secret/plan')).status).toBe(200);
  });
});

describe('GET /memory (5): the index', () => {
  it('lists entries without bodies, sorted by path, filtered by prefix, tag and kind, paginated', async () => {
    const t = await tenant(app);
    await put(t, 'ops/deploy', { tags: ['ops', 'prod'], kind: 'runbook' });
    await put(t, 'ops/rollback', { tags: ['ops'], kind: 'runbook' });
    await put(t, 'ops', { kind: 'note' });
    await put(t, 'opsx/other', { tags: ['ops'] });
    await put(t, 'people/ana', { body: 'ñ' });
    const all = await app.api('GET', '/api/v1/workspaces/-/memory', { key: t.key });
    expect(all.status).toBe(200);
    expect(all.body.map((e: { path: string }) => e.path)).toEqual(['ops', 'ops/deploy', 'ops/rollback', 'opsx/other', 'people/ana']);
    expect(all.body[4]).toEqual({
      path: 'people/ana',
      kind: 'note',
      tags: [],
      size: 2,
      updatedAt: expect.any(String),
      accessedAt: expect.any(String),
    });
    const q = (s: string) =>
      app.api('GET', `/api/v1/workspaces/-/memory?${s}`, { key: t.key }).then((r) => r.body.map((e: { path: string }) => e.path));
    expect(await q('prefix=ops')).toEqual(['ops', 'ops/deploy', 'ops/rollback']);
    expect(await q('prefix=/ops/')).toEqual(['ops', 'ops/deploy', 'ops/rollback']);
    expect(await q('tag=ops')).toEqual(['ops/deploy', 'ops/rollback', 'opsx/other']);
    expect(await q('kind=runbook&tag=prod')).toEqual(['ops/deploy']);
    const page1 = await app.api('GET', '/api/v1/workspaces/-/memory?limit=2', { key: t.key });
    expect(page1.body.map((e: { path: string }) => e.path)).toEqual(['ops', 'ops/deploy']);
    const next = /<([^>]+)>; rel="next"/.exec(page1.headers.get('link')!)![1];
    const page2 = await app.api('GET', next, { key: t.key });
    expect(page2.body.map((e: { path: string }) => e.path)).toEqual(['ops/rollback', 'opsx/other']);
    expect((await app.api('GET', '/api/v1/workspaces/-/memory?prefix=a//b', { key: t.key })).status).toBe(400);
  });
});

describe('GET /memory/search (9)', () => {
  it('finds a body word, a tag and a path segment, ranking the better match first, with snippets', async () => {
    const t = await tenant(app);
    await put(t, 'guides/kubernetes', { body: 'How we run the cluster.', tags: ['infra'] });
    await put(t, 'notes/misc', { body: 'Random thoughts; kubernetes is mentioned once here among many other words about lunch.' });
    await put(t, 'teams/payments', { body: 'The payments team owns billing.', tags: ['finance'] });
    const search = (q: string) => app.api('GET', `/api/v1/workspaces/-/memory/search?q=${encodeURIComponent(q)}`, { key: t.key });
    const k = await search('kubernetes');
    expect(k.status).toBe(200);
    expect(k.body.map((h: { path: string }) => h.path)).toEqual(['guides/kubernetes', 'notes/misc']);
    expect(k.body[0].score).toBeGreaterThan(k.body[1].score);
    expect(k.body[1].snippet).toContain('<mark>kubernetes</mark>');
    expect((await search('billing')).body.map((h: { path: string }) => h.path)).toEqual(['teams/payments']);
    expect((await search('finance')).body.map((h: { path: string }) => h.path)).toEqual(['teams/payments']);
    expect((await search('guides')).body.map((h: { path: string }) => h.path)).toEqual(['guides/kubernetes']);
    expect((await search('"payments team" -lunch')).body.map((h: { path: string }) => h.path)).toEqual(['teams/payments']);
    expect((await search('nothing-like-this')).body).toEqual([]);
  });

  it("paginates and never shows another workspace's notes", async () => {
    const t = await tenant(app);
    const other = await tenant(app);
    await put(other, 'theirs/alpha', { body: 'alpha' });
    for (let i = 0; i < 3; i++) await put(t, `alpha/${i}`, { body: 'alpha' });
    const first = await app.api('GET', '/api/v1/workspaces/-/memory/search?q=alpha&limit=2', { key: t.key });
    expect(first.body).toHaveLength(2);
    const next = /<([^>]+)>; rel="next"/.exec(first.headers.get('link')!)![1];
    const second = await app.api('GET', next, { key: t.key });
    expect([...first.body, ...second.body].map((h: { path: string }) => h.path).sort()).toEqual(['alpha/0', 'alpha/1', 'alpha/2']);
  });

  it('answers 400 when q is missing or blank', async () => {
    const t = await tenant(app);
    expect((await app.api('GET', '/api/v1/workspaces/-/memory/search', { key: t.key })).status).toBe(400);
    const blank = await app.api('GET', '/api/v1/workspaces/-/memory/search?q=%20%20', { key: t.key });
    expect(blank.status).toBe(400);
    expect(blank.body.error.details[0].field).toBe('q');
  });

  it('needs memory.read', async () => {
    const t = await tenant(app, { permissions: ['memory.write'] });
    expect((await app.api('GET', '/api/v1/workspaces/-/memory/search?q=x', { key: t.key })).status).toBe(403);
    expect((await app.api('GET', '/api/v1/workspaces/-/memory', { key: t.key })).status).toBe(403);
    expect((await get(t, 'x')).status).toBe(403);
  });
});

describe('GraphQL memory', () => {
  it("shows backlinks: notes whose links contain the note's path", async () => {
    const t = await tenant(app);
    await put(t, 'hub');
    await put(t, 'spoke/1', { links: ['hub'] });
    await put(t, 'spoke/2', { links: ['/hub', 'https://example.com/x'] });
    await put(t, 'unrelated', { links: ['elsewhere'] });
    const res = await app.gql('{ memoryNote(workspace: "-", path: "hub") { path backlinks { path size } } }', {}, t.key);
    expect(res.data.memoryNote.backlinks.map((b: { path: string }) => b.path)).toEqual(['spoke/1', 'spoke/2']);
  });
});
