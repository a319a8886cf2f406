import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { tenant } from './support/factories.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ embeddingWorker: false, webhookDispatcher: false });
});
afterAll(async () => app?.close());

const W = '/api/v1/workspaces/-';
const entry = (title = 'Once') => ({ title, markdown: 'x', status: 'draft', tags: [], published_at: null });

describe('Idempotency-Key', () => {
  it('replays the stored status and body and creates one entity', async () => {
    const t = await tenant(app);
    const headers = { 'idempotency-key': 'create-entry-1' };
    const first = await app.api('POST', `${W}/changelog`, { key: t.key, headers, body: entry() });
    expect(first.status).toBe(201);
    const again = await app.api('POST', `${W}/changelog`, { key: t.key, headers, body: entry() });
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const list = await app.api('GET', `${W}/changelog?drafts=true`, { key: t.key });
    expect(list.body).toHaveLength(1);
    const events = await app.gql('query($w: ID!) { auditEvents(workspaceId: $w) { action } }', { w: t.workspace.id });
    expect(events.data.auditEvents.filter((e: any) => e.action === 'changelog.created')).toHaveLength(1);
  });

  it('runs concurrent retries at most once', async () => {
    const t = await tenant(app);
    const results = await Promise.all(
      Array.from({ length: 8 }, () =>
        app.api('POST', `${W}/changelog`, { key: t.key, headers: { 'idempotency-key': 'burst' }, body: entry('Burst') }),
      ),
    );
    expect(results.filter((r) => r.status === 201).length).toBeGreaterThanOrEqual(1);
    expect(results.every((r) => r.status === 201 || (r.status === 409 && r.body.error.code === 'conflict'))).toBe(true);
    expect((await app.api('GET', `${W}/changelog?drafts=true`, { key: t.key })).body).toHaveLength(1);
  });

  it('refuses the same key with a different body (409) and scopes keys per agent key', async () => {
    const t = await tenant(app);
    const other = await tenant(app);
    await app.api('POST', `${W}/changelog`, { key: t.key, headers: { 'idempotency-key': 'k1' }, body: entry('A') });
    const reused = await app.api('POST', `${W}/changelog`, { key: t.key, headers: { 'idempotency-key': 'k1' }, body: entry('B') });
    expect(reused.status).toBe(409);
    expect(reused.body.error.message).toMatch(/different request/);
    const elsewhere = await app.api('POST', `${W}/changelog`, { key: other.key, headers: { 'idempotency-key': 'k1' }, body: entry('B') });
    expect(elsewhere.status).toBe(201);
    expect(
      (await app.api('POST', `${W}/changelog`, { key: t.key, headers: { 'idempotency-key': 'x'.repeat(256) }, body: entry() })).status,
    ).toBe(400);
  });

  it('replays error answers too, but not a 409, and covers PUT, PATCH and DELETE', async () => {
    const t = await tenant(app);
    const bad = await app.api('PATCH', `${W}/changelog/999999`, { key: t.key, headers: { 'idempotency-key': 'p1' }, body: { title: 'x' } });
    expect(bad.status).toBe(404);
    const badAgain = await app.api('PATCH', `${W}/changelog/999999`, {
      key: t.key,
      headers: { 'idempotency-key': 'p1' },
      body: { title: 'x' },
    });
    expect(badAgain.status).toBe(404);
    expect(badAgain.headers.get('idempotent-replayed')).toBe('true');
    const put = () =>
      app.api('PUT', `${W}/memory/note`, {
        key: t.key,
        headers: { 'idempotency-key': 'n1' },
        body: { path: 'n', body: 'b', kind: 'note', links: [], tags: [] },
      });
    const p1 = await put();
    const p2 = await put();
    expect(p2.body).toEqual(p1.body);
    const created = await app.api('POST', `${W}/changelog`, { key: t.key, body: entry() });
    const del = () => app.api('DELETE', `${W}/changelog/${created.body.id}`, { key: t.key, headers: { 'idempotency-key': 'd1' } });
    expect((await del()).status).toBe(200);
    const replay = await del();
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual({ id: created.body.id, deleted: true });
  });
});
