import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer } from '../src/server.js';
import { startTestApp, type TestApp } from './support/app.js';
import { createKey, createWorkspace, tenant, type Tenant } from './support/factories.js';
import { startReceiver } from './support/receiver.js';
import { until } from './support/wait.js';
import { testLogger } from './support/internalErrors.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({
    outboundAllowLoopback: true,
    webhookRetryScheduleMs: [150, 300],
    embeddingWorker: false,
    webhookDispatcher: true,
  });
});
afterAll(async () => app?.close());

const W = '/api/v1/workspaces/-';
const CREATE = 'mutation($input: CreateWebhookInput!) { createWebhook(input: $input) { id secret url events enabled workspaceId } }';
const DELIVERIES =
  'query($id: ID!) { webhookDeliveries(webhookId: $id) { eventId eventType status attempts lastStatusCode lastError attemptLog { statusCode ' +
  'durationMs error } } }';

async function subscribe(target: TestApp, t: Tenant, url: string, extra: Record<string, unknown> = {}) {
  const res = await target.gql(CREATE, { input: { organizationId: t.org.id, url, ...extra } });
  expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
  return res.data.createWebhook as { id: string; secret: string };
}

const entry = { title: 'Hello', markdown: 'x', status: 'draft', tags: [], published_at: null };

/** Polls the deliveries of a subscription until `done` holds (the receiver answers before the attempt is recorded). */
async function deliveriesWhen(id: string, done: (list: any[]) => boolean, ms = 15_000): Promise<any[]> {
  const until = Date.now() + ms;
  for (;;) {
    const list = (await app.gql(DELIVERIES, { id })).data.webhookDeliveries;
    if (done(list) || Date.now() > until) return list;
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('webhook deliveries', () => {
  it('delivers a signed Standard Webhooks request for a REST action, verifiable with the library', async () => {
    const receiver = await startReceiver();
    try {
      const t = await tenant(app);
      const hook = await subscribe(app, t, receiver.url, { workspaceId: t.workspace.id, events: ['changelog.*'] });
      expect(hook.secret).toMatch(/^whsec_/);
      const created = await app.api('POST', `${W}/changelog`, { key: t.key, body: entry });
      const [req] = await receiver.waitFor(1);
      const payload = new Webhook(hook.secret).verify(req.body, req.headers as Record<string, string>) as any;
      expect(payload).toMatchObject({
        type: 'changelog.created',
        data: {
          workspaceId: t.workspace.id,
          target: { type: 'changelog_entry', id: String(created.body.id) },
          actor: { type: 'agent', agentKeyId: t.keyId },
        },
      });
      expect(new Date(payload.timestamp).getTime()).toBeGreaterThan(Date.now() - 60_000);
      expect(req.headers['webhook-id']).toMatch(/^msg_/);
      expect(() => new Webhook(hook.secret).verify(`${req.body} `, req.headers as Record<string, string>)).toThrow();
      console.log(`webhook delivery latency: ${req.at - Date.parse(payload.timestamp)} ms after the change`);
      // The event filter holds: a memory write is not a changelog event. A changelog entry written
      // after it is the sentinel: events fan out in commit order, so once it arrives the memory
      // event has been passed over.
      await app.api('PUT', `${W}/memory/note`, { key: t.key, body: { path: 'a', body: 'b', kind: 'note', links: [], tags: [] } });
      await app.api('POST', `${W}/changelog`, { key: t.key, body: entry });
      const got = await receiver.waitFor(2);
      expect(got.map((r) => JSON.parse(r.body).type)).toEqual(['changelog.created', 'changelog.created']);
      const deliveries = await deliveriesWhen(hook.id, (l) => l.length === 2 && l.every((d) => d.status === 'delivered'));
      expect(deliveries.map((d) => d.eventType)).toEqual(['changelog.created', 'changelog.created']);
      expect(deliveries.find((d) => d.eventId === req.headers['webhook-id'])).toEqual({
        eventId: req.headers['webhook-id'],
        eventType: 'changelog.created',
        status: 'delivered',
        attempts: 1,
        lastStatusCode: 204,
        lastError: null,
        attemptLog: [{ statusCode: 204, durationMs: expect.any(Number), error: null }],
      });
    } finally {
      await receiver.close();
    }
  });

  it('retries after a 500 (honouring Retry-After) and then succeeds, recording every attempt', async () => {
    const receiver = await startReceiver((n) => (n === 1 ? { status: 500, headers: { 'retry-after': '1' } } : { status: 200 }));
    try {
      const t = await tenant(app);
      const hook = await subscribe(app, t, receiver.url);
      await app.api('POST', `${W}/changelog`, { key: t.key, body: entry });
      const [first, second] = await receiver.waitFor(2);
      expect(first.headers['webhook-id']).toBe(second.headers['webhook-id']);
      expect(second.at - first.at).toBeGreaterThanOrEqual(900);
      const [delivery] = await deliveriesWhen(hook.id, (l) => l[0]?.status === 'delivered');
      expect(delivery).toMatchObject({ status: 'delivered', attempts: 2 });
      expect(delivery.attemptLog.map((a: any) => a.statusCode)).toEqual([500, 200]);
    } finally {
      await receiver.close();
    }
  });

  it('gives up after the bounded schedule', async () => {
    const receiver = await startReceiver(() => ({ status: 503 }));
    try {
      const t = await tenant(app);
      const hook = await subscribe(app, t, receiver.url);
      await app.api('POST', `${W}/changelog`, { key: t.key, body: entry });
      await receiver.waitFor(3);
      const [delivery] = await deliveriesWhen(hook.id, (l) => l[0]?.status === 'failed');
      expect(delivery).toMatchObject({ status: 'failed', attempts: 3, lastError: expect.stringMatching(/gave up/) });
      expect(delivery.attemptLog).toHaveLength(3);
      // Sentinel: the next request the receiver gets is a new event's, not a fourth attempt.
      await app.api('POST', `${W}/changelog`, { key: t.key, body: entry });
      const got = await receiver.waitFor(4);
      expect(new Set(got.slice(0, 3).map((r) => r.headers['webhook-id'])).size).toBe(1);
      expect(got[3].headers['webhook-id']).not.toBe(got[0].headers['webhook-id']);
    } finally {
      await receiver.close();
    }
  });

  it('disables the subscription when the receiver answers 410', async () => {
    const receiver = await startReceiver(() => ({ status: 410 }));
    try {
      const t = await tenant(app);
      const hook = await subscribe(app, t, receiver.url);
      await app.api('POST', `${W}/changelog`, { key: t.key, body: entry });
      await receiver.waitFor(1);
      await deliveriesWhen(hook.id, (l) => l[0]?.status === 'failed');
      const list = await app.gql('query($o: ID!) { webhooks(organizationId: $o) { id enabled disabledReason secret } }', { o: t.org.id });
      expect(list.data.webhooks).toEqual([{ id: hook.id, enabled: false, disabledReason: expect.stringMatching(/410/), secret: null }]);
      // Sentinel: a second subscription of the organization receives the next event; the disabled one gets nothing of it.
      const witness = await startReceiver();
      try {
        await subscribe(app, t, witness.url);
        await app.api('POST', `${W}/changelog`, { key: t.key, body: entry });
        const [seen] = await witness.waitFor(1);
        expect(JSON.parse(seen.body).type).toBe('changelog.created');
        expect(receiver.received).toHaveLength(1);
        expect(await deliveriesWhen(hook.id, () => true)).toHaveLength(1);
      } finally {
        await witness.close();
      }
    } finally {
      await receiver.close();
    }
  });

  it('emits nothing for a failed (rolled-back or refused) request', async () => {
    const receiver = await startReceiver();
    try {
      const t = await tenant(app, { plan: 'free' });
      const reader = await createKey(app, t.member.id, { permissions: ['changelog.read'], workspaceId: t.workspace.id });
      const hook = await subscribe(app, t, receiver.url);
      expect((await app.api('POST', `${W}/changelog`, { key: reader.key, body: entry })).status).toBe(403);
      // Fails inside its transaction: the quota check throws after the note row work began.
      for (let i = 0; i < 200; i += 50) {
        await Promise.all(
          Array.from({ length: 50 }, (_, j) =>
            app.gql(
              'mutation($i: PutMemoryNoteInput!) { putMemoryNote(workspace: "-", input: $i) { id } }',
              { i: { path: `n/${i + j}`, body: 'b', kind: 'note', links: [], tags: [] } },
              t.key,
            ),
          ),
        );
      }
      await receiver.waitFor(200, 30_000);
      const over = await app.api('PUT', `${W}/memory/note`, {
        key: t.key,
        body: { path: 'over', body: 'b', kind: 'note', links: [], tags: [] },
      });
      expect(over.status).toBe(409);
      // Sentinel: an entry written after the refused write arrives next, with nothing before it.
      expect((await app.api('POST', `${W}/changelog`, { key: t.key, body: entry })).status).toBe(201);
      // Deliveries go out 20 at a time, so arrival order is loose; the subscription's delivery rows are
      // made in commit order, so once the sentinel's exists a row for the refused write would too.
      const got = await receiver.waitFor(201, 30_000);
      const types = (list: string[]) => list.reduce<Record<string, number>>((n, type) => ({ ...n, [type]: (n[type] ?? 0) + 1 }), {});
      const expected = { 'memory.note.created': 200, 'changelog.created': 1 };
      expect(types(got.map((r) => JSON.parse(r.body).type))).toEqual(expected);
      const rows = (await app.gql('query($id: ID!) { webhookDeliveries(webhookId: $id, limit: 500) { eventType } }', { id: hook.id })).data
        .webhookDeliveries as { eventType: string }[];
      expect(types(rows.map((d) => d.eventType))).toEqual(expected);
      expect(got).toHaveLength(201);
    } finally {
      await receiver.close();
    }
  }, 60_000);

  it('rotates the secret, and lists, updates and deletes subscriptions', async () => {
    const receiver = await startReceiver();
    try {
      const t = await tenant(app);
      const hook = await subscribe(app, t, receiver.url);
      const rotated = await app.gql('mutation($id: ID!) { rotateWebhookSecret(id: $id) { secret } }', { id: hook.id });
      const secret = rotated.data.rotateWebhookSecret.secret;
      expect(secret).not.toBe(hook.secret);
      await app.api('POST', `${W}/changelog`, { key: t.key, body: entry });
      const got = await receiver.waitFor(2);
      // Due deliveries go out concurrently: arrival order is not promised.
      expect(got.map((r) => JSON.parse(r.body).type).sort()).toEqual(['changelog.created', 'webhook.secret_rotated']);
      for (const req of got) expect(() => new Webhook(secret).verify(req.body, req.headers as Record<string, string>)).not.toThrow();
      const updated = await app.gql('mutation($id: ID!) { updateWebhook(id: $id, input: { events: ["article.created"] }) { events } }', {
        id: hook.id,
      });
      expect(updated.data.updateWebhook.events).toEqual(['article.created']);
      const bad = await app.gql('mutation($id: ID!) { updateWebhook(id: $id, input: { events: ["nope.thing"] }) { events } }', {
        id: hook.id,
      });
      expect(bad.errors?.[0].extensions.code).toBe('invalid_request');
      expect((await app.gql('mutation($id: ID!) { deleteWebhook(id: $id) { id } }', { id: hook.id })).data.deleteWebhook.id).toBe(hook.id);
      expect((await app.gql('query($o: ID!) { webhooks(organizationId: $o) { id } }', { o: t.org.id })).data.webhooks).toEqual([]);
      const asAgent = await app.gql(CREATE, { input: { organizationId: t.org.id, url: receiver.url } }, t.key);
      expect(asAgent.errors?.[0].extensions.code).toBe('permission_denied');
    } finally {
      await receiver.close();
    }
  });
});

describe('subscription scope and state', () => {
  it("sends a workspace-scoped subscription only its workspace's events", async () => {
    const receiver = await startReceiver();
    try {
      const t = await tenant(app);
      const other = await createWorkspace(app, t.org.id);
      const otherKey = await createKey(app, t.member.id, { permissions: ['changelog.update'], workspaceId: other.id });
      const hook = await subscribe(app, t, receiver.url, { workspaceId: t.workspace.id });
      expect((await app.api('POST', `${W}/changelog`, { key: otherKey.key, body: { ...entry, title: 'Other' } })).status).toBe(201);
      // Sentinel: the scoped workspace's own entry, written after the other one (fan-out is in commit order).
      expect((await app.api('POST', `${W}/changelog`, { key: t.key, body: { ...entry, title: 'Mine' } })).status).toBe(201);
      const [first] = await receiver.waitFor(1);
      expect(JSON.parse(first.body).data).toMatchObject({ workspaceId: t.workspace.id });
      const rows = await deliveriesWhen(hook.id, (l) => l.length > 0 && l.every((d) => d.status === 'delivered'));
      expect(rows).toHaveLength(1);
      expect(receiver.received).toHaveLength(1);
    } finally {
      await receiver.close();
    }
  });

  it('sends nothing more for a delivery whose subscription was disabled or deleted before its retry', async () => {
    // The first attempt fails with Retry-After: 2, so the retry is due two seconds later.
    const receiver = await startReceiver(() => ({ status: 500, headers: { 'retry-after': '2' } }));
    try {
      const t = await tenant(app);
      const disabled = await subscribe(app, t, receiver.url, { events: ['changelog.*'] });
      const deleted = await subscribe(app, t, receiver.url, { events: ['changelog.*'] });
      await app.api('POST', `${W}/changelog`, { key: t.key, body: entry });
      await receiver.waitFor(2);
      for (const hook of [disabled, deleted]) await deliveriesWhen(hook.id, (l) => l[0]?.attempts === 1);
      const off = await app.gql('mutation($id: ID!) { updateWebhook(id: $id, input: { enabled: false }) { enabled } }', {
        id: disabled.id,
      });
      expect(off.data.updateWebhook.enabled).toBe(false);
      expect((await app.gql('mutation($id: ID!) { deleteWebhook(id: $id) { id } }', { id: deleted.id })).errors).toBeUndefined();
      // Settled as failed instead of retried: from then on nothing can be sent for either.
      const [settled] = await deliveriesWhen(disabled.id, (l) => l[0]?.status === 'failed');
      expect(settled).toMatchObject({ status: 'failed', attempts: 1, lastError: 'subscription disabled' });
      const db = app.server.orm.em.fork().getConnection();
      const gone = await until(
        async () =>
          (
            await db.execute(`select status, last_error from webhook_deliveries where webhook_id = ? and status <> 'pending'`, [deleted.id])
          )[0],
        'the deleted subscription delivery to settle',
      );
      expect(gone).toEqual({ status: 'failed', last_error: 'subscription deleted' });
      expect(receiver.received).toHaveLength(2);
    } finally {
      await receiver.close();
    }
  });
});

describe('SSRF-safe targets', () => {
  it('re-checks the target when a subscription is updated', async () => {
    const strict = await strictApp();
    const t = await tenant(strict);
    const hook = await subscribe(strict, t, 'http://203.0.113.7/hook');
    for (const url of ['http://127.0.0.1:9/hook', 'http://169.254.169.254/latest', 'http://10.0.0.1/hook']) {
      const res = await strict.gql('mutation($id: ID!, $u: String!) { updateWebhook(id: $id, input: { url: $u }) { url } }', {
        id: hook.id,
        u: url,
      });
      expect(res.errors?.[0].extensions, url).toMatchObject({ code: 'invalid_request', details: [{ field: 'url' }] });
    }
    const list = await strict.gql('query($o: ID!) { webhooks(organizationId: $o) { url } }', { o: t.org.id });
    expect(list.data.webhooks).toEqual([{ url: 'http://203.0.113.7/hook' }]);
  });

  it.each([
    'http://127.0.0.1:9/hook',
    'http://[::1]:9/hook',
    'http://169.254.169.254/latest',
    'http://10.0.0.1/hook',
    'http://localhost:9/hook',
    'http://0.0.0.0/hook',
    'ftp://example.com/x',
  ])('refuses %s when loopback is not allowed', async (url) => {
    const strict = await strictApp();
    const t = await tenant(strict);
    const res = await strict.gql(CREATE, { input: { organizationId: t.org.id, url } });
    expect(res.errors?.[0].extensions).toMatchObject({ code: 'invalid_request', details: [{ field: 'url' }] });
  });
});

describe('fan-out', () => {
  // Several connections are needed to hold a transaction open while others commit: a server only.
  it.runIf(process.env.DATABASE_URL)('fans out in commit order: an event of a transaction that commits last is not skipped', async () => {
    const receiver = await startReceiver();
    const slow = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await slow.connect();
    try {
      const t = await tenant(app);
      await subscribe(app, t, receiver.url, { workspaceId: t.workspace.id, events: ['changelog.*'] });
      // A writer that began (and took its transaction id) before the next request, and commits after it.
      await slow.query('begin');
      await slow.query('select pg_current_xact_id()');
      const created = await app.api('POST', `${W}/changelog`, { key: t.key, body: entry });
      expect(created.status).toBe(201);
      // Held back, not skipped: an older transaction is still running. The pause is no synchronisation
      // (a correct dispatcher delivers nothing here however long it runs): it gives a dispatcher that
      // ignored the running transaction passes in which to deliver early and skip the slow event.
      await new Promise((r) => setTimeout(r, 600));
      expect(receiver.received).toHaveLength(0);
      await slow.query(
        `insert into events (organization_id, workspace_id, actor, action, target_type, target_id, created_at)
         values ($1, $2, 'admin', 'changelog.created', 'changelog_entry', 'slow-writer', now())`,
        [t.org.id, t.workspace.id],
      );
      await slow.query('commit');
      const got = await receiver.waitFor(2);
      expect(got.map((r) => JSON.parse(r.body).data.target.id).sort()).toEqual([String(created.body.id), 'slow-writer'].sort());
    } finally {
      await slow.query('rollback').catch(() => undefined);
      await slow.end();
      await receiver.close();
    }
  });
});

let strict: TestApp | null = null;
async function strictApp() {
  strict ??= await startTestApp({ embeddingWorker: false, webhookDispatcher: false });
  return strict;
}
afterAll(async () => strict?.close());

// On a shared PostgreSQL every other test process's dispatcher would deliver the event before the
// restart (which is the point of a shared queue), so this runs on the embedded database.
describe.skipIf(Boolean(process.env.DATABASE_URL))('durability', () => {
  it('keeps undelivered events across a service restart', async () => {
    const receiver = await startReceiver();
    const dir = await mkdtemp(join(tmpdir(), 'wks-webhooks-'));
    const common = {
      port: 0,
      host: '127.0.0.1',
      dataDir: join(dir, 'db'),
      adminToken: app.adminToken,
      logger: testLogger(),
      outboundAllowLoopback: true,
      embeddingWorker: false,
    };
    try {
      const first = await startServer({ ...common, webhookDispatcher: false });
      const gql = (url: string, query: string, variables: unknown, token = app.adminToken) =>
        fetch(`${url}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
          body: JSON.stringify({ query, variables }),
        }).then((r) => r.json() as Promise<any>);
      const org = (await gql(first.url, 'mutation { createOrganization(input: { name: "Durable", plan: "free" }) { id } }', {})).data
        .createOrganization;
      const ws = (
        await gql(first.url, 'mutation($o: ID!) { createWorkspace(input: { organizationId: $o, name: "W" }) { id } }', { o: org.id })
      ).data.createWorkspace;
      await gql(first.url, CREATE, { input: { organizationId: org.id, url: receiver.url } });
      const member = (
        await gql(first.url, 'mutation($o: ID!) { createMember(input: { organizationId: $o, email: "d@x.io", role: "owner" }) { id } }', {
          o: org.id,
        })
      ).data.createMember;
      const key = (
        await gql(
          first.url,
          'mutation($m: ID!, $w: ID!) { createAgentKey(input: { memberId: $m, name: "k", permissions: ["changelog.update"], workspaceId: $w }) { key } }',
          { m: member.id, w: ws.id },
        )
      ).data.createAgentKey.key;
      const res = await fetch(`${first.url}${W}/changelog`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(entry),
      });
      expect(res.status).toBe(201);
      await first.close();
      expect(receiver.received).toHaveLength(0);
      const second = await startServer({ ...common, webhookDispatcher: true });
      try {
        const got = await receiver.waitFor(3);
        expect(got.map((r) => JSON.parse(r.body).type).sort()).toEqual(['agent_key.created', 'changelog.created', 'member.created']);
      } finally {
        await second.close();
      }
    } finally {
      await receiver.close();
      await rm(dir, { recursive: true, force: true });
    }
  }, 90_000);
});
