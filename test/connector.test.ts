import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { createKey, createMember, tenant, type Tenant } from './support/factories.js';
import { MCP_CLIENTS } from './support/mcpClients.js';

let app: TestApp;
beforeAll(async () => {
  // The smallest cap, so a long article is cut into pieces.
  app = await startTestApp({ fetchMaxChars: 1000 });
});
afterAll(async () => app?.close());

const W = '/api/v1/workspaces/-';
/** Twelve paragraphs of about 160 characters: past the cap of 1,000. */
const LONG = Array.from(
  { length: 12 },
  (_, i) => `Paragraph ${i + 1}. ${'Rotating agent keys keeps leaked keys short-lived. '.repeat(3)}`,
).join('\n\n');

type Documents = Tenant & { published: number; draft: number };

async function documents(): Promise<Documents> {
  const t = await tenant(app, { plan: 'pro' });
  const ok = async (res: Promise<{ status: number; body: any }>, status: number) => {
    const r = await res;
    expect(r.status, JSON.stringify(r.body)).toBe(status);
    return r.body;
  };
  await ok(app.api('POST', `${W}/sections`, { key: t.key, body: { label: 'Guides' } }), 201);
  await ok(app.api('POST', `${W}/sections`, { key: t.key, body: { label: 'Internal', visibility: 'restricted' } }), 201);
  await ok(app.api('POST', `${W}/articles`, { key: t.key, body: { title: 'Rotating keys', section: 'guides', markdown: LONG } }), 201);
  await ok(
    app.api('POST', `${W}/articles`, {
      key: t.key,
      body: { title: 'Key escrow', section: 'internal', markdown: 'Rotating keys in escrow.' },
    }),
    201,
  );
  await ok(
    app.api('PUT', `${W}/memory/note`, {
      key: t.key,
      body: { path: 'runbooks/rotate', body: 'Rotate with wks keys rotate.', kind: 'runbook', links: [], tags: [] },
    }),
    200,
  );
  const entry = (status: string) => ({
    title: `Key rotation ${status}`,
    markdown: 'Rotating keys now.',
    status,
    tags: [],
    published_at: null,
  });
  return {
    ...t,
    published: (await ok(app.api('POST', `${W}/changelog`, { key: t.key, body: entry('published') }), 201)).id,
    draft: (await ok(app.api('POST', `${W}/changelog`, { key: t.key, body: entry('draft') }), 201)).id,
  };
}
const fetchDoc = (key: string | undefined, query: string) => app.api('GET', `${W}/documents?${query}`, { key });

describe('fetch: a document by id in the connector shape', () => {
  it('answers an article, a note and a published entry as { id, title, text, url, metadata }, the url absolute', async () => {
    const t = await documents();
    const note = await fetchDoc(t.key, 'id=note:runbooks/rotate');
    expect(note.status).toBe(200);
    expect(note.body).toEqual({
      id: 'note:runbooks/rotate',
      title: 'runbooks/rotate',
      text: 'Rotate with wks keys rotate.',
      url: `${app.url}/console/#/ws/${t.workspace.id}/notes/runbooks%2Frotate`,
      metadata: expect.objectContaining({
        type: 'note',
        key: 'runbooks/rotate',
        version: 1,
        section: 'runbook',
        offset: 0,
        truncated: false,
        nextOffset: null,
        readOn: null,
      }),
    });
    const entry = await fetchDoc(t.key, `id=changelog:${t.published}`);
    expect(entry.body).toMatchObject({
      title: 'Key rotation published',
      text: 'Rotating keys now.',
      metadata: { type: 'changelog', status: 'published' },
    });
    expect((await fetchDoc(t.key, `id=changelog:${t.draft}`)).status).toBe(404);
  });

  it('cuts a text past the cap at a paragraph and says where to read on; the pieces make the whole', async () => {
    const t = await documents();
    let offset = 0;
    let whole = '';
    for (let piece = 0; ; piece++) {
      const res = await fetchDoc(t.key, `id=article:rotating-keys&offset=${offset}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const { text, metadata } = res.body;
      expect(Array.from(text).length).toBeLessThanOrEqual(1000);
      expect(metadata).toMatchObject({
        type: 'article',
        key: 'rotating-keys',
        status: 'DRAFT',
        section: 'guides',
        offset,
        totalChars: LONG.length,
      });
      whole += text;
      if (!metadata.truncated) {
        expect(metadata.nextOffset).toBeNull();
        break;
      }
      expect(text.endsWith('\n\n')).toBe(true); // cut at a paragraph
      expect(metadata.readOn).toContain(`"offset": ${metadata.nextOffset}`);
      offset = metadata.nextOffset;
      expect(piece).toBeLessThan(5);
    }
    expect(whole).toBe(LONG);
    const past = await fetchDoc(t.key, `id=article:rotating-keys&offset=${LONG.length + 1}`);
    expect(past.status).toBe(400);
    expect(past.body.error.details[0].field).toBe('offset');
  });

  it('refuses what the key may not read: 400 for a bad id, 403 naming the permission of the kind, 404 across workspaces, 401 without a key', async () => {
    const t = await documents();
    for (const bad of ['id=rotating-keys', 'id=page:x', 'id=article:', '']) {
      const res = await fetchDoc(t.key, bad);
      expect(res.status, bad).toBe(400);
      expect(res.body.error.details[0].field).toBe('id');
    }
    const articlesOnly = await createKey(app, t.member.id, { permissions: ['article.read'], workspaceId: t.workspace.id });
    expect((await fetchDoc(articlesOnly.key, 'id=article:rotating-keys')).status).toBe(200);
    const denied = await fetchDoc(articlesOnly.key, 'id=note:runbooks/rotate');
    expect(denied.status).toBe(403);
    expect(denied.body.error.details).toEqual({ missing: ['memory.read'] });
    const notesOnly = await createKey(app, t.member.id, { permissions: ['memory.read'], workspaceId: t.workspace.id });
    expect((await fetchDoc(notesOnly.key, 'id=article:rotating-keys')).body.error.details).toEqual({ missing: ['article.read'] });
    // A restricted article reads as none to a viewer's key.
    const member = await createMember(app, t.org.id, { role: 'viewer' });
    const viewer = await createKey(app, member.id, { permissions: ['article.read'], workspaceId: t.workspace.id });
    expect((await fetchDoc(viewer.key, 'id=article:key-escrow')).status).toBe(404);
    expect((await fetchDoc(viewer.key, 'id=article:rotating-keys')).status).toBe(200);
    expect((await fetchDoc(t.key, 'id=article:key-escrow')).status).toBe(200);
    const other = await tenant(app);
    expect((await fetchDoc(other.key, 'id=note:runbooks/rotate')).status).toBe(404);
    expect((await fetchDoc(undefined, 'id=note:runbooks/rotate')).status).toBe(401);
  });
});

describe.each(MCP_CLIENTS)('the tools hosts look for, $name', (kind) => {
  it('search takes query (and q) and answers results [{ id, title, url }]; fetch takes such an id', async () => {
    const t = await documents();
    const client = await kind.connect(app.url, t.key);
    try {
      const found = await client.callTool({ name: 'search', arguments: { query: 'rotating keys' } });
      expect(found.isError, JSON.stringify(found.content)).toBeFalsy();
      const results = found.structuredContent.results as { id: string; title: string; url: string }[];
      expect(results.map((r) => r.id).sort()).toEqual(['article:key-escrow', 'article:rotating-keys', `changelog:${t.published}`].sort());
      for (const r of results) expect(r.url.startsWith(`${app.url}/console/#/ws/${t.workspace.id}/`)).toBe(true);
      // One JSON text block carries the same.
      expect(JSON.parse(found.content[0].text)).toEqual(found.structuredContent);
      expect((await client.callTool({ name: 'search', arguments: { q: 'rotating keys' } })).structuredContent.results).toEqual(results);
      const both = await client.callTool({ name: 'search', arguments: { q: 'keys', query: 'keys' } });
      expect(both.isError).toBe(true);
      expect(both.content[0].text).toMatch(/^invalid_request: Send one of q or query/);
      const article = results.find((r) => r.id === 'article:rotating-keys')!;
      const fetched = await client.callTool({ name: 'fetch', arguments: { id: article.id } });
      expect(fetched.isError, JSON.stringify(fetched.content)).toBeFalsy();
      expect(Object.keys(fetched.structuredContent).sort()).toEqual(['id', 'metadata', 'text', 'title', 'url']);
      expect(fetched.structuredContent).toMatchObject({ id: article.id, title: 'Rotating keys', url: article.url });
      expect(JSON.parse(fetched.content[0].text)).toEqual(fetched.structuredContent);
      const note = await client.callTool({ name: 'fetch', arguments: { id: 'note:runbooks/rotate' } });
      expect(note.structuredContent.text).toBe('Rotate with wks keys rotate.');
      const tools = (await client.listTools()).tools;
      const search = tools.find((tool) => tool.name === 'search');
      expect(search.inputSchema.properties.query.type).toBe('string');
      expect(search.inputSchema.required ?? []).not.toContain('q');
      expect(tools.find((tool) => tool.name === 'fetch').annotations.readOnlyHint).toBe(true);
    } finally {
      await client.close();
    }
  });
});

describe('links name PUBLIC_URL when it is set', () => {
  it('uses PUBLIC_URL, not the request origin', async () => {
    const other = await startTestApp({ publicUrl: 'https://docs.example.com/' });
    try {
      const t = await tenant(other);
      await other.api('PUT', `${W}/memory/note`, { key: t.key, body: { path: 'a', body: 'b', kind: 'note', links: [], tags: [] } });
      const res = await other.api('GET', `${W}/documents?id=note:a`, { key: t.key });
      expect(res.body.url).toBe(`https://docs.example.com/console/#/ws/${t.workspace.id}/notes/a`);
    } finally {
      await other.close();
    }
  });
});
