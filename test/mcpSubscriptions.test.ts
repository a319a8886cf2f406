import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serviceClient, startTestApp, type TestApp } from './support/app.js';
import { createKey, createMember, tenant, type Tenant } from './support/factories.js';
import { spawnService, type ServiceProcess } from './support/processes.js';
import { RECHECK_MS } from '../rest/mcpListen.js';

const METRICS = 'mcp_subscriptions_metrics_token_0123456789';
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ metricsToken: METRICS });
});
afterAll(async () => app?.close());

const W = '/api/v1/workspaces/-';
const uri = (t: Tenant, rest: string) => `wks://workspaces/${t.workspace.id}/${rest}`;

/** The official v2 client on a revision, with every notice it hears recorded. */
async function listener(url: string, key: string, revision: '2025-11-25' | '2026-07-28') {
  const client = new ClientV2(
    { name: 'listener', version: '1.0.0' },
    revision === '2026-07-28' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : undefined,
  );
  const heard: { method: string; uri?: string; at: number }[] = [];
  const waiters: (() => void)[] = [];
  for (const method of [
    'notifications/resources/updated',
    'notifications/resources/list_changed',
    'notifications/tools/list_changed',
  ] as const)
    client.setNotificationHandler(method, (n: any) => {
      heard.push({ method, uri: n.params?.uri, at: Date.now() });
      waiters.splice(0).forEach((w) => w());
    });
  await client.connect(new TransportV2(new URL(`${url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  /** Resolves once a notice of `method` (for `uri`) has been heard, or rejects after `ms`. */
  const hears = async (method: string, about?: string, ms = 5_000) => {
    const deadline = Date.now() + ms;
    for (;;) {
      const found = heard.find((h) => h.method === method && (about === undefined || h.uri === about));
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`no ${method} ${about ?? ''} within ${ms} ms; heard ${JSON.stringify(heard)}`);
      await new Promise<void>((resolve) => {
        waiters.push(resolve);
        setTimeout(resolve, 100);
      });
    }
  };
  return { client: client as any, heard, hears };
}

/** The service's count of live event reads (its metrics). */
async function liveReads(): Promise<number> {
  const text = await (await fetch(`${app.url}/metrics`, { headers: { authorization: `Bearer ${METRICS}` } })).text();
  const line = text.split('\n').find((l) => l.startsWith('wks_live_event_reads_total '));
  if (!line) throw new Error('no wks_live_event_reads_total in the metrics');
  return Number(line.split(' ')[1]);
}

async function notes(t: Tenant, ...paths: string[]) {
  for (const path of paths) {
    const res = await app.api('PUT', `${W}/memory/note`, {
      key: t.key,
      body: { path, body: `About ${path}.`, kind: 'note', links: [], tags: [] },
    });
    expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
  }
}
const put = (api: TestApp | Awaited<ReturnType<typeof serviceClient>>, key: string, path: string, body: string) =>
  api.api('PUT', `${W}/memory/note`, { key, body: { path, body, kind: 'note', links: [], tags: [] } });

describe('2026-07-28: subscriptions/listen', () => {
  it('acknowledges the URIs the key may read and hears a change made through REST by another key within a second', async () => {
    const t = await tenant(app, { plan: 'pro' });
    await notes(t, 'runbooks/deploy', 'runbooks/other');
    await app.api('POST', `${W}/sections`, { key: t.key, body: { label: 'Internal', visibility: 'restricted' } });
    await app.api('POST', `${W}/articles`, { key: t.key, body: { title: 'Escrow', section: 'internal', markdown: 'x' } });
    const member = await createMember(app, t.org.id, { role: 'viewer' });
    const viewer = await createKey(app, member.id, { permissions: ['memory.read', 'article.read'], workspaceId: t.workspace.id });
    const { client, heard, hears } = await listener(app.url, viewer.key, '2026-07-28');
    try {
      const watched = uri(t, 'notes/runbooks/deploy');
      const sub = await client.listen({
        resourceSubscriptions: [watched, uri(t, 'articles/escrow'), uri(t, 'notes/none'), 'https://example.com/x'],
        resourcesListChanged: true,
      });
      // The restricted article, a note that is not there and a foreign URI are not honoured.
      expect(sub.honoredFilter).toEqual({ resourceSubscriptions: [watched], resourcesListChanged: true });
      const writer = await createKey(app, t.member.id, { permissions: ['memory.write', 'memory.read'], workspaceId: t.workspace.id });
      await put(app, writer.key, 'runbooks/other', 'Not watched.');
      const changed = Date.now();
      expect((await put(app, writer.key, 'runbooks/deploy', 'Merge, then watch the pipeline.')).status).toBe(200);
      const notice = await hears('notifications/resources/updated', watched);
      expect(notice.at - changed).toBeLessThan(1_000);
      expect(heard.filter((h) => h.method === 'notifications/resources/updated').map((h) => h.uri)).toEqual([watched]);
      // A new note changes the list.
      await put(app, writer.key, 'runbooks/new', 'New.');
      await hears('notifications/resources/list_changed');
      await sub.close();
    } finally {
      await client.close();
    }
  });

  it('reads new events at once after a write a stream watches; writes nobody watches wait for the next poll', async () => {
    const t = await tenant(app);
    await notes(t, 'watched', 'busy');
    const { client, hears } = await listener(app.url, t.key, '2026-07-28');
    try {
      const sub = await client.listen({ resourceSubscriptions: [uri(t, 'notes/watched')] });
      const before = await liveReads();
      const started = Date.now();
      for (let i = 0; i < 12; i++) {
        expect((await put(app, t.key, 'busy', `Busy ${i}.`)).status).toBe(200);
        await new Promise((r) => setTimeout(r, 60));
      }
      const reads = (await liveReads()) - before;
      // One poll every 200 ms (and one more at either end); a read after each write would be twelve more.
      expect(reads).toBeLessThanOrEqual(Math.ceil((Date.now() - started) / 200) + 2);
      const changed = Date.now();
      expect((await put(app, t.key, 'watched', 'Now.')).status).toBe(200);
      const notice = await hears('notifications/resources/updated', uri(t, 'notes/watched'));
      expect(notice.at - changed).toBeLessThan(1_000);
      await sub.close();
    } finally {
      await client.close();
    }
  });

  it("ends a revoked key's stream, and refuses more streams than a key's slots or more URIs than a listen may name", async () => {
    const t = await tenant(app);
    await notes(t, 'a');
    const key = await createKey(app, t.member.id, { permissions: ['memory.read'], workspaceId: t.workspace.id });
    const { client } = await listener(app.url, key.key, '2026-07-28');
    try {
      const sub = await client.listen({ resourceSubscriptions: [uri(t, 'notes/a')] });
      const tooMany = Array.from({ length: 101 }, (_, i) => uri(t, `notes/n${i}`));
      await expect(client.listen({ resourceSubscriptions: tooMany })).rejects.toThrow(/at most 100 resources/);
      // Ten slots per key across every process: nine more open, the eleventh is refused.
      const more = [];
      for (let i = 0; i < 9; i++) more.push(await client.listen({ resourceSubscriptions: [uri(t, 'notes/a')] }));
      await expect(client.listen({ resourceSubscriptions: [uri(t, 'notes/a')] })).rejects.toThrow(/rate_limited/);
      await Promise.all(more.map((s: any) => s.close()));
      const revoked = await app.gql('mutation($id: ID!) { revokeAgentKey(id: $id) { id } }', { id: key.id });
      expect(revoked.errors).toBeUndefined();
      await put(app, t.key, 'a', 'Changed after the revocation.');
      // Ended by the change's own verdict, well before the periodic check of an idle stream (RECHECK_MS).
      const cause = await Promise.race([sub.closed, new Promise((r) => setTimeout(() => r('still open'), 2_500))]);
      expect(cause).toBe('graceful'); // ended by the server with its result
    } finally {
      await client.close();
    }
  });

  it('checks each key between changes: its streams hear a narrower tool list, and all end once it is revoked; another key stays', async () => {
    const t = await tenant(app);
    await notes(t, 'quiet');
    const editor = await createMember(app, t.org.id, { role: 'editor' });
    const key = await createKey(app, editor.id, { permissions: ['memory.read', 'memory.write'], workspaceId: t.workspace.id });
    const other = await createKey(app, t.member.id, { permissions: ['memory.read'], workspaceId: t.workspace.id });
    const mine = [await listener(app.url, key.key, '2026-07-28'), await listener(app.url, key.key, '2026-07-28')];
    const theirs = await listener(app.url, other.key, '2026-07-28');
    try {
      const filter = { resourceSubscriptions: [uri(t, 'notes/quiet')], toolsListChanged: true };
      const subs = await Promise.all(mine.map((l) => l.client.listen(filter)));
      const otherSub = await theirs.client.listen(filter);
      // No change is made: only the periodic check (every RECHECK_MS, once for the key's two streams) can tell them.
      const demoted = await app.gql('mutation($id: ID!) { updateMember(id: $id, input: { role: "viewer" }) { id } }', { id: editor.id });
      expect(demoted.errors).toBeUndefined();
      for (const l of mine) await l.hears('notifications/tools/list_changed', undefined, RECHECK_MS + 2_000);
      expect((await app.gql('mutation($id: ID!) { revokeAgentKey(id: $id) { id } }', { id: key.id })).errors).toBeUndefined();
      const ended = (sub: any) => Promise.race([sub.closed, new Promise((r) => setTimeout(() => r('still open'), RECHECK_MS + 2_000))]);
      expect(await Promise.all(subs.map(ended))).toEqual(['graceful', 'graceful']);
      expect(await Promise.race([otherSub.closed, new Promise((r) => setTimeout(() => r('still open'), 0))])).toBe('still open');
      expect(theirs.heard).toEqual([]);
      await otherSub.close();
    } finally {
      await Promise.all([...mine, theirs].map((l) => l.client.close().catch(() => undefined)));
    }
  });

  it('judges each stream of a change as its own caller: keys of one member share a read, a revoked one and another role do not', async () => {
    const t = await tenant(app, { plan: 'pro' });
    await app.api('POST', `${W}/sections`, { key: t.key, body: { label: 'Open', visibility: 'public' } });
    await app.api('POST', `${W}/sections`, { key: t.key, body: { label: 'Staff', visibility: 'restricted' } });
    const created = await app.api('POST', `${W}/articles`, { key: t.key, body: { title: 'Payroll', section: 'open', markdown: 'x' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const viewer = await createMember(app, t.org.id, { role: 'viewer' });
    const keys = {
      first: await createKey(app, t.member.id, { permissions: ['article.read'], workspaceId: t.workspace.id }),
      second: await createKey(app, t.member.id, { permissions: ['article.read'], workspaceId: t.workspace.id }),
      revoked: await createKey(app, t.member.id, { permissions: ['article.read'], workspaceId: t.workspace.id }),
      viewer: await createKey(app, viewer.id, { permissions: ['article.read'], workspaceId: t.workspace.id }),
    };
    const watched = uri(t, 'articles/payroll');
    const listeners = Object.fromEntries(
      await Promise.all(Object.entries(keys).map(async ([name, k]) => [name, await listener(app.url, k.key, '2026-07-28')] as const)),
    );
    try {
      const subs = Object.fromEntries(
        await Promise.all(
          Object.entries(listeners).map(async ([name, l]) => [name, await l.client.listen({ resourceSubscriptions: [watched] })] as const),
        ),
      );
      for (const sub of Object.values(subs)) expect((sub as any).honoredFilter).toEqual({ resourceSubscriptions: [watched] });
      expect((await app.gql('mutation($id: ID!) { revokeAgentKey(id: $id) { id } }', { id: keys.revoked.id })).errors).toBeUndefined();
      // One change reaches four streams: the article moves where viewers may not read it.
      const moved = await app.api('POST', `${W}/articles/payroll/placement`, { key: t.key, body: { section: 'staff' } });
      expect(moved.status, JSON.stringify(moved.body)).toBe(200);
      await listeners.first.hears('notifications/resources/updated', watched);
      await listeners.second.hears('notifications/resources/updated', watched);
      expect(await Promise.race([subs.revoked.closed, new Promise((r) => setTimeout(() => r('still open'), 8_000))])).toBe('graceful');
      await new Promise((r) => setTimeout(r, 1_500));
      expect(listeners.revoked.heard.filter((h) => h.method === 'notifications/resources/updated')).toEqual([]);
      expect(listeners.viewer.heard.filter((h) => h.method === 'notifications/resources/updated')).toEqual([]);
    } finally {
      await Promise.all(Object.values(listeners).map((l) => l.client.close().catch(() => undefined)));
    }
  });

  it('ends every stream with its result when the service drains', async () => {
    const other = await startTestApp();
    const t = await tenant(other);
    await other.api('PUT', `${W}/memory/note`, { key: t.key, body: { path: 'a', body: 'x', kind: 'note', links: [], tags: [] } });
    const { client } = await listener(other.url, t.key, '2026-07-28');
    const sub = await client.listen({ resourceSubscriptions: [uri(t, 'notes/a')] });
    await other.close();
    expect(await Promise.race([sub.closed, new Promise((r) => setTimeout(() => r('still open'), 5_000))])).toBe('graceful');
    await client.close().catch(() => undefined);
  });
});

describe('2025-11-25: resources/subscribe and the GET stream', () => {
  it('delivers a subscribed resource changed through REST, not an unsubscribed one, and stops after unsubscribe', async () => {
    const t = await tenant(app);
    await notes(t, 'runbooks/deploy', 'runbooks/other');
    const key = await createKey(app, t.member.id, { permissions: ['memory.read'], workspaceId: t.workspace.id });
    const { client, heard, hears } = await listener(app.url, key.key, '2025-11-25');
    try {
      const watched = uri(t, 'notes/runbooks/deploy');
      await client.subscribeResource({ uri: watched });
      await expect(client.subscribeResource({ uri: uri(t, 'notes/none') })).rejects.toThrow(/No resource/);
      // The GET stream opened after initialize; give it a moment to be listening.
      await new Promise((r) => setTimeout(r, 500));
      await put(app, t.key, 'runbooks/other', 'Not watched.');
      const changed = Date.now();
      await put(app, t.key, 'runbooks/deploy', 'Watched.');
      const notice = await hears('notifications/resources/updated', watched);
      expect(notice.at - changed).toBeLessThan(1_000);
      expect(heard.filter((h) => h.method === 'notifications/resources/updated').map((h) => h.uri)).toEqual([watched]);
      await client.unsubscribeResource({ uri: watched });
      await put(app, t.key, 'runbooks/deploy', 'Watched no more.');
      await new Promise((r) => setTimeout(r, 1_000));
      expect(heard.filter((h) => h.method === 'notifications/resources/updated')).toHaveLength(1);
    } finally {
      await client.close();
    }
  });
});

describe.skipIf(!process.env.DATABASE_URL)('across service processes on one PostgreSQL', () => {
  let other: ServiceProcess;
  beforeAll(async () => {
    other = await spawnService({ DATABASE_URL: process.env.DATABASE_URL!, ADMIN_TOKEN: app.adminToken });
  }, 120_000);
  afterAll(async () => other?.stop());

  it.each(['2026-07-28', '2025-11-25'] as const)(
    'a listener on one process hears a change another key made through REST on the other (%s)',
    async (revision) => {
      const t = await tenant(app);
      await notes(t, 'shared/plan');
      const watched = uri(t, 'notes/shared/plan');
      const { client, hears } = await listener(app.url, t.key, revision);
      try {
        if (revision === '2026-07-28') await client.listen({ resourceSubscriptions: [watched] });
        else {
          await client.subscribeResource({ uri: watched });
          await new Promise((r) => setTimeout(r, 500));
        }
        const writer = await createKey(app, t.member.id, { permissions: ['memory.write'], workspaceId: t.workspace.id });
        const remote = await serviceClient(other.url, app.adminToken);
        const changed = Date.now();
        expect((await put(remote, writer.key, 'shared/plan', 'Changed elsewhere.')).status).toBe(200);
        const notice = await hears('notifications/resources/updated', watched);
        expect(notice.at - changed).toBeLessThan(1_000);
      } finally {
        await client.close();
      }
    },
  );
});
