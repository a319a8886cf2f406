import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { createKey, createMember, tenant, type Tenant } from './support/factories.js';
import { MCP_CLIENTS } from './support/mcpClients.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.close());

const W = '/api/v1/workspaces/-';

/** A pro workspace: a public and a restricted article, and notes (`notes` of them under bulk/). */
async function workspace(notes = 2): Promise<Tenant> {
  const t = await tenant(app, { plan: 'pro' });
  const ok = async (res: Promise<{ status: number; body: any }>) => {
    const r = await res;
    expect(r.status, JSON.stringify(r.body)).toBeLessThan(300);
    return r.body;
  };
  await ok(app.api('POST', `${W}/sections`, { key: t.key, body: { label: 'Guides' } }));
  await ok(app.api('POST', `${W}/sections`, { key: t.key, body: { label: 'Internal', visibility: 'restricted' } }));
  await ok(
    app.api('POST', `${W}/articles`, { key: t.key, body: { title: 'Getting started', section: 'guides', markdown: '# Start\n\nHello.' } }),
  );
  await ok(app.api('POST', `${W}/articles`, { key: t.key, body: { title: 'Escrow', section: 'internal', markdown: 'Secret.' } }));
  await ok(
    app.api('PUT', `${W}/memory/note`, {
      key: t.key,
      body: { path: 'runbooks/deploy', body: 'Merge, then watch.', kind: 'runbook', links: [], tags: [] },
    }),
  );
  for (let i = 1; i < notes; i++)
    await ok(
      app.api('PUT', `${W}/memory/note`, {
        key: t.key,
        body: { path: `bulk/n${String(i).padStart(3, '0')}`, body: 'x', kind: 'note', links: [], tags: [] },
      }),
    );
  return t;
}
const uri = (t: Tenant, rest: string) => `wks://workspaces/${t.workspace.id}/${rest}`;

describe.each(MCP_CLIENTS)('articles and notes as resources, $name', (kind) => {
  it('lists what the key may read, with stable URIs and templates, and reads each', async () => {
    const t = await workspace();
    const client: any = await kind.connect(app.url, t.key);
    try {
      const { resources, nextCursor } = await client.listResources();
      expect(nextCursor).toBeUndefined();
      expect(resources.map((r: any) => r.uri)).toEqual([
        uri(t, 'articles/getting-started'),
        uri(t, 'articles/escrow'),
        uri(t, 'notes/bulk/n001'),
        uri(t, 'notes/runbooks/deploy'),
      ]);
      expect(resources[0]).toMatchObject({ name: 'getting-started', title: 'Getting started', mimeType: 'text/markdown' });
      const { resourceTemplates } = await client.listResourceTemplates();
      expect(resourceTemplates.map((r: any) => r.uriTemplate)).toEqual([
        'wks://workspaces/{workspace}/articles/{slug}',
        'wks://workspaces/{workspace}/notes/{+path}',
      ]);
      const article = await client.readResource({ uri: uri(t, 'articles/getting-started') });
      expect(article.contents).toEqual([
        expect.objectContaining({ uri: uri(t, 'articles/getting-started'), mimeType: 'text/markdown', text: '# Start\n\nHello.' }),
      ]);
      expect(article.contents[0]._meta).toMatchObject({ version: 1, title: 'Getting started' });
      const note = await client.readResource({ uri: uri(t, 'notes/runbooks/deploy') });
      expect(note.contents[0].text).toBe('Merge, then watch.');
      for (const missing of [
        uri(t, 'notes/nope'),
        uri(t, 'articles/nope'),
        'https://example.com/x',
        `wks://workspaces/${t.workspace.id}/pages/x`,
      ]) {
        await expect(client.readResource({ uri: missing }), missing).rejects.toMatchObject({
          code: -32602,
          message: expect.stringContaining('No resource at'),
        });
      }
    } finally {
      await client.close();
    }
  });

  it('shows a viewer no restricted article and a key without memory.read no note; another workspace reads as none', async () => {
    const t = await workspace();
    const member = await createMember(app, t.org.id, { role: 'viewer' });
    const viewer = await createKey(app, member.id, { permissions: ['article.read'], workspaceId: t.workspace.id });
    const client: any = await kind.connect(app.url, viewer.key);
    try {
      expect((await client.listResources()).resources.map((r: any) => r.uri)).toEqual([uri(t, 'articles/getting-started')]);
      await expect(client.readResource({ uri: uri(t, 'articles/escrow') })).rejects.toMatchObject({
        code: -32602,
        message: expect.stringContaining('No resource at'),
      });
      await expect(client.readResource({ uri: uri(t, 'notes/runbooks/deploy') })).rejects.toThrow(/permission_denied.*memory\.read/);
    } finally {
      await client.close();
    }
    const other = await tenant(app);
    const stranger: any = await kind.connect(app.url, other.key);
    try {
      await expect(stranger.readResource({ uri: uri(t, 'articles/getting-started') })).rejects.toMatchObject({
        code: -32602,
        message: expect.stringContaining('No resource at'),
      });
    } finally {
      await stranger.close();
    }
  });
});

describe('resources/list pages', () => {
  it('pages through articles then notes, 100 at a time, each resource once', async () => {
    const t = await workspace(150);
    // The v1 client answers one page per call (the v2 client walks every page itself when no cursor is given).
    const client: any = await MCP_CLIENTS[0].connect(app.url, t.key);
    try {
      const seen: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await client.listResources(cursor ? { cursor } : {});
        expect(page.resources.length).toBeLessThanOrEqual(100);
        seen.push(...page.resources.map((r: any) => r.uri));
        cursor = page.nextCursor;
        pages++;
      } while (cursor);
      expect(pages).toBe(2);
      expect(seen).toHaveLength(152);
      expect(new Set(seen).size).toBe(152);
      await expect(client.listResources({ cursor: 'bogus' })).rejects.toMatchObject({ code: -32602 });
    } finally {
      await client.close();
    }
  });
});
