// People sign in as members: sign-in links (single use, 15 minutes, stored as a digest), session
// cookies (HttpOnly, SameSite=Lax), CSRF on state-changing requests, the role table over GraphQL,
// sessions listed and revoked, the two-factor rule for people, and the audit trail under the member.
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../src/db/sql.js';
import { freshEm } from '../src/db/orm.js';
import { startTestApp, type TestApp } from './support/app.js';
import { createMember, createOrg, createWorkspace } from './support/factories.js';
import { startAppWithIdentityProvider } from './support/oidcProvider.js';
import { rawRequest } from './support/raw.js';
import { mintSignInLink, personGql, redeemSignInLink, signIn, type SignedInPerson } from './support/signIn.js';
import { testLogger } from './support/internalErrors.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.close());

async function emailOf(memberId: string): Promise<string> {
  const rows = await sql<{ email: string }>(freshEm(app.server.orm), 'select email from members where id = ?::uuid', [memberId]);
  return rows[0].email;
}

async function person(role: string, options: { requireTwoFactor?: boolean } = {}) {
  const org = await createOrg(app, { requireTwoFactor: options.requireTwoFactor });
  const workspace = await createWorkspace(app, org.id);
  const member = await createMember(app, org.id, { role });
  const email = await emailOf(member.id);
  return { org, workspace, member, email };
}

const VIEWER = 'query { viewer { memberId email role organizationId sessionId mfa allowed } }';

describe('sign-in links', () => {
  it('redeem once into an HttpOnly, SameSite=Lax session cookie; the token is stored only as a digest', async () => {
    const p = await person('editor');
    const { url, token } = await mintSignInLink(app.url, app.adminToken, p.email);
    expect(url).toMatch(/\/console\/sign-in#link=wks_link_[\w-]+$/);
    const stored = await sql<{ token_digest: string }>(
      freshEm(app.server.orm),
      'select token_digest from sign_in_links where member_id = ?::uuid',
      [p.member.id],
    );
    expect(stored).toHaveLength(1);
    expect(stored[0].token_digest).not.toContain(token);
    expect(stored[0].token_digest).toMatch(/^[0-9a-f]{64}$/);

    const res = await fetch(`${app.url}/console/sign-in/link`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token, returnTo: '/console#/proposals' }),
    });
    expect(res.status).toBe(200);
    const cookie = res.headers.getSetCookie()[0];
    expect(cookie).toMatch(/^wks_session=wks_sess_[\w-]+; Path=\/; HttpOnly; SameSite=Lax; Max-Age=43200$/);
    const body = await res.json();
    expect(body.returnTo).toBe('/console#/proposals');
    const me = await personGql(app.url, { cookie: cookie.split(';')[0], csrf: body.csrf }, VIEWER);
    expect(me.data.viewer).toMatchObject({ memberId: p.member.id, email: p.email, role: 'editor', organizationId: p.org.id, mfa: false });
    expect(me.data.viewer.allowed).toContain('article.update');
    expect(me.data.viewer.allowed).not.toContain('agent_keys.manage');

    // Used once: the second redemption is refused and sets no cookie.
    const again = await fetch(`${app.url}/console/sign-in/link`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token }),
    });
    expect(again.status).toBe(400);
    expect(again.headers.getSetCookie()).toEqual([]);
    expect((await again.json()).error.details[0].field).toBe('token');
  });

  it('expires after 15 minutes', async () => {
    const p = await person('viewer');
    const { token } = await mintSignInLink(app.url, app.adminToken, p.email);
    const [row] = await sql<{ minutes: number }>(
      freshEm(app.server.orm),
      `select extract(epoch from (expires_at - created_at)) / 60 as minutes from sign_in_links where member_id = ?::uuid`,
      [p.member.id],
    );
    expect(Math.round(Number(row.minutes))).toBe(15);
    await sql(freshEm(app.server.orm), `update sign_in_links set expires_at = now() - interval '1 second' where member_id = ?::uuid`, [
      p.member.id,
    ]);
    await expect(redeemSignInLink(app.url, token)).rejects.toMatchObject({ status: 400 });
  });

  it('ignores a return_to that leaves the origin (no open redirect)', async () => {
    const p = await person('viewer');
    for (const bad of ['https://evil.example/', '//evil.example/x', '/\\evil.example', 'javascript:alert(1)', '/console\r\nX: y']) {
      const { token } = await mintSignInLink(app.url, app.adminToken, p.email);
      const signedIn = await redeemSignInLink(app.url, token, bad);
      expect(signedIn.returnTo, bad).toBe('/console');
    }
  });

  it('the sign-in page keeps a same-origin return_to and drops any other', async () => {
    const page = async (query: string) =>
      (await (await fetch(`${app.url}/console/sign-in${query}`)).text()).match(/data-return-to="([^"]*)"/)?.[1];
    expect(await page('?return_to=%2Fconsole%23%2Fproposals')).toBe('/console#/proposals');
    expect(await page('?return_to=%2F%2Fevil.example%2F')).toBe('/console');
    expect(await page('?return_to=https%3A%2F%2Fevil.example%2F')).toBe('/console');
    expect(await page('')).toBe('/console');
    const res = await fetch(`${app.url}/console/sign-in`);
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(res.headers.get('cache-control')).toBe('no-store');
  });

  it('the sign-in page shows only the fixed sentence of a known notice code, never text from its URL', async () => {
    const page = (query: string) => fetch(`${app.url}/console/sign-in?${query}`).then((res) => res.text());
    const phishing = 'Your account is locked: call +1 555 0100 and read out your sign-in link';
    const shown = await page(`notice=${encodeURIComponent(phishing)}`);
    expect(shown).not.toContain('account is locked');
    expect(shown).toContain('<div id="notice" role="status"></div>');
    for (const code of ['__proto__', 'constructor', 'toString', 'hasOwnProperty'])
      expect(await page(`notice=${code}`), code).toContain('<div id="notice" role="status"></div>');
    expect(await page('notice=session_ended')).toContain(
      '<div class="message message-error">The session ended (signed out elsewhere, ended by an owner, or expired). Sign in again.</div>',
    );
    expect(await page('notice=signed_out')).toContain('>Signed out.</div>');
  });

  it('are refused from another origin and without JSON (login CSRF)', async () => {
    const p = await person('viewer');
    const { token } = await mintSignInLink(app.url, app.adminToken, p.email);
    // fetch will not send a foreign Origin: node:http does.
    const foreign = await rawRequest(app.url, 'POST', '/console/sign-in/link', {
      headers: { 'content-type': 'application/json', origin: 'https://evil.example' },
      body: JSON.stringify({ token }),
    });
    expect(foreign.status).toBe(403);
    expect(foreign.headers['set-cookie']).toBeUndefined();
    const form = await fetch(`${app.url}/console/sign-in/link`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `token=${token}`,
    });
    expect(form.status).toBe(400);
    // Neither attempt spent the link.
    await expect(redeemSignInLink(app.url, token)).resolves.toMatchObject({ csrf: expect.any(String) });
  });

  it('are minted by an owner for their own organization only; an editor is refused', async () => {
    const owner = await person('owner');
    const colleague = await createMember(app, owner.org.id, { role: 'viewer' });
    const stranger = await person('viewer');
    const ownerSession = await signIn(app.url, app.adminToken, owner.email);
    const minted = await mintSignInLink(app.url, app.adminToken, await emailOf(colleague.id), { mintedBy: ownerSession });
    await expect(redeemSignInLink(app.url, minted.token)).resolves.toBeTruthy();
    const elsewhere = await personGql(app.url, ownerSession, 'mutation($e: String!) { createSignInLink(email: $e) { url } }', {
      e: stranger.email,
    });
    expect(elsewhere.errors?.[0].extensions.code).toBe('not_found');
    const editor = await createMember(app, owner.org.id, { role: 'editor' });
    const editorSession = await signIn(app.url, app.adminToken, await emailOf(editor.id));
    const refused = await personGql(app.url, editorSession, 'mutation($e: String!) { createSignInLink(email: $e) { url } }', {
      e: owner.email,
    });
    expect(refused.errors?.[0].extensions).toMatchObject({ code: 'permission_denied', details: { missing: ['members.sign_in_links'] } });
  });
});

describe('a sign-in link opened in a browser already signed in (login swap)', () => {
  const redeem = (token: string, cookie: string | null, extra: Record<string, unknown> = {}) =>
    fetch(`${app.url}/console/sign-in/link`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: app.url, ...(cookie ? { cookie } : {}) },
      body: JSON.stringify({ token, returnTo: '/console', ...extra }),
    });
  const whoIs = async (cookie: string) =>
    ((await (await fetch(`${app.url}/console/session`, { headers: { cookie } })).json()) as any).member?.email ?? null;

  it("someone else's link does not replace the session unless the person confirms the switch; the link stays unused until then", async () => {
    const victim = await person('owner');
    const attacker = await person('editor');
    const signedIn = await signIn(app.url, app.adminToken, victim.email);
    const { token } = await mintSignInLink(app.url, app.adminToken, attacker.email);
    // What an attacker's page achieves by sending the signed-in person to /console/sign-in#link=<its own token>.
    const asked = await redeem(token, signedIn.cookie);
    expect(asked.status).toBe(409);
    expect(asked.headers.getSetCookie()).toEqual([]);
    const body = (await asked.json()) as any;
    expect(body.error).toMatchObject({ code: 'conflict', details: { signedInAs: victim.email, linkFor: attacker.email } });
    expect(await whoIs(signedIn.cookie)).toBe(victim.email);
    // The page that asks cannot be framed (no clickjacking of its "Sign in as …" button).
    expect((await fetch(`${app.url}/console/sign-in`)).headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect((await redeem(token, signedIn.cookie, { switch: 'yes' })).status).toBe(400);
    // The person chose to switch: signed in as the link's member, and the session they left is ended.
    const switched = await redeem(token, signedIn.cookie, { switch: true });
    expect(switched.status).toBe(200);
    const cookie = switched.headers.getSetCookie()[0].split(';')[0];
    expect(await whoIs(cookie)).toBe(attacker.email);
    expect(await whoIs(signedIn.cookie)).toBeNull();
  });

  it("the person's own link, or any link in a browser without a session, signs in without a question", async () => {
    const p = await person('editor');
    const signedIn = await signIn(app.url, app.adminToken, p.email);
    const own = await redeem((await mintSignInLink(app.url, app.adminToken, p.email)).token, signedIn.cookie);
    expect(own.status).toBe(200);
    const fresh = await redeem((await mintSignInLink(app.url, app.adminToken, p.email)).token, null);
    expect(fresh.status).toBe(200);
  });
});

describe('sessions', () => {
  it('need the CSRF token on every state-changing request', async () => {
    const p = await person('editor');
    const s = await signIn(app.url, app.adminToken, p.email);
    for (const csrf of [null, 'wrong', `${s.csrf}x`]) {
      const res = await personGql(app.url, s, VIEWER, {}, { csrf });
      expect(res.status, String(csrf)).toBe(403);
      expect(res.errors?.[0].extensions.code).toBe('permission_denied');
    }
    expect((await personGql(app.url, s, VIEWER)).data.viewer.memberId).toBe(p.member.id);
    // Another session's token does not fit this one.
    const other = await signIn(app.url, app.adminToken, p.email);
    expect((await personGql(app.url, s, VIEWER, {}, { csrf: other.csrf })).status).toBe(403);
  });

  it('are not credentials for REST or MCP', async () => {
    const p = await person('owner');
    const s = await signIn(app.url, app.adminToken, p.email);
    const rest = await fetch(`${app.url}/api/v1/workspaces/${p.workspace.id}/articles`, {
      headers: { cookie: s.cookie, 'x-csrf-token': s.csrf },
    });
    expect(rest.status).toBe(401);
  });

  it('end at sign-out, idle expiry and absolute expiry', async () => {
    const p = await person('viewer');
    const a = await signIn(app.url, app.adminToken, p.email);
    const noCsrf = await fetch(`${app.url}/console/sign-out`, { method: 'POST', headers: { cookie: a.cookie } });
    expect(noCsrf.status).toBe(403);
    const out = await fetch(`${app.url}/console/sign-out`, { method: 'POST', headers: { cookie: a.cookie, 'x-csrf-token': a.csrf } });
    expect(out.status).toBe(204);
    expect(out.headers.getSetCookie()[0]).toMatch(/^wks_session=; .*Max-Age=0/);
    expect((await personGql(app.url, a, VIEWER)).errors?.[0].extensions.code).toBe('unauthorized');

    const db = freshEm(app.server.orm);
    const idle = await signIn(app.url, app.adminToken, p.email);
    await sql(
      db,
      `update member_sessions set last_seen_at = now() - interval '61 minutes' where member_id = ?::uuid and revoked_at is null`,
      [p.member.id],
    );
    expect((await personGql(app.url, idle, VIEWER)).errors?.[0].extensions.code).toBe('unauthorized');
    const old = await signIn(app.url, app.adminToken, p.email);
    await sql(db, `update member_sessions set expires_at = now() - interval '1 second' where member_id = ?::uuid`, [p.member.id]);
    expect((await personGql(app.url, old, VIEWER)).errors?.[0].extensions.code).toBe('unauthorized');
  });

  it("are listed and revocable: one's own by anyone, the organization's by an owner, never another organization's", async () => {
    const owner = await person('owner');
    const viewer = await createMember(app, owner.org.id, { role: 'viewer' });
    const viewerEmail = await emailOf(viewer.id);
    const o = await signIn(app.url, app.adminToken, owner.email);
    const v1 = await signIn(app.url, app.adminToken, viewerEmail);
    const v2 = await signIn(app.url, app.adminToken, viewerEmail);
    const LIST = 'query($m: ID, $o: ID) { sessions(memberId: $m, organizationId: $o) { id memberId current method } }';
    const mine = await personGql(app.url, v1, LIST);
    expect(mine.data.sessions).toHaveLength(2);
    expect(mine.data.sessions.filter((s: { current: boolean }) => s.current)).toHaveLength(1);
    const peek = await personGql(app.url, v1, LIST, { o: owner.org.id });
    expect(peek.errors?.[0].extensions.code).toBe('permission_denied');
    const all = await personGql(app.url, o, LIST, { o: owner.org.id });
    expect(all.data.sessions.map((s: { memberId: string }) => s.memberId).sort()).toEqual([owner.member.id, viewer.id, viewer.id].sort());

    // The viewer ends their other session; the owner ends the viewer's current one.
    const other = mine.data.sessions.find((s: { current: boolean }) => !s.current).id;
    const REVOKE = 'mutation($id: ID!) { revokeSession(id: $id) { id revokedAt } }';
    expect((await personGql(app.url, v1, REVOKE, { id: other })).data.revokeSession.revokedAt).toBeTruthy();
    expect((await personGql(app.url, v2, VIEWER)).errors?.[0].extensions.code).toBe('unauthorized');
    const current = mine.data.sessions.find((s: { current: boolean }) => s.current).id;
    expect((await personGql(app.url, o, REVOKE, { id: current })).data.revokeSession.revokedAt).toBeTruthy();
    expect((await personGql(app.url, v1, VIEWER)).errors?.[0].extensions.code).toBe('unauthorized');

    // A stranger's session is not found, for an owner of another organization.
    const stranger = await person('owner');
    const s = await signIn(app.url, app.adminToken, stranger.email);
    const theirs = (await personGql(app.url, s, LIST)).data.sessions[0].id;
    expect((await personGql(app.url, o, REVOKE, { id: theirs })).errors?.[0].extensions.code).toBe('not_found');
    expect((await personGql(app.url, s, VIEWER)).data.viewer.memberId).toBe(stranger.member.id);
  });
});

describe('roles and the audit trail', () => {
  it('a member sees their organization only, acts by their role, and every action is recorded under the member', async () => {
    const a = await person('editor');
    const b = await person('owner');
    const s = await signIn(app.url, app.adminToken, a.email);
    const ARTICLES = 'query($w: String!) { sections(workspace: $w) { key } }';
    expect((await personGql(app.url, s, ARTICLES, { w: a.workspace.id })).errors).toBeUndefined();
    expect((await personGql(app.url, s, ARTICLES, { w: b.workspace.id })).errors?.[0].extensions.code).toBe('not_found');
    const PUT =
      'mutation($w: String!) { putMemoryNote(workspace: $w, input: { path: "by-a-person", body: "b", kind: "note", links: [], tags: [] }) { path } }';
    const created = await personGql(app.url, s, PUT, { w: a.workspace.id });
    expect(created.errors, JSON.stringify(created.errors)).toBeUndefined();
    const SECTION = 'mutation($w: String!) { createSection(workspace: $w, input: { label: "Guides" }) { key } }';
    const refused = await personGql(app.url, s, SECTION, { w: a.workspace.id });
    expect(refused.errors?.[0].extensions).toMatchObject({ code: 'permission_denied', details: { missing: ['section.create'] } });

    const events = await sql<{ actor: string; member_id: string; agent_key_id: string | null; action: string }>(
      freshEm(app.server.orm),
      `select actor, member_id, agent_key_id, action from events where organization_id = ?::uuid order by id`,
      [a.org.id],
    );
    const byMember = events.filter((e) => e.actor === 'member');
    expect(byMember.map((e) => e.action)).toEqual(expect.arrayContaining(['member.signed_in', 'memory.note.created']));
    for (const e of byMember) expect(e).toMatchObject({ member_id: a.member.id, agent_key_id: null });
  });
});

describe('who mints agent keys', () => {
  const CREATE = `mutation($input: CreateAgentKeyInput!) { createAgentKey(input: $input) { key agentKey { id memberId createdByMemberId } } }`;
  const keyFor = (memberId: string) => ({ input: { memberId, name: `key-${memberId.slice(0, 6)}`, permissions: ['memory.read'] } });

  it("records who minted a key (in the key and its audit event); an admin may not mint or change an owner's key, an owner may mint anyone's", async () => {
    const owner = await person('owner');
    const admin = await createMember(app, owner.org.id, { role: 'admin' });
    const editor = await createMember(app, owner.org.id, { role: 'editor' });
    const asAdmin = await signIn(app.url, app.adminToken, await emailOf(admin.id));
    const asOwner = await signIn(app.url, app.adminToken, owner.email);

    const forEditor = await personGql(app.url, asAdmin, CREATE, keyFor(editor.id));
    expect(forEditor.data.createAgentKey.agentKey).toMatchObject({ memberId: editor.id, createdByMemberId: admin.id });
    const forOwner = await personGql(app.url, asAdmin, CREATE, keyFor(owner.member.id));
    expect(forOwner.errors?.[0].extensions).toMatchObject({ code: 'permission_denied', details: { missing: [], memberRole: 'owner' } });
    expect(forOwner.errors?.[0].message).toContain('ranked above');
    const byOwner = await personGql(app.url, asOwner, CREATE, keyFor(admin.id));
    expect(byOwner.data.createAgentKey.agentKey).toMatchObject({ memberId: admin.id, createdByMemberId: owner.member.id });
    const byToken = await app.gql(CREATE, keyFor(owner.member.id));
    expect(byToken.data.createAgentKey.agentKey).toMatchObject({ memberId: owner.member.id, createdByMemberId: null });

    // The owner's key is out of the admin's hands to change, not to revoke (a revocation only takes power away).
    const ownersKey = byToken.data.createAgentKey.agentKey.id;
    const renamed = await personGql(
      app.url,
      asAdmin,
      'mutation($id: ID!) { updateAgentKey(id: $id, input: { name: "mine now" }) { id } }',
      {
        id: ownersKey,
      },
    );
    expect(renamed.errors?.[0].extensions.code).toBe('permission_denied');
    const revoked = await personGql(app.url, asAdmin, 'mutation($id: ID!) { revokeAgentKey(id: $id) { revokedAt } }', { id: ownersKey });
    expect(revoked.data.revokeAgentKey.revokedAt).toBeTruthy();

    // The audit trail says who minted each key for whom.
    const TRAIL =
      'query($k: String) { auditTrail(action: "agent_key.created", targetId: $k) { edges { node { actor memberId object } } } }';
    const mintedBy = async (keyId: string) => {
      const [edge] = (await app.gql(TRAIL, { k: keyId })).data.auditTrail.edges;
      return [edge.node.actor, edge.node.memberId, edge.node.object.memberId, edge.node.object.createdByMemberId];
    };
    expect(await mintedBy(forEditor.data.createAgentKey.agentKey.id)).toEqual(['member', admin.id, editor.id, admin.id]);
    expect(await mintedBy(byOwner.data.createAgentKey.agentKey.id)).toEqual(['member', owner.member.id, admin.id, owner.member.id]);
    expect(await mintedBy(ownersKey)).toEqual(['admin', null, owner.member.id, null]);
    const listed = await app.gql('query($o: ID!) { agentKeys(organizationId: $o) { edges { node { memberId createdByMemberId } } } }', {
      o: owner.org.id,
    });
    expect(listed.data.agentKeys.edges).toHaveLength(3);
  });
});

describe('two-factor for people', () => {
  it('refuses a sign-in link to an admin or owner of an organization that requires two-factor, and a session once it is required', async () => {
    const p = await person('owner', { requireTwoFactor: true });
    const { token } = await mintSignInLink(app.url, app.adminToken, p.email);
    await expect(redeemSignInLink(app.url, token)).rejects.toMatchObject({ status: 403, body: { error: { code: 'two_factor_required' } } });
    // An editor of the same organization is not concerned.
    const editor = await createMember(app, p.org.id, { role: 'editor' });
    await expect(signIn(app.url, app.adminToken, await emailOf(editor.id))).resolves.toBeTruthy();

    // An owner signed in before the organization turned the rule on is refused from then on.
    const q = await person('owner');
    const s: SignedInPerson = await signIn(app.url, app.adminToken, q.email);
    const ARTICLES = 'query($w: String!) { sections(workspace: $w) { key } }';
    expect((await personGql(app.url, s, ARTICLES, { w: q.workspace.id })).errors).toBeUndefined();
    await app.gql('mutation($id: ID!) { updateOrganization(id: $id, input: { requireTwoFactor: true }) { id } }', { id: q.org.id });
    expect((await personGql(app.url, s, ARTICLES, { w: q.workspace.id })).errors?.[0].extensions.code).toBe('two_factor_required');
  });
});

/** A graphql-transport-ws socket opened with a browser's cookie; resolves with the ack or the close. */
function sessionSocket(baseUrl: string, cookie: string, csrf: string | null) {
  const ws = new WebSocket(`${baseUrl.replace(/^http/, 'ws')}/graphql`, 'graphql-transport-ws', { headers: { cookie } });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on('close', (code, reason) => resolve({ code, reason: String(reason) })),
  );
  const acked = new Promise<boolean>((resolve) => {
    ws.on('message', (data) => {
      if (JSON.parse(String(data)).type === 'connection_ack') resolve(true);
    });
    void closed.then(() => resolve(false));
  });
  ws.on('open', () => ws.send(JSON.stringify({ type: 'connection_init', payload: csrf === null ? {} : { csrf } })));
  return { ws, acked, closed };
}

describe('behind https (an https PUBLIC_URL)', () => {
  it('the session cookie is Secure and named __Host-wks_session, and only that name is accepted; over plain http it is not Secure', async () => {
    // A TLS-terminating proxy in front: the app itself listens on plain http and trusts no proxy header.
    const { app: secure, idp } = await startAppWithIdentityProvider({
      publicUrl: 'https://wks.example.test',
      logger: testLogger(),
    });
    try {
      const org = await createOrg(secure);
      const member = await createMember(secure, org.id, { role: 'editor' });
      const [{ email }] = await sql<{ email: string }>(freshEm(secure.server.orm), 'select email from members where id = ?::uuid', [
        member.id,
      ]);
      const { url, token } = await mintSignInLink(secure.url, secure.adminToken, email);
      expect(url.startsWith('https://wks.example.test/console/sign-in#link=')).toBe(true);
      const res = await fetch(`${secure.url}/console/sign-in/link`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: 'https://wks.example.test' },
        body: JSON.stringify({ token }),
      });
      expect(res.status).toBe(200);
      const [cookie] = res.headers.getSetCookie();
      expect(cookie).toMatch(/^__Host-wks_session=wks_sess_[\w-]+; Path=\/; HttpOnly; SameSite=Lax; Max-Age=43200; Secure$/);
      expect(cookie).not.toMatch(/Domain=/i);
      const { csrf } = await res.json();
      const pair = cookie.split(';')[0];
      const me = await personGql(secure.url, { cookie: pair, csrf }, VIEWER);
      expect(me.data.viewer).toMatchObject({ memberId: member.id, mfa: false });
      // The same token under the plain name is not this service's cookie here.
      const plain = `wks_session=${pair.slice(pair.indexOf('=') + 1)}`;
      expect((await personGql(secure.url, { cookie: plain, csrf }, VIEWER)).errors?.[0].extensions.code).toBe('unauthorized');
      // Signing out deletes it under the same name, Secure too.
      const out = await fetch(`${secure.url}/console/sign-out`, { method: 'POST', headers: { cookie: pair, 'x-csrf-token': csrf } });
      expect(out.status).toBe(204);
      expect(out.headers.getSetCookie()).toEqual(['__Host-wks_session=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0; Secure']);
      // The identity provider's flow cookie (its sealed state, nonce and verifier) is Secure as well.
      const started = await fetch(`${secure.url}/console/sign-in/oidc?return_to=%2Fconsole`, { redirect: 'manual' });
      expect(started.status).toBe(303);
      expect(new URL(started.headers.get('location')!).searchParams.get('redirect_uri')).toBe(
        'https://wks.example.test/console/sign-in/oidc/callback',
      );
      expect(started.headers.getSetCookie()).toEqual([
        expect.stringMatching(/^wks_oidc_flow=[\w-]+; Path=\/console\/sign-in\/oidc; HttpOnly; SameSite=Lax; Max-Age=600; Secure$/),
      ]);
    } finally {
      await secure.close();
      await idp.close();
    }

    // The plain-http app (no PUBLIC_URL): the plain name, never Secure.
    const p = await person('viewer');
    const { token } = await mintSignInLink(app.url, app.adminToken, p.email);
    const res = await fetch(`${app.url}/console/sign-in/link`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token }),
    });
    const [cookie] = res.headers.getSetCookie();
    expect(cookie).toMatch(/^wks_session=wks_sess_/);
    expect(cookie).not.toMatch(/Secure/);
  }, 60_000);
});

describe('sessions on WebSockets and across processes', () => {
  it('a socket on the cookie needs the CSRF token in connection_init, and is closed once its session is revoked', async () => {
    const p = await person('viewer');
    const s = await signIn(app.url, app.adminToken, p.email);
    for (const csrf of [null, 'wrong']) {
      const refused = sessionSocket(app.url, s.cookie, csrf);
      expect(await refused.acked).toBe(false);
      expect((await refused.closed).code).toBe(4403);
    }
    const good = sessionSocket(app.url, s.cookie, s.csrf);
    expect(await good.acked).toBe(true);
    const other = await signIn(app.url, app.adminToken, p.email);
    const LIST = 'query { sessions { id current } }';
    const target = (await personGql(app.url, s, LIST)).data.sessions.find((x: { current: boolean }) => x.current).id;
    await personGql(app.url, other, 'mutation($id: ID!) { revokeSession(id: $id) { id } }', { id: target });
    const closed = await Promise.race([good.closed, new Promise<null>((r) => setTimeout(() => r(null), 10_000))]);
    expect(closed).toMatchObject({ code: 4403, reason: expect.stringContaining('session') });
  });

  it.skipIf(!process.env.DATABASE_URL)(
    'a sign-out or revocation in one process holds in another at once (sockets within seconds)',
    async () => {
      const second = await startTestApp();
      try {
        const p = await person('editor');
        const s = await signIn(app.url, app.adminToken, p.email);
        expect((await personGql(second.url, s, VIEWER)).data.viewer.memberId).toBe(p.member.id);
        const socket = sessionSocket(app.url, s.cookie, s.csrf);
        expect(await socket.acked).toBe(true);
        const out = await fetch(`${second.url}/console/sign-out`, {
          method: 'POST',
          headers: { cookie: s.cookie, 'x-csrf-token': s.csrf },
        });
        expect(out.status).toBe(204);
        expect((await personGql(app.url, s, VIEWER)).errors?.[0].extensions.code).toBe('unauthorized');
        const started = Date.now();
        const closed = await Promise.race([socket.closed, new Promise<null>((r) => setTimeout(() => r(null), 10_000))]);
        expect(closed).toMatchObject({ code: 4403 });
        expect(Date.now() - started).toBeLessThan(6000);
      } finally {
        await second.close();
      }
    },
  );
});
