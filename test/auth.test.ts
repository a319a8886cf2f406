import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { failingEmbedder } from './support/embedders.js';
import { until } from './support/wait.js';
import { createKey, createMember, createOrg, createWorkspace, tenant } from './support/factories.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.close());

const LIST = (ws: string) => `/api/v1/workspaces/${ws}/changelog`;

describe('401 unauthorized', () => {
  it('gives one identical body for missing, malformed, unknown, bad-checksum, expired and revoked keys', async () => {
    const t = await tenant(app);
    // A key cannot be created already expired: this one expires a moment after creation.
    const expired = await createKey(app, t.member.id, {
      permissions: ['changelog.read'],
      workspaceId: t.workspace.id,
      expiresAt: new Date(Date.now() + 1000).toISOString(),
    });
    const revoked = await createKey(app, t.member.id, { permissions: ['changelog.read'], workspaceId: t.workspace.id });
    expect((await app.api('GET', LIST('-'), { key: revoked.key })).status).toBe(200);
    const revoke = await app.gql('mutation($id: ID!) { revokeAgentKey(id: $id) { id revokedAt } }', { id: revoked.id });
    expect(revoke.data.revokeAgentKey.revokedAt).toBeTruthy();
    await until(async () => (await app.api('GET', LIST('-'), { key: expired.key })).status === 401, 'the key to expire');

    const flipped = t.key.slice(0, -1) + (t.key.endsWith('A') ? 'B' : 'A');
    const unknown = `svc_pat_${'x'.repeat(43)}`;
    const attempts: Record<string, string>[] = [
      {},
      { authorization: 'Basic abc' },
      { authorization: 'Bearer' },
      { authorization: `Bearer ${unknown}` },
      { authorization: `Bearer ${flipped}` },
      { authorization: `Bearer ${expired.key}` },
      { authorization: `Bearer ${revoked.key}` },
      { authorization: 'Bearer not-a-key-at-all' },
    ];
    const bodies = new Set<string>();
    for (const headers of attempts) {
      const res = await app.api('GET', LIST('-'), { headers });
      expect(res.status, JSON.stringify(headers)).toBe(401);
      expect(res.body.error.code).toBe('unauthorized');
      bodies.add(JSON.stringify(res.body));
    }
    expect(bodies.size).toBe(1);
  });

  it('comes before body validation', async () => {
    const res = await app.api('POST', LIST('-'), { body: { nonsense: true } });
    expect(res.status).toBe(401);
  });

  it('applies to agent operations over GraphQL too', async () => {
    const res = await app.gql('{ changelogEntries(workspace: "-") { items { id } } }', {}, 'svc_pat_bogus');
    expect(res.errors?.[0].extensions.code).toBe('unauthorized');
  });
});

describe('403 two_factor_required', () => {
  it('blocks every call of an admin/owner key without two-factor when the org requires it', async () => {
    const org = await createOrg(app, { requireTwoFactor: true });
    const ws = await createWorkspace(app, org.id);
    const admin = await createMember(app, org.id, { role: 'admin', twoFactorEnabled: false });
    const owner2fa = await createMember(app, org.id, { role: 'owner', twoFactorEnabled: true });
    const editor = await createMember(app, org.id, { role: 'editor', twoFactorEnabled: false });
    const perms = { permissions: ['changelog.read'], workspaceId: ws.id };
    const blocked = await createKey(app, admin.id, perms);
    const res = await app.api('GET', LIST('-'), { key: blocked.key });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('two_factor_required');
    expect((await app.api('GET', LIST('-'), { key: (await createKey(app, owner2fa.id, perms)).key })).status).toBe(200);
    expect((await app.api('GET', LIST('-'), { key: (await createKey(app, editor.id, perms)).key })).status).toBe(200);
    const gql = await app.gql('{ changelogEntries(workspace: "-") { items { id } } }', {}, blocked.key);
    expect(gql.errors?.[0].extensions.code).toBe('two_factor_required');
  });

  it('starts when the org turns the requirement on', async () => {
    const t = await tenant(app, { role: 'owner' });
    expect((await app.api('GET', LIST('-'), { key: t.key })).status).toBe(200);
    await app.gql('mutation($id: ID!) { updateOrganization(id: $id, input: { requireTwoFactor: true }) { id } }', { id: t.org.id });
    expect((await app.api('GET', LIST('-'), { key: t.key })).body.error.code).toBe('two_factor_required');
  });
});

describe('403 permission_denied', () => {
  it('names the missing permission', async () => {
    const t = await tenant(app, { permissions: ['changelog.update'] });
    const res = await app.api('GET', LIST('-'), { key: t.key });
    expect(res.status).toBe(403);
    expect(res.body.error).toMatchObject({ code: 'permission_denied', status: 403, details: { missing: ['changelog.read'] } });
  });

  it('caps key permissions at the member role (viewer cannot write)', async () => {
    const t = await tenant(app, { role: 'viewer', permissions: ['changelog.read', 'changelog.update'] });
    expect((await app.api('GET', LIST('-'), { key: t.key })).status).toBe(200);
    const res = await app.api('POST', LIST('-'), {
      key: t.key,
      body: { title: 't', markdown: 'm', status: 'draft', tags: [], published_at: null },
    });
    expect(res.status).toBe(403);
    expect(res.body.error.details.missing).toEqual(['changelog.update']);
  });

  it('editor ceiling excludes changelog.publish', async () => {
    const t = await tenant(app, { role: 'editor', permissions: ['changelog.read', 'changelog.update', 'changelog.publish'] });
    const body = { title: 't', markdown: 'm', status: 'published', tags: [], published_at: null };
    const res = await app.api('POST', LIST('-'), { key: t.key, body });
    expect(res.status).toBe(403);
    expect(res.body.error.details.missing).toEqual(['changelog.publish']);
    expect((await app.api('POST', LIST('-'), { key: t.key, body: { ...body, status: 'draft' } })).status).toBe(201);
  });

  it('refuses the admin token on workspace endpoints and agent keys on admin operations', async () => {
    const t = await tenant(app);
    const res = await app.api('GET', LIST(t.workspace.id), { key: app.adminToken });
    expect(res.status).toBe(403);
    const asAgent = await app.gql('mutation { createOrganization(input: { name: "x", plan: "free" }) { id } }', {}, t.key);
    expect(asAgent.errors?.[0].extensions.code).toBe('permission_denied');
    const anonymous = await app.gql('mutation { createOrganization(input: { name: "x", plan: "free" }) { id } }', {}, null);
    expect(anonymous.errors?.[0].extensions.code).toBe('unauthorized');
  });
});

describe('{workspace} scope', () => {
  it('resolves "-" to a bound key\'s workspace and accepts its id', async () => {
    const t = await tenant(app);
    expect((await app.api('GET', LIST('-'), { key: t.key })).status).toBe(200);
    expect((await app.api('GET', LIST(t.workspace.id), { key: t.key })).status).toBe(200);
    expect((await app.api('GET', LIST(t.workspace.id.toUpperCase()), { key: t.key })).status).toBe(200);
  });

  it('answers 400 when an org-wide key uses "-"', async () => {
    const t = await tenant(app, { orgWide: true });
    const res = await app.api('GET', LIST('-'), { key: t.key });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_request');
    expect(res.body.error.message).toMatch(/workspace id/);
    expect(res.body.error.details).toEqual([{ field: 'workspace', message: expect.any(String) }]);
    expect((await app.api('GET', LIST(t.workspace.id), { key: t.key })).status).toBe(200);
  });

  it("answers another org's, a sibling's and a nonexistent workspace with identical 404s", async () => {
    const a = await tenant(app, { orgWide: true });
    const b = await tenant(app);
    const sibling = await createWorkspace(app, a.org.id);
    const bound = await createKey(app, a.member.id, { permissions: ['changelog.read'], workspaceId: a.workspace.id });
    expect((await app.api('GET', LIST(sibling.id), { key: a.key })).status).toBe(200); // org-wide reaches siblings
    const targets = [
      [a.key, b.workspace.id],
      [a.key, '00000000-0000-4000-8000-000000000000'],
      [a.key, 'not-a-uuid'],
      [bound.key, sibling.id],
      [bound.key, b.workspace.id],
    ];
    const bodies = new Set<string>();
    for (const [key, ws] of targets) {
      const res = await app.api('GET', LIST(ws), { key });
      expect(res.status, ws).toBe(404);
      expect(res.body.error.code).toBe('not_found');
      bodies.add(JSON.stringify(res.body));
    }
    expect(bodies.size).toBe(1);
  });

  it('applies to GraphQL with the same codes', async () => {
    const a = await tenant(app);
    const b = await tenant(app);
    const res = await app.gql('query($ws: String!) { changelogEntries(workspace: $ws) { items { id } } }', { ws: b.workspace.id }, a.key);
    expect(res.errors?.[0].extensions.code).toBe('not_found');
  });
});

describe('admin operations', () => {
  it('validate their input and report unknown ids as not found', async () => {
    const badPlan = await app.gql('mutation { createOrganization(input: { name: "x", plan: "gold" }) { id } }');
    expect(badPlan.errors?.[0].extensions).toMatchObject({ code: 'invalid_request', details: [{ field: 'plan' }] });
    const org = await createOrg(app);
    const badRole = await app.gql(
      'mutation($o: ID!) { createMember(input: { organizationId: $o, email: "a@b.co", role: "king" }) { id } }',
      { o: org.id },
    );
    expect(badRole.errors?.[0].extensions.code).toBe('invalid_request');
    const badEmail = await app.gql(
      'mutation($o: ID!) { createMember(input: { organizationId: $o, email: "nope", role: "viewer" }) { id } }',
      { o: org.id },
    );
    expect(badEmail.errors?.[0].extensions).toMatchObject({ code: 'invalid_request', details: [{ field: 'email' }] });
    const dup = await app.gql(
      'mutation($o: ID!) { a: createMember(input: { organizationId: $o, email: "d@b.co", role: "viewer" }) { id } }',
      { o: org.id },
    );
    expect(dup.errors).toBeUndefined();
    const dup2 = await app.gql(
      'mutation($o: ID!) { createMember(input: { organizationId: $o, email: "D@b.co", role: "viewer" }) { id } }',
      { o: org.id },
    );
    expect(dup2.errors?.[0].extensions.code).toBe('conflict');
    const missing = await app.gql(
      'mutation { createWorkspace(input: { organizationId: "00000000-0000-4000-8000-000000000000", name: "x" }) { id } }',
    );
    expect(missing.errors?.[0].extensions.code).toBe('not_found');
    const member = await createMember(app, org.id);
    const badPerm = await app.gql(
      'mutation($m: ID!) { createAgentKey(input: { memberId: $m, name: "k", permissions: ["changelog.read", "root"] }) { key } }',
      { m: member.id },
    );
    expect(badPerm.errors?.[0].extensions).toMatchObject({ code: 'invalid_request', details: [{ field: 'permissions' }] });
    const other = await tenant(app);
    const foreignWs = await app.gql(
      'mutation($m: ID!, $w: ID!) { createAgentKey(input: { memberId: $m, name: "k", permissions: [], workspaceId: $w }) { key } }',
      { m: member.id, w: other.workspace.id },
    );
    expect(foreignWs.errors?.[0].extensions.code).toBe('not_found');
  });

  it('refuses a key that would be born expired, and revokes once: unknown ids are not found, a second revoke keeps the first time', async () => {
    const t = await tenant(app);
    for (const expiresAt of [new Date(Date.now() - 60_000).toISOString(), new Date().toISOString()]) {
      const res = await app.gql(
        'mutation($m: ID!, $w: ID!, $e: DateTime) { createAgentKey(input: { memberId: $m, name: "k", permissions: ["changelog.read"], workspaceId: ' +
          '$w, expiresAt: $e }) { key } }',
        { m: t.member.id, w: t.workspace.id, e: expiresAt },
      );
      expect(res.errors?.[0].extensions, expiresAt).toMatchObject({ code: 'invalid_request', details: [{ field: 'expiresAt' }] });
    }
    const revoke = (id: string) => app.gql('mutation($id: ID!) { revokeAgentKey(id: $id) { id revokedAt } }', { id });
    for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid'])
      expect((await revoke(id)).errors?.[0].extensions.code, id).toBe('not_found');
    const first = (await revoke(t.keyId)).data.revokeAgentKey.revokedAt;
    expect(first).toBeTruthy();
    const second = await revoke(t.keyId);
    expect(second.errors).toBeUndefined();
    expect(second.data.revokeAgentKey.revokedAt).toBe(first);
    expect((await app.api('GET', LIST('-'), { key: t.key })).status).toBe(401);
  });

  it('shows the key once, in the svc_pat_ format, and records an audit event', async () => {
    const t = await tenant(app);
    expect(t.key).toMatch(/^svc_pat_[A-Za-z0-9_-]{49}$/);
    const events = await app.gql('query($w: ID!) { auditEvents(workspaceId: $w) { action targetType targetId agentKeyId } }', {
      w: t.workspace.id,
    });
    expect(events.data.auditEvents.map((e: { action: string }) => e.action)).toEqual(['agent_key.created', 'workspace.created']);
    const leak = await app.gql('query($w: ID!) { auditEvents(workspaceId: $w) { id } }', { w: t.workspace.id }, t.key);
    expect(leak.errors?.[0].extensions.code).toBe('permission_denied');
  });

  it('hides unexpected errors behind a bland internal code on every door', async () => {
    // A resolver that fails for real: semantic search on an embedder that throws a plain Error.
    const secret = 'embedder-secret-7f3a';
    const broken = await startTestApp({ embedder: failingEmbedder(secret) });
    // The embedder's failure is logged once per door (REST, GraphQL, MCP): the internal errors this test is about.
    broken.expectInternalErrors(3);
    try {
      const t = await tenant(broken);
      const leaks = (text: string) => {
        expect(text).not.toContain(secret);
        expect(text).not.toMatch(/\/srv\/|\bat .*\.(ts|js):\d+/);
      };
      const rest = await broken.api('GET', `${LIST('-').replace('/changelog', '/search')}?q=keys&semantic=true`, { key: t.key });
      expect(rest.status).toBe(500);
      expect(rest.body.error).toEqual({ code: 'internal', status: 500, message: expect.any(String), details: null });
      leaks(rest.text);
      const gql = await broken.gql('{ search(workspace: "-", q: "keys", semantic: true) { ranking } }', {}, t.key);
      expect(gql.data).toBeNull();
      expect(gql.errors).toHaveLength(1);
      expect(gql.errors![0].extensions.code).toBe('internal');
      expect(gql.errors![0].message).toBe(rest.body.error.message);
      leaks(JSON.stringify(gql));
      const mcp = await fetch(`${broken.url}/mcp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'search', arguments: { q: 'keys', semantic: true } },
        }),
      });
      const mcpText = await mcp.text();
      expect(JSON.parse(mcpText).result).toMatchObject({ isError: true, structuredContent: { error: { code: 'internal', status: 500 } } });
      leaks(mcpText);
      // The same search without the failing step answers: the 500 above is the resolver's failure.
      expect((await broken.api('GET', `${LIST('-').replace('/changelog', '/search')}?q=keys`, { key: t.key })).status).toBe(200);
    } finally {
      await broken.close();
    }
  });
});
