import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { tenant, type Tenant } from './support/factories.js';
import { startReceiver } from './support/receiver.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ outboundAllowLoopback: true, embeddingWorker: false, webhookDispatcher: true });
});
afterAll(async () => app?.close());

const W = '/api/v1/workspaces/-';
const EVENTS = 'query($w: ID!) { auditEvents(workspaceId: $w, limit: 50) { action targetId object previous truncated revision } }';

async function ok(res: Promise<{ status: number; body: any }>, status = 200): Promise<any> {
  const r = await res;
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  return r.body;
}

/** The workspace's audit events, oldest first. */
async function events(t: Tenant, prefix: string): Promise<any[]> {
  const res = await app.gql(EVENTS, { w: t.workspace.id });
  expect(res.errors).toBeUndefined();
  return [...res.data.auditEvents].reverse().filter((e: any) => e.action.startsWith(prefix));
}

describe('events carry the resource', () => {
  it('article events: `object` is the REST answer after the change, `previous` the changed fields, `revision` the version made', async () => {
    const t = await tenant(app);
    await ok(app.api('POST', `${W}/sections`, { key: t.key, body: { label: 'Docs' } }), 201);
    const created = await ok(
      app.api('POST', `${W}/articles`, { key: t.key, body: { title: 'Intro', section: 'docs', markdown: 'a' } }),
      201,
    );
    const edited = await ok(app.api('PATCH', `${W}/articles/intro`, { key: t.key, body: { markdown: 'b', status: 'STABLE' } }));
    const restored = await ok(app.api('POST', `${W}/articles/intro/revisions/1/restore`, { key: t.key }));
    const list = await events(t, 'article.');
    expect(list.map((e) => e.action)).toEqual(['article.created', 'article.updated', 'article.status_changed', 'article.updated']);
    expect(list[0]).toMatchObject({ object: created, previous: null, revision: 1, truncated: false });
    expect(list[1].object).toEqual(edited);
    expect(list[1].previous).toEqual({
      markdown: 'a',
      status: 'DRAFT',
      version: 1,
      updatedAt: created.updatedAt,
      publishedAt: null,
    });
    expect(list[1].revision).toBe(2);
    expect(list[3]).toMatchObject({ object: restored, previous: { markdown: 'b', version: 2, updatedAt: edited.updatedAt }, revision: 3 });
    // The revision the event names is the article's history entry of that version.
    const revision = await ok(app.api('GET', `${W}/articles/intro/revisions/${list[3].revision}`, { key: t.key }));
    expect(revision).toMatchObject({ action: 'restored', restoredFrom: 1, markdown: 'a' });
  });

  it('memory note events: created, updated (with previous) and deleted (the last state), ids typed as in REST', async () => {
    const t = await tenant(app);
    const note = { path: 'team/plan', body: 'first', kind: 'note', links: [], tags: ['x'] };
    const v1 = await ok(app.api('PUT', `${W}/memory/note`, { key: t.key, body: note }));
    const v2 = await ok(app.api('PUT', `${W}/memory/note`, { key: t.key, body: { ...note, body: 'second' } }));
    await ok(app.api('DELETE', `${W}/memory/note?path=team/plan`, { key: t.key }));
    const list = await events(t, 'memory.');
    expect(list.map((e) => e.action)).toEqual(['memory.note.created', 'memory.note.updated', 'memory.note.deleted']);
    expect(list[0]).toMatchObject({ object: v1, previous: null, revision: 1 });
    expect(typeof list[0].object.id).toBe('number');
    expect(list[1]).toMatchObject({ object: v2, previous: { body: 'first', version: 1, updatedAt: v1.updatedAt }, revision: 2 });
    expect(Object.keys(list[1].previous).sort()).toEqual(['body', 'updatedAt', 'version']);
    expect(list[2]).toMatchObject({ object: v2, previous: null, revision: null });
  });

  it('changelog events carry the entry with its integer id; a delete carries the last state', async () => {
    const t = await tenant(app);
    const entry = await ok(
      app.api('POST', `${W}/changelog`, {
        key: t.key,
        body: { title: 'v1', markdown: 'x', status: 'draft', tags: [], published_at: null },
      }),
      201,
    );
    const updated = await ok(app.api('PATCH', `${W}/changelog/${entry.id}`, { key: t.key, body: { title: 'v1.0' } }));
    await ok(app.api('DELETE', `${W}/changelog/${entry.id}`, { key: t.key }));
    const list = await events(t, 'changelog.');
    expect(list.map((e) => e.action)).toEqual(['changelog.created', 'changelog.updated', 'changelog.deleted']);
    expect(list[0].object).toEqual(entry);
    expect(list[0].object.id).toBe(entry.id);
    expect(list[1].object).toEqual(updated);
    expect(list[1].previous).toMatchObject({ title: 'v1' });
    expect(list[2].object).toEqual(updated);
  });

  it('cuts text to keep an event within 64 KiB, saying truncated: true', async () => {
    const t = await tenant(app);
    await ok(app.api('POST', `${W}/sections`, { key: t.key, body: { label: 'Docs' } }), 201);
    const big = 'é'.repeat(50_000);
    await ok(app.api('POST', `${W}/articles`, { key: t.key, body: { title: 'Big', section: 'docs', markdown: big } }), 201);
    await ok(app.api('PATCH', `${W}/articles/big`, { key: t.key, body: { markdown: `${big}!` } }));
    const [created, updated] = await events(t, 'article.');
    for (const e of [created, updated]) {
      expect(e.truncated).toBe(true);
      expect(Buffer.byteLength(JSON.stringify({ object: e.object, previous: e.previous ?? undefined }))).toBeLessThanOrEqual(64 * 1024);
      expect(big.startsWith(e.object.markdown)).toBe(true);
      expect(e.object.markdown.length).toBeLessThan(big.length);
      expect(e.object).toMatchObject({ slug: 'big', title: 'Big' });
    }
    expect(updated.previous.version).toBe(1);
  });

  it('webhook data carries the same object and previous', async () => {
    const receiver = await startReceiver();
    try {
      const t = await tenant(app);
      const res = await app.gql('mutation($input: CreateWebhookInput!) { createWebhook(input: $input) { id secret } }', {
        input: { organizationId: t.org.id, workspaceId: t.workspace.id, url: receiver.url, events: ['memory.note.updated'] },
      });
      expect(res.errors).toBeUndefined();
      const note = { path: 'n', body: 'one', kind: 'note', links: [], tags: [] };
      await ok(app.api('PUT', `${W}/memory/note`, { key: t.key, body: note }));
      const v2 = await ok(app.api('PUT', `${W}/memory/note`, { key: t.key, body: { ...note, body: 'two' } }));
      const [req] = await receiver.waitFor(1);
      const payload = new Webhook(res.data.createWebhook.secret).verify(req.body, req.headers as Record<string, string>) as any;
      expect(payload.type).toBe('memory.note.updated');
      expect(payload.data).toMatchObject({ target: { type: 'memory_note', id: 'n' }, object: v2, previous: { body: 'one', version: 1 } });
      expect(payload.data.truncated).toBeUndefined();
    } finally {
      await receiver.close();
    }
  });
});
