// The WebSocket door (/graphql, graphql-transport-ws) against hostile clients: sockets capped per
// key, per organization and, before connection_init, per client address; connection_init charged
// to the key's rate limit; sockets closed once their credential is revoked, expires or changes; the
// operation that runs (operationName) charged on every GraphQL door; the handshake rules and the
// HTTP door's query limits. On PostgreSQL, the caps and the closing hold across processes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { createKey, createMember, tenant } from './support/factories.js';
import { spawnService, type ServiceProcess } from './support/processes.js';
import { closeAll, connectSocket, openSocket, operate, type Connected } from './support/sockets.js';
import { until } from './support/wait.js';

const PER_KEY = 3;
const PER_ORG = 5;
const PER_ADDRESS = 4;
const INIT_MS = 2000;
const NEW_PER_S = 50;
/** Another client host on loopback: the hostile sockets' address, apart from the console's 127.0.0.1. */
const HOSTILE_ADDRESS = '127.0.0.2';

let app: TestApp;
beforeAll(async () => {
  // Open sockets are judged again every 10 minutes only: a close within seconds comes from the authentication change itself.
  app = await startTestApp({
    sockets: {
      perKey: PER_KEY,
      perOrganization: PER_ORG,
      unauthenticatedPerAddress: PER_ADDRESS,
      newPerAddressPerSecond: NEW_PER_S,
      initTimeoutMs: INIT_MS,
      recheckMs: 600_000,
    },
  });
}, 120_000);
afterAll(async () => app?.close());

const admin = async (query: string, variables: Record<string, unknown>) => {
  const res = await app.gql(query, variables);
  expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
  return res.data;
};
const revoke = (id: string) => admin('mutation($id: ID!) { revokeAgentKey(id: $id) { id } }', { id });
const PROPOSALS = 'subscription { proposalChanged(workspace: "-") { action } }';

/** Opens `n` sockets of `token` at once (`spread`: each from its own loopback address, like a distributed client). */
const connectMany = (n: number, token: string | null, base = app.url, spread = false) =>
  Promise.all(Array.from({ length: n }, (_, i) => connectSocket(base, token, spread ? { localAddress: `127.0.1.${1 + (i % 250)}` } : {})));

describe('sockets per key and per organization', () => {
  it(`admits ${PER_KEY} sockets of a key, closes the rest with 1013, and the console still connects`, async () => {
    const t = await tenant(app, { permissions: ['changelog.read'], role: 'viewer' });
    // From 250 addresses: no address's budget of unauthenticated sockets is what refuses them.
    const attempts = await connectMany(1000, t.key, app.url, true);
    const held = attempts.filter((s) => s.acked && !s.close);
    expect(held).toHaveLength(PER_KEY);
    const refused = attempts.filter((s) => !s.acked);
    expect(refused).toHaveLength(1000 - PER_KEY);
    for (const s of refused) expect(await s.closed).toMatchObject({ code: 1013, reason: expect.stringMatching(/key \(limit 3\)/) });
    const console = await connectSocket(app.url, app.adminToken);
    expect(console.acked).toBe(true);
    expect(await operate(console, 'q', { query: '{ __typename }' })).toMatchObject({
      type: 'next',
      payload: { data: { __typename: 'Query' } },
    });
    // A socket that closes frees its slot for the key's next one.
    await closeAll([held.pop()!]);
    const again = await until(async () => {
      const s = await connectSocket(app.url, t.key);
      return s.acked ? s : void (await s.closed);
    }, 'a freed slot');
    await closeAll([...held, again, console]);
  });

  it(`admits ${PER_ORG} sockets of an organization's keys together`, async () => {
    const t = await tenant(app);
    const other = await createKey(app, t.member.id, { permissions: ['changelog.read'], workspaceId: t.workspace.id });
    const first = await connectMany(PER_KEY, t.key);
    expect(first.every((s) => s.acked)).toBe(true);
    const second = await connectMany(PER_KEY, other.key);
    expect(second.filter((s) => s.acked)).toHaveLength(PER_ORG - PER_KEY);
    const refused = second.find((s) => !s.acked)!;
    expect(await refused.closed).toMatchObject({ code: 1013, reason: expect.stringMatching(/organization \(limit 5\)/) });
    // Another organization's keys have their own slots.
    const elsewhere = await tenant(app);
    const theirs = await connectSocket(app.url, elsewhere.key);
    expect(theirs.acked).toBe(true);
    await closeAll([...first, ...second, theirs]);
  });
});

describe('sockets that have not authenticated', () => {
  it(`from one address: ${NEW_PER_S} new sockets a second, at most ${PER_ADDRESS} waiting for connection_init; the console connects`, async () => {
    await until(() => app.server.socketStats().unauthenticated === 0, 'no socket of an earlier test left waiting');
    let most = 0;
    const sample = () => (most = Math.max(most, app.server.socketStats().unauthenticated));
    const hostile = Array.from({ length: 1000 }, () => {
      const s = openSocket(app.url, { localAddress: HOSTILE_ADDRESS });
      s.ws.on('open', sample);
      return s;
    });
    await Promise.all(hostile.map((s) => s.opened));
    sample();
    // Past the address's rate the upgrade is refused (HTTP 429): no socket, no close handshake.
    const upgraded = hostile.filter((s) => s.refusedWith === null);
    expect(hostile.filter((s) => s.refusedWith === 429)).toHaveLength(1000 - upgraded.length);
    expect(upgraded.length).toBeGreaterThanOrEqual(2 * NEW_PER_S);
    expect(upgraded.length).toBeLessThan(1000);
    await until(() => upgraded.filter((s) => s.close).length >= upgraded.length - PER_ADDRESS, 'the sockets past the budget closed');
    // The console, from its own address, is admitted while the hostile address's budget is full.
    const console = await connectSocket(app.url, app.adminToken);
    expect(console.acked).toBe(true);
    expect(most).toBeLessThanOrEqual(PER_ADDRESS);
    const closes = await Promise.all(upgraded.map((s) => s.closed));
    const codes = closes.reduce<Record<number, number>>((n, c) => ({ ...n, [c.code]: (n[c.code] ?? 0) + 1 }), {});
    // All but the last few were made to give way; those few waited for the init timeout.
    expect(codes).toEqual({ 1013: upgraded.length - PER_ADDRESS, 4408: PER_ADDRESS });
    expect(console.close).toBeNull();
    await closeAll([console]);
    await until(() => app.server.socketStats().unauthenticated === 0, 'no socket left waiting');
  }, 60_000);

  it('lets a client that sends connection_init at once through, whatever sockets of its address wait idle', async () => {
    const t = await tenant(app);
    const idle = Array.from({ length: PER_ADDRESS }, () => openSocket(app.url));
    await Promise.all(idle.map((s) => s.opened));
    const client = await connectSocket(app.url, t.key);
    expect(client.acked).toBe(true);
    expect((await idle[0].closed).code).toBe(1013); // the oldest idle one made way
    await closeAll([...idle, client]);
  });
});

describe('sockets closed when their credential changes', () => {
  it('closes every socket of a key within seconds of its revocation (4403), subscribed or idle', async () => {
    const t = await tenant(app);
    const sockets = await connectMany(PER_KEY, t.key);
    expect(sockets.every((s) => s.acked)).toBe(true);
    sockets[0].send({ type: 'subscribe', id: 's', payload: { query: PROPOSALS } });
    await until(() => app.server.live.size > 0, 'the subscription');
    const other = await tenant(app);
    const unrelated = await connectSocket(app.url, other.key);
    await revoke(t.keyId);
    for (const s of sockets) expect(await s.closed).toEqual({ code: 4403, reason: 'Forbidden: the credential was revoked or has expired' });
    expect(unrelated.close).toBeNull();
    // The revoked key's slots are free and its next socket is refused at connection_init.
    const after = await connectSocket(app.url, t.key);
    expect(after.acked).toBe(false);
    expect((await after.closed).code).toBe(4403);
    await closeAll([unrelated]);
  });

  it("closes a key's sockets once its member is demoted, and refuses a demoted owner's key once the organization requires two-factor", async () => {
    const t = await tenant(app);
    const socket = await connectSocket(app.url, t.key);
    expect(socket.acked).toBe(true);
    await admin('mutation($id: ID!) { updateMember(id: $id, input: { role: "viewer" }) { role } }', { id: t.member.id });
    expect(await socket.closed).toEqual({ code: 4403, reason: 'Forbidden: the credential changed; connect again' });
    // Judged anew, the viewer's key connects again.
    const again = await connectSocket(app.url, t.key);
    expect(again.acked).toBe(true);
    const owner = await tenant(app); // an owner without two-factor
    const owners = await connectSocket(app.url, owner.key);
    expect(owners.acked).toBe(true);
    await admin('mutation($id: ID!) { updateOrganization(id: $id, input: { requireTwoFactor: true }) { id } }', { id: owner.org.id });
    expect(await owners.closed).toEqual({ code: 4403, reason: 'Forbidden: two-factor authentication required' });
    const refused = await connectSocket(app.url, owner.key);
    expect(refused.acked).toBe(false);
    expect(await refused.closed).toEqual({ code: 4403, reason: 'Forbidden: two-factor authentication required' });
    await closeAll([again]);
  });

  it('closes a socket once its key expires', async () => {
    const ticking = await startTestApp({ sockets: { recheckMs: 200 } });
    try {
      const t = await tenant(ticking);
      const member = await createMember(ticking, t.org.id, { role: 'editor' });
      const expiring = await createKey(ticking, member.id, {
        permissions: ['changelog.read'],
        workspaceId: t.workspace.id,
        expiresAt: new Date(Date.now() + 3000).toISOString(),
      });
      const socket = await connectSocket(ticking.url, expiring.key);
      expect(socket.acked).toBe(true);
      expect(await socket.closed).toEqual({ code: 4403, reason: 'Forbidden: the credential was revoked or has expired' });
    } finally {
      await ticking.close();
    }
  });
});

describe('the rate limit over WebSocket', () => {
  let limited: TestApp;
  beforeAll(async () => {
    limited = await startTestApp({ rateLimit: { max: 6, windowSeconds: 3600 } });
  }, 120_000);
  afterAll(async () => limited?.close());

  it('charges connection_init like a request: past the limit the socket is closed with 4429', async () => {
    const t = await tenant(limited);
    const sockets: Connected[] = [];
    for (let i = 0; i < 6; i++) sockets.push(await connectSocket(limited.url, t.key));
    expect(sockets.every((s) => s.acked)).toBe(true);
    const over = await connectSocket(limited.url, t.key);
    expect(over.acked).toBe(false);
    expect(await over.closed).toMatchObject({ code: 4429, reason: expect.stringMatching(/^Rate limit exceeded; retry in \d+ s$/) });
    expect((await limited.api('GET', '/api/v1/workspaces/-/sections', { key: t.key })).status).toBe(429);
    await closeAll(sockets);
  });

  // A cheap first operation must not carry the cost of the one operationName names.
  const FOUR = `query A { __typename } query B { ${Array.from({ length: 4 }, (_, i) => `a${i}: sections(workspace: "-") { key }`).join(' ')} }`;

  it('charges the operation that operationName names, over WebSocket', async () => {
    const t = await tenant(limited);
    const socket = await connectSocket(limited.url, t.key); // 1
    const first = await operate(socket, '1', { query: FOUR, operationName: 'B' }); // 5
    expect(first).toMatchObject({ type: 'next', payload: { data: { a0: [] } } });
    const second = await operate(socket, '2', { query: FOUR, operationName: 'B' }); // past 6
    expect(second?.payload[0].extensions).toMatchObject({ code: 'rate_limited', details: { limit: 6 } });
    await closeAll([socket]);
  });

  it('charges the operation that operationName names, over HTTP', async () => {
    const t = await tenant(limited);
    const post = () =>
      fetch(`${limited.url}/graphql`, {
        method: 'POST',
        headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ query: FOUR, operationName: 'B' }),
      });
    expect((await post()).status).toBe(200); // 4
    const second = await post(); // past 6
    expect(second.status).toBe(429);
    expect(((await second.json()) as any).errors[0].extensions.code).toBe('rate_limited');
  });
});

describe('the handshake and the query limits', () => {
  it('closes a socket that sends no connection_init within the wait with 4408', async () => {
    const s = openSocket(app.url);
    expect(await s.closed).toEqual({ code: 4408, reason: 'Connection initialisation timeout' });
  });

  it('closes with 1009 past 64 KiB, 4400 on an invalid message, 4429 on a second init, 4401 on subscribe before ack, 4406 without the subprotocol', async () => {
    const t = await tenant(app);
    const big = await connectSocket(app.url, t.key);
    big.send({ type: 'subscribe', id: 'x', payload: { query: `{ __typename ${' '.repeat(70_000)}}` } });
    expect((await big.closed).code).toBe(1009);
    const garbage = await connectSocket(app.url, t.key);
    garbage.send('{"type": "connection_init"');
    expect(await garbage.closed).toEqual({ code: 4400, reason: 'Invalid message received' });
    const twice = await connectSocket(app.url, t.key);
    twice.send({ type: 'connection_init', payload: { authorization: `Bearer ${t.key}` } });
    expect(await twice.closed).toEqual({ code: 4429, reason: 'Too many initialisation requests' });
    const early = openSocket(app.url);
    await early.opened;
    early.send({ type: 'subscribe', id: 'e', payload: { query: '{ __typename }' } });
    expect(await early.closed).toEqual({ code: 4401, reason: 'Unauthorized' });
    const none = openSocket(app.url, { protocol: null });
    expect(await none.closed).toEqual({ code: 4406, reason: 'Subprotocol not acceptable' });
  });

  it('refuses deep and alias-heavy operations over WebSocket, as over HTTP', async () => {
    const t = await tenant(app);
    const socket = await connectSocket(app.url, t.key);
    const deep = `{ __schema { types { fields { type { ${'ofType { '.repeat(16)}name${' }'.repeat(16)} } } } } }`;
    const d = await operate(socket, 'deep', { query: deep });
    expect(d?.type).toBe('error');
    expect(d?.payload[0]).toMatchObject({ message: expect.stringMatching(/depth/i), extensions: { code: 'invalid_request' } });
    const aliases = `{ ${Array.from({ length: 40 }, (_, i) => `a${i}: sections(workspace: "-") { key }`).join(' ')} }`;
    const a = await operate(socket, 'aliases', { query: aliases });
    expect(a?.payload[0]).toMatchObject({ message: expect.stringMatching(/alias/i), extensions: { code: 'invalid_request' } });
    expect(socket.close).toBeNull();
    await closeAll([socket]);
  });
});

describe.skipIf(!process.env.DATABASE_URL)('sockets across processes (PostgreSQL)', () => {
  let other: ServiceProcess;
  beforeAll(async () => {
    other = await spawnService({
      DATABASE_URL: process.env.DATABASE_URL!,
      ADMIN_TOKEN: app.adminToken,
      WS_SOCKETS_PER_KEY: String(PER_KEY),
      WS_SOCKETS_PER_ORG: String(PER_ORG),
      WS_RECHECK_MS: '600000',
    });
  }, 120_000);
  afterAll(async () => other?.stop());

  it("counts a key's sockets on every process together", async () => {
    const t = await tenant(app);
    const here = await connectMany(PER_KEY - 1, t.key);
    expect(here.every((s) => s.acked)).toBe(true);
    const there = await connectMany(2, t.key, other.url);
    expect(there.filter((s) => s.acked)).toHaveLength(1);
    expect((await there.find((s) => !s.acked)!.closed).code).toBe(1013);
    await closeAll([...here, ...there]);
  });

  it('closes a key socket on process B within seconds of its revocation through process A', async () => {
    const t = await tenant(app);
    const socket = await connectSocket(other.url, t.key);
    expect(socket.acked).toBe(true);
    await revoke(t.keyId);
    expect(await socket.closed).toEqual({ code: 4403, reason: 'Forbidden: the credential was revoked or has expired' });
  });
});
