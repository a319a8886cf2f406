import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type ApiResponse, type TestApp } from './support/app.js';
import { createKey, tenant, type Tenant } from './support/factories.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.close());

const base = (ws = '-') => `/api/v1/workspaces/${ws}/changelog`;
const entry = (over: Record<string, unknown> = {}) => ({
  title: 'Faster search',
  markdown: '## Search\nNow 2× faster.',
  status: 'published',
  tags: ['search'],
  published_at: null,
  ...over,
});

async function create(t: Tenant, over: Record<string, unknown> = {}) {
  const res = await app.api('POST', base(), { key: t.key, body: entry(over) });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

async function auditActions(t: Tenant): Promise<string[]> {
  const res = await app.gql('query($w: ID!) { auditEvents(workspaceId: $w) { action } }', { w: t.workspace.id });
  return res.data.auditEvents.map((e: { action: string }) => e.action);
}

describe('POST /changelog (2)', () => {
  it('creates a published entry with camelCase fields, author = key name, publishedAt defaulted to now', async () => {
    const t = await tenant(app);
    const before = Date.now();
    const body = await create(t, { tags: ['search', 'search', ' perf '] });
    expect(body).toMatchObject({
      title: 'Faster search',
      markdown: '## Search\nNow 2× faster.',
      status: 'published',
      tags: ['search', 'perf'],
    });
    expect(Number.isInteger(body.id)).toBe(true);
    expect(body.author).toMatch(/^key-/);
    expect(new Date(body.publishedAt).getTime()).toBeGreaterThanOrEqual(before - 1000);
    expect(body).not.toHaveProperty('published_at');
    expect(await auditActions(t)).toContain('changelog.created');
  });

  it('keeps an explicit published_at, and drafts without one have none', async () => {
    const t = await tenant(app);
    expect((await create(t, { published_at: '2025-01-02T03:04:05Z' })).publishedAt).toBe('2025-01-02T03:04:05.000Z');
    expect((await create(t, { status: 'draft' })).publishedAt).toBeNull();
  });

  it('needs changelog.publish to publish, but not to create a draft; a refused call writes nothing', async () => {
    const t = await tenant(app, { permissions: ['changelog.read', 'changelog.update'] });
    const res = await app.api('POST', base(), { key: t.key, body: entry() });
    expect(res.status).toBe(403);
    expect(res.body.error).toMatchObject({ code: 'permission_denied', details: { missing: ['changelog.publish'] } });
    expect(await auditActions(t)).not.toContain('changelog.created');
    expect((await app.api('POST', base(), { key: t.key, body: entry({ status: 'draft' }) })).status).toBe(201);
  });

  it('answers 400 naming every bad field, and changes nothing', async () => {
    const t = await tenant(app);
    const res = await app.api('POST', base(), {
      key: t.key,
      body: { title: '', markdown: 5, status: 'live', tags: ['x'.repeat(51)], extra: true },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_request');
    const fields = res.body.error.details.map((d: { field: string }) => d.field).sort();
    expect(fields).toEqual(['extra', 'markdown', 'published_at', 'status', 'tags[0]', 'title']);
    const list = await app.api('GET', `${base()}?drafts=true`, { key: t.key });
    expect(list.body).toEqual([]);
    expect(await auditActions(t)).not.toContain('changelog.created');
  });

  it.each([
    ['malformed JSON', { rawBody: '{"title": ', headers: { 'content-type': 'application/json' } }, 'body'],
    ['no body', { headers: { 'content-type': 'application/json' } }, 'body'],
    ['a non-JSON content type', { rawBody: 'title=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } }, 'body'],
    ['an array body', { body: [1, 2] }, 'body'],
    ['a bad published_at', { body: entry({ published_at: 'yesterday' }) }, 'published_at'],
    ['tags that are not strings', { body: entry({ tags: [1] }) }, 'tags[0]'],
  ])('answers 400 for %s', async (_name, options, field) => {
    const t = await tenant(app);
    const res = await app.api('POST', base(), { key: t.key, ...(options as object) });
    expect(res.status).toBe(400);
    expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
  });

  it('answers 400 for a body over 1 MiB', async () => {
    const t = await tenant(app);
    const res = await app.api('POST', base(), { key: t.key, body: entry({ markdown: 'x'.repeat(1024 * 1024 + 10) }) });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/exceeds/);
  });
});

describe('GET /changelog (1)', () => {
  it('lists published entries newest publishedAt first; drafts only with drafts=true and changelog.update', async () => {
    const t = await tenant(app);
    const old = await create(t, { title: 'old', published_at: '2024-01-01T00:00:00Z' });
    const recent = await create(t, { title: 'recent', published_at: '2026-01-01T00:00:00Z' });
    const draft = await create(t, { title: 'draft', status: 'draft' });
    const list = await app.api('GET', base(), { key: t.key });
    expect(list.status).toBe(200);
    expect(list.body.map((e: { id: number }) => e.id)).toEqual([recent.id, old.id]);
    const withDrafts = await app.api('GET', `${base()}?drafts=true`, { key: t.key });
    expect(withDrafts.body.map((e: { id: number }) => e.id)).toEqual([draft.id, recent.id, old.id]);

    const reader = await createKey(app, t.member.id, { permissions: ['changelog.read'], workspaceId: t.workspace.id });
    const ignored = await app.api('GET', `${base()}?drafts=true`, { key: reader.key });
    expect(ignored.status).toBe(200);
    expect(ignored.body.map((e: { id: number }) => e.id)).toEqual([recent.id, old.id]);
  });

  it('paginates with limit and an opaque cursor in Link rel="next", the body staying a bare array', async () => {
    const t = await tenant(app);
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) ids.push((await create(t, { title: `e${i}`, published_at: `2026-0${i + 1}-01T00:00:00Z` })).id);
    const seen: number[] = [];
    let url: string | null = `${base()}?limit=2`;
    let pages = 0;
    while (url) {
      const res: ApiResponse = await app.api('GET', url, { key: t.key });
      expect(res.status).toBe(200);
      expect(Array.isArray(res.body)).toBe(true);
      seen.push(...res.body.map((e: { id: number }) => e.id));
      const link: string | null = res.headers.get('link');
      url = link ? /<([^>]+)>; rel="next"/.exec(link)![1] : null;
      pages++;
    }
    expect(pages).toBe(3);
    expect(seen).toEqual([...ids].reverse());
  });

  it.each([
    ['limit=0', 'limit'],
    ['limit=101', 'limit'],
    ['limit=abc', 'limit'],
    ['drafts=maybe', 'drafts'],
    ['cursor=garbage', 'cursor'],
    ['color=red', 'color'],
  ])('answers 400 for ?%s naming %s', async (query, field) => {
    const t = await tenant(app);
    const res = await app.api('GET', `${base()}?${query}`, { key: t.key });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_request');
    expect(JSON.stringify(res.body.error.details)).toContain(`"field":"${field}"`);
  });

  it("never shows another workspace's entries", async () => {
    const a = await tenant(app);
    const b = await tenant(app);
    await create(a, { title: 'only in a' });
    expect((await app.api('GET', base(), { key: b.key })).body).toEqual([]);
  });
});

describe('PATCH /changelog/{id} (4)', () => {
  it('updates the given fields only and advances updatedAt', async () => {
    const t = await tenant(app);
    const created = await create(t);
    await new Promise((r) => setTimeout(r, 5));
    const res = await app.api('PATCH', `${base()}/${created.id}`, { key: t.key, body: { title: 'Renamed', tags: ['a'] } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: created.id,
      title: 'Renamed',
      tags: ['a'],
      markdown: created.markdown,
      status: 'published',
      publishedAt: created.publishedAt,
      createdAt: created.createdAt,
    });
    expect(new Date(res.body.updatedAt).getTime()).toBeGreaterThan(new Date(created.updatedAt).getTime());
    expect(await auditActions(t)).toContain('changelog.updated');
  });

  it('needs changelog.publish to change status; editing content does not', async () => {
    const t = await tenant(app);
    const draft = await create(t, { status: 'draft' });
    const editor = await createKey(app, t.member.id, { permissions: ['changelog.read', 'changelog.update'], workspaceId: t.workspace.id });
    const refused = await app.api('PATCH', `${base()}/${draft.id}`, { key: editor.key, body: { status: 'published' } });
    expect(refused.status).toBe(403);
    expect(refused.body.error.details).toEqual({ missing: ['changelog.publish'] });
    expect(
      (await app.api('PATCH', `${base()}/${draft.id}`, { key: editor.key, body: { markdown: 'edited', status: 'draft' } })).status,
    ).toBe(200);

    const published = await app.api('PATCH', `${base()}/${draft.id}`, { key: t.key, body: { status: 'published' } });
    expect(published.status).toBe(200);
    expect(published.body.publishedAt).not.toBeNull();
    expect(await auditActions(t)).toContain('changelog.status_changed');
    const moveDate = await app.api('PATCH', `${base()}/${draft.id}`, { key: editor.key, body: { published_at: '2020-01-01T00:00:00Z' } });
    expect(moveDate.status).toBe(403);
    const unpublished = await app.api('PATCH', `${base()}/${draft.id}`, { key: t.key, body: { status: 'draft' } });
    expect(unpublished.body).toMatchObject({ status: 'draft', publishedAt: null });
  });

  it('answers 400 for an empty body, null title, or a bad id', async () => {
    const t = await tenant(app);
    const created = await create(t);
    const empty = await app.api('PATCH', `${base()}/${created.id}`, { key: t.key, body: {} });
    expect(empty.status).toBe(400);
    expect((await app.api('PATCH', `${base()}/${created.id}`, { key: t.key, body: { title: null } })).status).toBe(400);
    const badId = await app.api('PATCH', `${base()}/abc`, { key: t.key, body: { title: 'x' } });
    expect(badId.status).toBe(400);
    expect(badId.body.error.details).toEqual([{ field: 'id', message: expect.any(String), in: 'path' }]);
    expect((await app.api('PATCH', `${base()}/99999999999`, { key: t.key, body: { title: 'x' } })).status).toBe(400);
  });

  it("answers 404 for a missing id and for another workspace's entry, identically", async () => {
    const a = await tenant(app);
    const b = await tenant(app);
    const theirs = await create(b);
    const r1 = await app.api('PATCH', `${base()}/${theirs.id}`, { key: a.key, body: { title: 'hijack' } });
    const r2 = await app.api('PATCH', `${base()}/2147483647`, { key: a.key, body: { title: 'hijack' } });
    expect(r1.status).toBe(404);
    expect(r1.body).toEqual(r2.body);
    const still = await app.api('GET', base(), { key: b.key });
    expect(still.body[0].title).toBe('Faster search');
  });

  it('needs changelog.update', async () => {
    const t = await tenant(app, { permissions: ['changelog.read'] });
    const res = await app.api('PATCH', `${base()}/1`, { key: t.key, body: { title: 'x' } });
    expect(res.status).toBe(403);
    expect(res.body.error.details).toEqual({ missing: ['changelog.update'] });
  });
});

describe('DELETE /changelog/{id} (3)', () => {
  it("deletes once, then 404; another workspace's id is 404; needs changelog.update", async () => {
    const t = await tenant(app);
    const other = await tenant(app);
    const created = await create(t);
    const theirs = await create(other);
    expect((await app.api('DELETE', `${base()}/${theirs.id}`, { key: t.key })).status).toBe(404);
    const reader = await createKey(app, t.member.id, { permissions: ['changelog.read'], workspaceId: t.workspace.id });
    expect((await app.api('DELETE', `${base()}/${created.id}`, { key: reader.key })).status).toBe(403);
    const res = await app.api('DELETE', `${base()}/${created.id}`, { key: t.key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: created.id, deleted: true });
    expect((await app.api('DELETE', `${base()}/${created.id}`, { key: t.key })).status).toBe(404);
    expect((await app.api('GET', base(), { key: t.key })).body).toEqual([]);
    expect(await auditActions(t)).toContain('changelog.deleted');
  });
});

describe('GraphQL changelog', () => {
  it('runs the same rules for agent keys', async () => {
    const t = await tenant(app, { permissions: ['changelog.read', 'changelog.update'] });
    const q = 'mutation($input: CreateChangelogEntryInput!) { createChangelogEntry(workspace: "-", input: $input) { id status } }';
    const denied = await app.gql(q, { input: { title: 't', markdown: 'm', status: 'published', tags: [], publishedAt: null } }, t.key);
    expect(denied.errors?.[0].extensions).toMatchObject({ code: 'permission_denied', details: { missing: ['changelog.publish'] } });
    const ok = await app.gql(q, { input: { title: 't', markdown: 'm', status: 'draft', tags: [], publishedAt: null } }, t.key);
    expect(ok.data.createChangelogEntry.status).toBe('draft');
    const tooLong = await app.gql(
      q,
      { input: { title: 'x'.repeat(201), markdown: 'm', status: 'draft', tags: [], publishedAt: null } },
      t.key,
    );
    expect(tooLong.errors?.[0].extensions).toMatchObject({ code: 'invalid_request', details: [{ field: 'title' }] });
  });
});

describe('429 rate_limited', () => {
  it('refuses a key over RATE_LIMIT_MAX with Retry-After and RateLimit headers', async () => {
    const limited = await startTestApp({ rateLimit: { max: 5, windowSeconds: 3600 } });
    try {
      const t = await tenant(limited);
      for (let i = 0; i < 5; i++) {
        const ok = await limited.api('GET', base(), { key: t.key });
        expect(ok.status).toBe(200);
        expect(ok.headers.get('ratelimit')).toMatch(new RegExp(`r=${4 - i};t=\\d+`));
        expect(ok.headers.get('ratelimit-policy')).toBe('"default";q=5;w=3600');
      }
      const res = await limited.api('POST', base(), { key: t.key, body: entry() });
      expect(res.status).toBe(429);
      expect(res.body.error).toMatchObject({ code: 'rate_limited', status: 429 });
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      const other = await tenant(limited);
      expect((await limited.api('GET', base(), { key: other.key })).status).toBe(200);
    } finally {
      await limited.close();
    }
  });
});
