// GraphQL subscriptions over WebSocket (graphql-ws): authorised like queries, isolated per
// workspace, capped per key across processes, ended for revoked keys and slow consumers; and, on
// PostgreSQL, a write through REST on one process reaching a subscriber on another. Who may hold a
// socket at all (caps, connection_init, closing on revocation) is test/sockets.test.ts's.
import { createClient, type Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { SUBSCRIBER_BUFFER, SUBSCRIPTIONS_PER_HOLDER } from '../src/live/hub.js';
import { startTestApp, type TestApp } from './support/app.js';
import { createKey, createMember, tenant, type Tenant } from './support/factories.js';
import { spawnService, type ServiceProcess } from './support/processes.js';
import { until } from './support/wait.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
}, 120_000);
afterAll(async () => app?.close());

const W = '/api/v1/workspaces/-';
const note = (path: string, body: string) => ({ path, body, kind: 'note', links: [], tags: [] });

interface Received {
  data?: any;
  errors?: { message: string; extensions?: { code?: string; details?: any } }[];
}

/** One subscription through a graphql-ws client: its messages in a queue, `next()` waits for the following one. */
class Subscriber {
  readonly messages: Received[] = [];
  completed = false;
  private waiters: (() => void)[] = [];
  private readonly client: Client;
  closeCode: number | null = null;

  constructor(baseUrl: string, token: string | null, query: string, variables: Record<string, unknown>) {
    this.client = createClient({
      url: `${baseUrl.replace(/^http/, 'ws')}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: token ? { authorization: `Bearer ${token}` } : {},
      retryAttempts: 0,
      lazy: false,
      onNonLazyError: () => undefined, // a refused connection is asserted through its close code
      on: { closed: (event) => (this.closeCode = (event as { code: number }).code) },
    });
    this.client.subscribe(
      { query, variables },
      {
        next: (value) => this.push(value as Received),
        error: (error) => {
          if (Array.isArray(error)) return this.push({ errors: error });
          // The socket closed (a CloseEvent): recorded by `closed`, not a message.
          this.completed = true;
          this.wake();
        },
        complete: () => {
          this.completed = true;
          this.wake();
        },
      },
    );
  }

  private push(message: Received) {
    this.messages.push(message);
    this.wake();
  }

  private wake() {
    for (const waiter of this.waiters.splice(0)) waiter();
  }

  /** Resolves with the `index`-th message (0-based), waiting at most `ms`. */
  async message(index: number, ms = 5000): Promise<Received> {
    const deadline = Date.now() + ms;
    while (this.messages.length <= index) {
      const left = deadline - Date.now();
      if (left <= 0 || (this.completed && this.messages.length <= index))
        throw new Error(`no message ${index} within ${ms} ms (got ${JSON.stringify(this.messages)}; close ${this.closeCode})`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.messages[index];
  }

  /** Resolves with the close code once the server has closed the connection. */
  async closed(ms = 5000): Promise<number> {
    const deadline = Date.now() + ms;
    while (this.closeCode === null) {
      if (Date.now() > deadline) throw new Error(`not closed within ${ms} ms`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return this.closeCode;
  }

  /** Until the server has registered the subscription (its hub counts it), so later writes reach it. */
  async ready(hubSize: () => number, before: number) {
    const deadline = Date.now() + 5000;
    while (hubSize() <= before) {
      if (this.messages.length) throw new Error(`refused: ${JSON.stringify(this.messages[0])}`);
      if (Date.now() > deadline) throw new Error('the subscription was not registered within 5 s');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  async close() {
    await this.client.dispose();
  }
}

const PROPOSALS = 'subscription($w: String!) { proposalChanged(workspace: $w) { action proposal { id status summary } } }';
const AUDIT =
  'subscription($ws: ID!, $action: String) { auditEventAdded(workspaceId: $ws, action: $action) { id action targetType targetId object } }';
const GAPS = 'subscription($w: String!) { contentGapChanged(workspace: $w) { action reportId group { id state } } }';

/** Opens a subscription on the test app and waits until the server holds it. */
async function subscribe(token: string | null, query: string, variables: Record<string, unknown>, on: TestApp = app) {
  const before = on.server.live.size;
  const s = new Subscriber(on.url, token, query, variables);
  await s.ready(() => on.server.live.size, before);
  return s;
}

async function setup(plan?: string): Promise<Tenant> {
  const t = await tenant(app, { plan });
  expect((await app.api('POST', `${W}/sections`, { key: t.key, body: { label: 'Docs' } })).status).toBe(201);
  expect((await app.api('POST', `${W}/articles`, { key: t.key, body: { title: 'Install', section: 'docs', markdown: 'v1' } })).status).toBe(
    201,
  );
  return t;
}

const propose = async (key: string, summary: string) => {
  const res = await app.api('POST', `${W}/proposals`, { key, body: { article: 'install', markdown: `${summary} text`, summary } });
  expect(res.status).toBe(201);
  return res.body.id as number;
};

describe('subscriptions: delivery', () => {
  it('delivers proposal changes to a reviewer key, in order, with the proposal as it is now', async () => {
    const t = await setup();
    const s = await subscribe(t.key, PROPOSALS, { w: '-' });
    const id = await propose(t.key, 'First');
    expect((await s.message(0)).data.proposalChanged).toEqual({
      action: 'proposal.created',
      proposal: { id, status: 'open', summary: 'First' },
    });
    const approved = await app.gql('mutation($id: Int!) { approveProposal(workspace: "-", id: $id) { status } }', { id }, t.key);
    expect(approved.errors).toBeUndefined();
    expect((await s.message(1)).data.proposalChanged).toMatchObject({ action: 'proposal.approved', proposal: { id, status: 'approved' } });
    await s.close();
  });

  it('delivers audit events to the admin token, filtered by action, with the event object', async () => {
    const t = await setup();
    const all = await subscribe(app.adminToken, AUDIT, { ws: t.workspace.id });
    const onlyNotes = await subscribe(app.adminToken, AUDIT, { ws: t.workspace.id, action: 'memory.note.created' });
    expect((await app.api('PUT', `${W}/memory/note`, { key: t.key, body: note('live-note', 'hello') })).status).toBe(200);
    await propose(t.key, 'Second');
    const first = (await all.message(0)).data.auditEventAdded;
    expect(first).toMatchObject({ action: 'memory.note.created', targetType: 'memory_note' });
    expect(first.object).toMatchObject({ path: 'live-note', body: 'hello' });
    expect((await all.message(1)).data.auditEventAdded.action).toBe('proposal.created');
    expect((await onlyNotes.message(0)).data.auditEventAdded.action).toBe('memory.note.created');
    // The note filter never passes the proposal: a later note event is its second message.
    expect((await app.api('PUT', `${W}/memory/note`, { key: t.key, body: note('live-note-2', 'again') })).status).toBe(200);
    expect((await onlyNotes.message(1)).data.auditEventAdded.object.path).toBe('live-note-2');
    await Promise.all([all.close(), onlyNotes.close()]);
  });

  it("never delivers another workspace's events", async () => {
    const mine = await setup();
    const other = await setup();
    const s = await subscribe(app.adminToken, AUDIT, { ws: mine.workspace.id });
    expect((await app.api('PUT', `${W}/memory/note`, { key: other.key, body: note('theirs', 'x') })).status).toBe(200);
    expect((await app.api('PUT', `${W}/memory/note`, { key: mine.key, body: note('mine', 'y') })).status).toBe(200);
    const first = (await s.message(0)).data.auditEventAdded;
    expect(first.object.path).toBe('mine');
    await new Promise((resolve) => setTimeout(resolve, 300)); // a poll round: nothing else may arrive
    expect(s.messages).toHaveLength(1);
    await s.close();
  });

  it('tells content-gap subscribers about reports, drafts from a group and its resolution', async () => {
    const t = await setup();
    const s = await subscribe(app.adminToken, GAPS, { w: t.workspace.id });
    const report = await app.api('POST', `${W}/content-gaps`, { key: t.key, body: { question: 'how do I rotate a key?' } });
    expect(report.status).toBe(202);
    const reported = (await s.message(0)).data.contentGapChanged;
    expect(reported.action).toBe('content_gap.reported');
    expect(reported.reportId).toBeGreaterThan(0);
    await s.close();
  });

  it("scrubs a group's label (a question as asked) like the contentGaps query does", async () => {
    const t = await setup();
    const q = 'zzqx rotate the token for jane@example.com';
    expect((await app.api('GET', `${W}/search?q=${encodeURIComponent(q)}`, { key: t.key })).body).toEqual([]);
    await app.server.drainEmbeddings(t.workspace.id);
    const groups = await app.api('GET', `${W}/content-gaps`, { key: t.key });
    expect(groups.status).toBe(200);
    const group = groups.body.find((g: any) => g.label.includes('zzqx'));
    expect(group, JSON.stringify(groups.body)).toBeDefined();
    expect(group.label).not.toContain('jane@example.com');
    const s = await subscribe(t.key, 'subscription { contentGapChanged(workspace: "-") { action group { id label } } }', {});
    const drafted = await app.api('POST', `${W}/content-gaps/${group.id}/proposal`, {
      key: t.key,
      body: { title: 'Rotating tokens', section: 'docs', markdown: 'How to rotate.', summary: 'Answer the gap' },
    });
    expect(drafted.status).toBe(201);
    const change = (await s.message(0)).data.contentGapChanged;
    expect(change.action).toBe('proposal.created');
    expect(change.group).toEqual({ id: group.id, label: group.label });
    await s.close();
  });
});

describe('subscriptions: refusals', () => {
  it('closes a connection without a valid credential with 4403', async () => {
    for (const token of [null, 'svc_pat_not_a_real_key', 'wrong-admin-token']) {
      const s = new Subscriber(app.url, token, PROPOSALS, { w: '-' });
      expect(await s.closed(), String(token)).toBe(4403);
      expect(s.messages).toEqual([]);
      await s.close();
    }
  });

  it('authorises like the queries: permission_denied, not_found, invalid_request', async () => {
    const t = await setup();
    const viewer = await createKey(app, t.member.id, { permissions: ['article.read', 'proposal.read'], workspaceId: t.workspace.id });
    const other = await setup();
    const before = app.server.live.size;
    const cases: [string, string, Record<string, unknown>, string][] = [
      [viewer.key, PROPOSALS, { w: '-' }, 'permission_denied'],
      [viewer.key, GAPS, { w: '-' }, 'permission_denied'],
      [t.key, AUDIT, { ws: t.workspace.id }, 'permission_denied'], // the audit trail is the admin's
      [t.key, PROPOSALS, { w: other.workspace.id }, 'not_found'],
      [app.adminToken, AUDIT, { ws: '00000000-0000-4000-8000-000000000000' }, 'not_found'],
      [app.adminToken, PROPOSALS, { w: 'not-a-workspace' }, 'not_found'],
      [t.key, 'subscription { proposalChanged { action } }', {}, 'invalid_request'],
    ];
    for (const [token, query, variables, code] of cases) {
      const s = new Subscriber(app.url, token, query, variables);
      const message = await s.message(0);
      expect(message.errors?.[0].extensions?.code, `${query} ${JSON.stringify(variables)}`).toBe(code);
      await s.close();
    }
    expect(app.server.live.size).toBe(before);
  });

  it(`caps open subscriptions at ${SUBSCRIPTIONS_PER_HOLDER} per key, and a completed one frees its slot`, async () => {
    const t = await setup();
    const open: Subscriber[] = [];
    for (let i = 0; i < SUBSCRIPTIONS_PER_HOLDER; i++) open.push(await subscribe(t.key, PROPOSALS, { w: '-' }));
    const over = new Subscriber(app.url, t.key, PROPOSALS, { w: '-' });
    const refusal = await over.message(0);
    expect(refusal.errors?.[0].extensions).toMatchObject({ code: 'rate_limited', details: { limit: SUBSCRIPTIONS_PER_HOLDER } });
    await over.close();
    // Another key of the same member has its own slots.
    const second = await createKey(app, t.member.id, { permissions: ['proposal.read', 'article.update'], workspaceId: t.workspace.id });
    const theirs = await subscribe(second.key, PROPOSALS, { w: '-' });
    const held = app.server.live.size;
    await open.pop()!.close();
    while (app.server.live.size >= held) await new Promise((resolve) => setTimeout(resolve, 20));
    // Its slot is freed right after: a new subscription gets it (retried while the free is in flight).
    const deadline = Date.now() + 5000;
    let again: Subscriber | null = null;
    while (!again) {
      const before = app.server.live.size;
      const attempt = new Subscriber(app.url, t.key, PROPOSALS, { w: '-' });
      try {
        await attempt.ready(() => app.server.live.size, before);
        again = attempt;
      } catch (error) {
        await attempt.close();
        if (Date.now() > deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    await Promise.all([...open, theirs, again].map((s) => s.close()));
  });

  it('refuses every operation on an open socket once its key is revoked, and closes the socket (4403)', async () => {
    const t = await setup();
    const reviewer = await createKey(app, t.member.id, { permissions: ['proposal.read', 'article.update'], workspaceId: t.workspace.id });
    const client = createClient({
      url: `${app.url.replace(/^http/, 'ws')}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${reviewer.key}` },
      retryAttempts: 0,
    });
    let sockets = 0;
    // The first close is the revoked socket's; a query sent after it opens a second socket that the
    // revoked key cannot authenticate, so that one closes too, for its own reason.
    const closes: { code: number; reason: string }[] = [];
    client.on('connected', () => sockets++);
    client.on('closed', (event) => void closes.push(event as { code: number; reason: string }));
    const run = (query: string) =>
      new Promise<Received>((resolve) => {
        // Resolves with the first answer (a query completes by itself; a refusal is an error).
        client.subscribe(
          { query },
          {
            next: (value) => resolve(value as Received),
            error: (error) => resolve({ errors: Array.isArray(error) ? error : [{ message: `closed ${(error as any).code}` }] }),
            complete: () => resolve({}),
          },
        );
      });
    // A subscription that stays open holds the connection across the revocation.
    const held: Received[] = [];
    const stopHeld = client.subscribe(
      { query: PROPOSALS, variables: { w: '-' } },
      { next: (v) => void held.push(v as Received), error: () => undefined, complete: () => undefined },
    );
    const before = await run('{ proposals(workspace: "-") { items { id } } }');
    expect(before.errors).toBeUndefined();
    const revoked = await app.gql('mutation($id: ID!) { revokeAgentKey(id: $id) { id } }', { id: reviewer.id });
    expect(revoked.errors).toBeUndefined();
    // Sent right after the revocation: refused on the socket (unauthorized), or the socket is already closed.
    const query = await run('{ proposals(workspace: "-") { items { id } } }');
    expect(query.data, JSON.stringify(query)).toBeUndefined();
    expect(['unauthorized', undefined]).toContain(query.errors?.[0].extensions?.code);
    await until(() => closes.length > 0, 'the socket closed');
    expect(closes[0]).toMatchObject({ code: 4403, reason: 'Forbidden: the credential was revoked or has expired' });
    for (const later of closes.slice(1)) expect(later).toMatchObject({ code: 4403, reason: 'Forbidden: no valid credential' });
    expect(held).toEqual([]);
    expect(sockets).toBe(1); // no second connection was acknowledged
    stopHeld();
    await client.dispose();
  });

  it('stops a subscription once its member is demoted: no later event reaches it, and its socket is closed (4403)', async () => {
    const t = await setup();
    const s = await subscribe(t.key, PROPOSALS, { w: '-' });
    await propose(t.key, 'Before the demotion');
    expect((await s.message(0)).data.proposalChanged.action).toBe('proposal.created');
    const demoted = await app.gql('mutation($id: ID!) { updateMember(id: $id, input: { role: "viewer" }) { role } }', { id: t.member.id });
    expect(demoted.errors).toBeUndefined();
    // A viewer may no longer review: another member's proposal never reaches it (permission_denied if it raced the close).
    const editor = await createMember(app, t.org.id, { role: 'editor' });
    const other = await createKey(app, editor.id, { permissions: ['proposal.create'], workspaceId: t.workspace.id });
    await propose(other.key, 'After the demotion');
    expect(await s.closed()).toBe(4403);
    for (const message of s.messages.slice(1)) expect(message.errors?.[0].extensions?.code).toBe('permission_denied');
    await s.close();
  });

  it('stops a subscription once its key is revoked: no later event reaches it, and its socket is closed (4403)', async () => {
    const t = await setup();
    const reviewer = await createKey(app, t.member.id, { permissions: ['proposal.read', 'article.update'], workspaceId: t.workspace.id });
    const s = await subscribe(reviewer.key, PROPOSALS, { w: '-' });
    const revoked = await app.gql('mutation($id: ID!) { revokeAgentKey(id: $id) { id } }', { id: reviewer.id });
    expect(revoked.errors).toBeUndefined();
    await propose(t.key, 'After the revocation');
    expect(await s.closed()).toBe(4403);
    for (const message of s.messages) expect(message.errors?.[0].extensions?.code).toBe('unauthorized');
    await s.close();
  });
});

describe('subscriptions: the rate limit', () => {
  let limited: TestApp;
  beforeAll(async () => {
    limited = await startTestApp({ rateLimit: { max: 3, windowSeconds: 3600 } });
  }, 120_000);
  afterAll(async () => limited?.close());

  it('charges connection_init and each operation on the socket to the key: past the limit, rate_limited, then 4429 at connection', async () => {
    const t = await tenant(limited);
    const first = await subscribe(t.key, PROPOSALS, { w: '-' }, limited); // connection_init and subscribe: 2
    const over = new Subscriber(limited.url, t.key, PROPOSALS, { w: '-' }); // connection_init: 3; subscribe: 4
    const refusal = await over.message(0);
    expect(refusal.errors?.[0].extensions).toMatchObject({ code: 'rate_limited', details: { limit: 3, windowSeconds: 3600 } });
    const late = new Subscriber(limited.url, t.key, PROPOSALS, { w: '-' });
    expect(await late.closed()).toBe(4429);
    await Promise.all([first, over, late].map((s) => s.close()));
  });
});

describe('subscriptions: backpressure', () => {
  it(`ends a subscriber that falls more than ${SUBSCRIBER_BUFFER} events behind with rate_limited, instead of dropping events`, async () => {
    const t = await setup('pro'); // more notes than the free plan's 200
    const before = app.server.live.size;
    // A stream nobody reads (like a stalled socket): the hub buffers, then gives up on it.
    const stream = await app.server.live.subscribe(t.workspace.id, () => true);
    const writes = SUBSCRIBER_BUFFER + 5;
    for (let i = 0; i < writes; i += 25)
      await Promise.all(
        Array.from({ length: Math.min(25, writes - i) }, (_, j) =>
          app.api('PUT', `${W}/memory/note`, { key: t.key, body: note(`bulk-${i + j}`, 'x') }).then((r) => expect(r.status).toBe(200)),
        ),
      );
    // Nobody reads: once the hub has read the writes' events, the stream overflows and leaves the hub.
    const deadline = Date.now() + 20_000;
    while (app.server.live.size > before) {
      if (Date.now() > deadline) throw new Error('the unread stream was not ended within 20 s of the writes');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    // What was buffered is still delivered, in order, then the error.
    const received: string[] = [];
    let failure: any = null;
    while (!failure) {
      try {
        const step = await stream.next();
        if (step.done) throw new Error(`ended without an error after ${received.length} events`);
        received.push(step.value.id);
      } catch (error) {
        failure = error;
      }
    }
    expect(received).toHaveLength(SUBSCRIBER_BUFFER);
    expect(new Set(received).size).toBe(SUBSCRIBER_BUFFER);
    expect(failure.code).toBe('rate_limited');
    expect(app.server.live.size).toBe(before);
  });

  it(`keeps a subscriber that reads, even when one transaction hands it more than ${SUBSCRIBER_BUFFER} events at once`, async () => {
    const t = await setup();
    const stream = await app.server.live.subscribe(t.workspace.id, () => true);
    const burst = SUBSCRIBER_BUFFER + 150;
    const received: string[] = [];
    const reading = (async () => {
      while (received.length < burst) {
        const step = await stream.next();
        if (step.done) throw new Error(`ended after ${received.length} events`);
        received.push(step.value.id);
      }
    })();
    // One statement, one transaction: the hub reads all of them in one batch.
    await app.server.orm.em
      .fork()
      .getConnection()
      .execute(
        `insert into events (organization_id, workspace_id, actor, action, target_type, target_id, created_at)
         select ?, ?, 'admin', 'memory.note.updated', 'memory_note', g::text, now() from generate_series(1, ?) g`,
        [t.org.id, t.workspace.id, burst],
      );
    await reading;
    expect(new Set(received).size).toBe(burst);
    await stream.return!();
  });
});

describe('GraphQL review by the admin token', () => {
  it('approves and drafts over GraphQL, while REST still refuses the admin token', async () => {
    const t = await setup();
    const id = await propose(t.key, 'Reviewed by the admin');
    const ws = t.workspace.id;
    const list = await app.gql('query($w: String!) { proposals(workspace: $w, status: open) { items { id } } }', { w: ws });
    expect(list.errors).toBeUndefined();
    expect(list.data.proposals.items.map((p: any) => p.id)).toEqual([id]);
    const approved = await app.gql('mutation($w: String!, $id: Int!) { approveProposal(workspace: $w, id: $id) { status reviewedBy } }', {
      w: ws,
      id,
    });
    expect(approved.errors).toBeUndefined();
    expect(approved.data.approveProposal).toEqual({ status: 'approved', reviewedBy: null });
    expect((await app.api('GET', `${W}/articles/install`, { key: t.key })).body.markdown).toBe('Reviewed by the admin text');
    const audit = await app.gql('query($ws: ID!) { auditEvents(workspaceId: $ws, limit: 1) { action agentKeyId } }', { ws });
    expect(audit.data.auditEvents[0]).toEqual({ action: 'proposal.approved', agentKeyId: null });
    // Its events carry the workspace's organization, as a key's do: webhooks select events by it.
    const organizations = await app.server.orm.em
      .fork()
      .getConnection()
      .execute(
        `select distinct organization_id::text as id from events where workspace_id = ? and action in ('proposal.approved', 'article.updated')`,
        [ws],
      );
    expect(organizations).toEqual([{ id: t.org.id }]);
    // "-" names no workspace for the admin token; a key's own operations stay the key's.
    const dash = await app.gql('{ proposals(workspace: "-") { items { id } } }', {});
    expect(dash.errors?.[0].extensions.code).toBe('not_found');
    const memory = await app.gql('query($w: String!) { memoryNotes(workspace: $w) { items { path } } }', { w: ws });
    expect(memory.errors?.[0].extensions.code).toBe('permission_denied');
    for (const path of [`/api/v1/workspaces/${ws}/content-gaps`, `/api/v1/workspaces/${ws}/articles/install`]) {
      const res = await app.api('GET', path, { key: app.adminToken });
      expect(res.status, path).toBe(403);
    }
  });
});

describe.skipIf(!process.env.DATABASE_URL)('subscriptions across processes (PostgreSQL)', () => {
  let other: ServiceProcess;
  beforeAll(async () => {
    other = await spawnService({ DATABASE_URL: process.env.DATABASE_URL!, ADMIN_TOKEN: app.adminToken });
  }, 120_000);
  afterAll(async () => other?.stop());

  it('a write through REST on process A reaches a subscriber on process B within a second', async () => {
    const t = await setup();
    const s = new Subscriber(other.url, t.key, PROPOSALS, { w: '-' });
    // Process B is another process: its subscription is in place once a write reaches it.
    const deadline = Date.now() + 15_000;
    while (!s.messages.length) {
      expect(Date.now(), 'no write reached the subscriber on process B within 15 s').toBeLessThan(deadline);
      await propose(t.key, 'Warm-up');
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    await new Promise((resolve) => setTimeout(resolve, 500)); // the last warm-up's message, if still on its way
    const base = s.messages.length;
    const latencies: number[] = [];
    for (let i = 1; i <= 5; i++) {
      const start = performance.now();
      const id = await propose(t.key, `Change ${i}`);
      const message = await s.message(base + i - 1, 5000);
      latencies.push(performance.now() - start);
      expect(message.data.proposalChanged).toMatchObject({ action: 'proposal.created', proposal: { id } });
    }
    console.log(`subscriptions: REST write on A → subscriber on B: ${latencies.map((l) => l.toFixed(0)).join(', ')} ms`);
    expect(Math.max(...latencies)).toBeLessThan(1000);
    await s.close();
  });

  it("counts a key's subscriptions on every process together", async () => {
    const t = await setup();
    const open: Subscriber[] = [];
    for (let i = 0; i < SUBSCRIPTIONS_PER_HOLDER; i++) open.push(await subscribe(t.key, PROPOSALS, { w: '-' }));
    const onB = new Subscriber(other.url, t.key, PROPOSALS, { w: '-' });
    expect((await onB.message(0, 10_000)).errors?.[0].extensions?.code).toBe('rate_limited');
    await Promise.all([...open, onB].map((s) => s.close()));
  });
});
