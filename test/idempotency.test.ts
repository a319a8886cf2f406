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

  describe('record lifetimes (records aged in the database, only this test key rows)', () => {
    /** Sets this key's record for `idem` to a state and age, as a request that died or an old one would leave it. */
    const age = (keyId: string, idem: string, state: 'in_progress' | 'done', interval: string) =>
      app.server.orm.em
        .fork()
        .getConnection()
        .execute(
          `update idempotency_keys set state = ?, created_at = clock_timestamp() - ?::interval where agent_key_id = ? and idempotency_key = ? returning id`,
          [state, interval, keyId, idem],
        );
    const post = (t: { key: string }, idem: string) =>
      app.api('POST', `${W}/changelog`, { key: t.key, headers: { 'idempotency-key': idem }, body: entry('Aged') });
    const count = async (t: { key: string }) => (await app.api('GET', `${W}/changelog?drafts=true`, { key: t.key })).body.length;

    it('answers a retry of a request still in progress with 409 and Retry-After, and takes over a claim older than 2 minutes', async () => {
      const t = await tenant(app);
      expect((await post(t, 'slow')).status).toBe(201);
      expect(await age(t.keyId, 'slow', 'in_progress', '110 seconds')).toHaveLength(1);
      const busy = await post(t, 'slow');
      expect(busy.status).toBe(409);
      expect(busy.body.error).toMatchObject({ code: 'conflict', details: { idempotencyKey: 'slow' } });
      expect(busy.headers.get('retry-after')).toBe('1');
      expect(await count(t)).toBe(1);
      // Past 2 minutes the claim is taken as dead with its process: the retry runs.
      await age(t.keyId, 'slow', 'in_progress', '121 seconds');
      const taken = await post(t, 'slow');
      expect(taken.status).toBe(201);
      expect(taken.headers.get('idempotent-replayed')).toBeNull();
      expect(await count(t)).toBe(2);
      const replay = await post(t, 'slow');
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(replay.body).toEqual(taken.body);
    });

    it('replays for 24 hours, then runs the request again', async () => {
      const t = await tenant(app);
      const first = await post(t, 'daily');
      expect(first.status).toBe(201);
      await age(t.keyId, 'daily', 'done', '23 hours 59 minutes');
      const within = await post(t, 'daily');
      expect(within.headers.get('idempotent-replayed')).toBe('true');
      expect(within.body).toEqual(first.body);
      await age(t.keyId, 'daily', 'done', '24 hours 1 minute');
      const after = await post(t, 'daily');
      expect(after.status).toBe(201);
      expect(after.headers.get('idempotent-replayed')).toBeNull();
      expect(after.body.id).not.toBe(first.body.id);
      expect(await count(t)).toBe(2);
    });
  });
});
