import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { createKey, tenant, type Tenant } from './support/factories.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.close());

const W = '/api/v1/workspaces/-';

async function setup(): Promise<Tenant> {
  const t = await tenant(app);
  expect((await app.api('POST', `${W}/sections`, { key: t.key, body: { label: 'Docs' } })).status).toBe(201);
  expect(
    (await app.api('POST', `${W}/articles`, { key: t.key, body: { title: 'Install', section: 'docs', markdown: 'v1 text' } })).status,
  ).toBe(201);
  return t;
}

const propose = (key: string, body: Record<string, unknown>) => app.api('POST', `${W}/proposals`, { key, body });
const approve = (key: string, id: number) =>
  app.gql('mutation($id: Int!) { approveProposal(workspace: "-", id: $id) { id status articleSlug reviewedBy reviewedAt } }', { id }, key);

describe('proposals (16, 17)', () => {
  it("stores edits and new drafts as open proposals; GET lists only the caller key's", async () => {
    const t = await setup();
    const agentA = await createKey(app, t.member.id, {
      permissions: ['proposal.create', 'proposal.read', 'article.read'],
      workspaceId: t.workspace.id,
    });
    const agentB = await createKey(app, t.member.id, {
      permissions: ['proposal.create', 'proposal.read', 'article.read'],
      workspaceId: t.workspace.id,
    });
    const edit = await propose(agentA.key, { article: 'install', markdown: 'v2 text', summary: 'Fix the steps' });
    expect(edit.status).toBe(201);
    expect(edit.body).toMatchObject({
      kind: 'edit',
      status: 'open',
      articleSlug: 'install',
      baseVersion: 1,
      markdown: 'v2 text',
      title: null,
      summary: 'Fix the steps',
      reviewedAt: null,
    });
    const draft = await propose(agentA.key, { section: 'docs', title: 'FAQ', markdown: 'Q & A', summary: 'New FAQ page' });
    expect(draft.body).toMatchObject({ kind: 'new', status: 'open', section: 'docs', articleSlug: null });
    await propose(agentB.key, { article: 'install', title: 'Installing', summary: 'Better title' });
    const mine = await app.api('GET', `${W}/proposals`, { key: agentA.key });
    expect(mine.status).toBe(200);
    expect(mine.body.map((p: any) => p.id)).toEqual([draft.body.id, edit.body.id]);
    const theirs = await app.api('GET', `${W}/proposals`, { key: agentB.key });
    expect(theirs.body).toHaveLength(1);
    expect((await app.api('GET', `${W}/proposals?status=approved`, { key: agentA.key })).body).toEqual([]);
    const page = await app.api('GET', `${W}/proposals?limit=1`, { key: agentA.key });
    expect(page.body).toHaveLength(1);
    expect(page.headers.get('link')).toMatch(/rel="next"/);
  });

  it('answers 400 for incomplete or contradictory proposals, 403 without proposal.create', async () => {
    const t = await setup();
    const cases: [Record<string, unknown>, string][] = [
      [{ summary: 'x' }, 'section'],
      [{ article: 'install', summary: 'x' }, 'markdown'],
      [{ article: 'missing-article', markdown: 'y', summary: 'x' }, 'article'],
      [{ section: 'nowhere', title: 't', markdown: 'm', summary: 'x' }, 'section'],
      [{ article: 'install', section: 'docs', markdown: 'm', summary: 'x' }, 'section'],
      [{ article: 'install', markdown: 'm' }, 'summary'],
      [{ article: 'install', markdown: 'm', summary: 'x', status: 'approved' }, 'status'],
    ];
    for (const [body, field] of cases) {
      const res = await propose(t.key, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(
        res.body.error.details.map((d: any) => d.field),
        JSON.stringify(body),
      ).toContain(field);
    }
    const reader = await createKey(app, t.member.id, { permissions: ['proposal.read'], workspaceId: t.workspace.id });
    expect((await propose(reader.key, { article: 'install', markdown: 'm', summary: 's' })).status).toBe(403);
    const noRead = await createKey(app, t.member.id, { permissions: ['proposal.create'], workspaceId: t.workspace.id });
    expect((await app.api('GET', `${W}/proposals`, { key: noRead.key })).status).toBe(403);
  });

  it('approve applies an edit in one transaction and records the reviewer; an edit of another part of a changed article is merged', async () => {
    const t = await setup();
    const agent = await createKey(app, t.member.id, {
      permissions: ['proposal.create', 'proposal.read', 'article.read'],
      workspaceId: t.workspace.id,
    });
    const p1 = (await propose(agent.key, { article: 'install', markdown: 'v2 text', summary: 'update' })).body;
    const p2 = (await propose(agent.key, { article: 'install', title: 'Stale title', summary: 'based on v1' })).body;
    const denied = await approve(agent.key, p1.id);
    expect(denied.errors?.[0].extensions).toMatchObject({ code: 'permission_denied', details: { missing: ['article.update'] } });
    const ok = await approve(t.key, p1.id);
    expect(ok.errors).toBeUndefined();
    expect(ok.data.approveProposal).toMatchObject({ status: 'approved', articleSlug: 'install', reviewedBy: t.member.id });
    const article = await app.api('GET', `${W}/articles/install`, { key: t.key });
    expect(article.body).toMatchObject({ markdown: 'v2 text', title: 'Install', version: 2 });
    // p2 changed the title of version 1; the text changed since, the title did not: merged, nothing lost.
    const merged = await approve(t.key, p2.id);
    expect(merged.errors).toBeUndefined();
    expect((await app.api('GET', `${W}/articles/install`, { key: t.key })).body).toMatchObject({
      title: 'Stale title',
      markdown: 'v2 text',
    });
    const again = await approve(t.key, p1.id);
    expect(again.errors?.[0].extensions.code).toBe('conflict');
    const listed = await app.api('GET', `${W}/proposals`, { key: agent.key });
    expect(listed.body.map((p: any) => p.status)).toEqual(['approved', 'approved']);
  });

  it('approve of a new draft creates the article; reject records the reason', async () => {
    const t = await setup();
    const draft = (await propose(t.key, { section: 'docs', title: 'FAQ', markdown: 'Q & A', summary: 'new page' })).body;
    const approved = await approve(t.key, draft.id);
    expect(approved.data.approveProposal).toMatchObject({ status: 'approved', articleSlug: 'faq' });
    expect((await app.api('GET', `${W}/articles/faq`, { key: t.key })).body).toMatchObject({
      status: 'DRAFT',
      section: 'docs',
      markdown: 'Q & A',
    });
    const other = (await propose(t.key, { article: 'install', markdown: 'nope', summary: 'meh' })).body;
    const rejected = await app.gql(
      'mutation($id: Int!) { rejectProposal(workspace: "-", id: $id, reason: "Out of scope") { status reason reviewedBy } }',
      { id: other.id },
      t.key,
    );
    expect(rejected.data.rejectProposal).toEqual({ status: 'rejected', reason: 'Out of scope', reviewedBy: t.member.id });
    const all = await app.gql('{ proposals(workspace: "-") { items { id status } } }', {}, t.key);
    expect(all.data.proposals.items.map((p: any) => p.status)).toEqual(['rejected', 'approved']);
    const foreign = await tenant(app);
    expect((await approve(foreign.key, other.id)).errors?.[0].extensions.code).toBe('not_found');
  });

  it('lists every proposal of the workspace only for reviewers (article.update)', async () => {
    const t = await setup();
    const perms = ['proposal.create', 'proposal.read', 'article.read'];
    const a = await createKey(app, t.member.id, { permissions: perms, workspaceId: t.workspace.id });
    const b = await createKey(app, t.member.id, { permissions: perms, workspaceId: t.workspace.id });
    const pa = (await propose(a.key, { article: 'install', markdown: 'a', summary: 'from a' })).body;
    const pb = (await propose(b.key, { article: 'install', markdown: 'b', summary: 'from b' })).body;
    const all = (key: string) => app.gql('{ proposals(workspace: "-") { items { id } } }', {}, key);
    const denied = await all(a.key);
    expect(denied.errors?.[0].extensions).toMatchObject({ code: 'permission_denied', details: { missing: ['article.update'] } });
    expect(denied.data).toBeNull();
    const reviewer = await createKey(app, t.member.id, { permissions: ['proposal.read', 'article.update'], workspaceId: t.workspace.id });
    expect((await all(reviewer.key)).data.proposals.items.map((p: { id: number }) => p.id)).toEqual([pb.id, pa.id]);
  });

  it('approving a new draft needs article.create: without it nothing is created and the proposal stays open', async () => {
    const t = await setup();
    const draft = (await propose(t.key, { section: 'docs', title: 'FAQ', markdown: 'Q & A', summary: 'new page' })).body;
    const editor = await createKey(app, t.member.id, { permissions: ['proposal.read', 'article.update'], workspaceId: t.workspace.id });
    const denied = await approve(editor.key, draft.id);
    expect(denied.errors?.[0].extensions).toMatchObject({ code: 'permission_denied', details: { missing: ['article.create'] } });
    expect((await app.api('GET', `${W}/articles/faq`, { key: t.key })).status).toBe(404);
    const listed = await app.gql('{ proposals(workspace: "-") { items { id status } } }', {}, t.key);
    expect(listed.data.proposals.items).toEqual([{ id: draft.id, status: 'open' }]);
    expect((await approve(t.key, draft.id)).data.approveProposal.status).toBe('approved');
  });

  it('approving a new draft is reviewing too: proposal.read + article.create without article.update is refused, nothing created', async () => {
    const t = await setup();
    const draft = (await propose(t.key, { section: 'docs', title: 'FAQ', markdown: 'Q & A', summary: 'new page' })).body;
    const creator = await createKey(app, t.member.id, { permissions: ['proposal.read', 'article.create'], workspaceId: t.workspace.id });
    const denied = await approve(creator.key, draft.id);
    expect(denied.errors?.[0].extensions).toMatchObject({ code: 'permission_denied', details: { missing: ['article.update'] } });
    expect(denied.data).toBeNull();
    expect((await app.api('GET', `${W}/articles/faq`, { key: t.key })).status).toBe(404);
    const listed = await app.gql('{ proposals(workspace: "-") { items { id status reviewedBy } } }', {}, t.key);
    expect(listed.data.proposals.items).toEqual([{ id: draft.id, status: 'open', reviewedBy: null }]);
    // A reviewer who may also create articles approves it.
    const both = await createKey(app, t.member.id, {
      permissions: ['proposal.read', 'article.create', 'article.update'],
      workspaceId: t.workspace.id,
    });
    expect((await approve(both.key, draft.id)).data.approveProposal).toMatchObject({ status: 'approved', articleSlug: 'faq' });
  });

  it('rejects with a reason of 1 to 1,000 characters, and only for reviewers', async () => {
    const t = await setup();
    const open = (await propose(t.key, { article: 'install', markdown: 'nope', summary: 'meh' })).body;
    const reject = (reason: string, key = t.key) =>
      app.gql(
        'mutation($id: Int!, $r: String!) { rejectProposal(workspace: "-", id: $id, reason: $r) { status reason } }',
        { id: open.id, r: reason },
        key,
      );
    for (const reason of ['', 'x'.repeat(1001)]) {
      const res = await reject(reason);
      expect(res.errors?.[0].extensions, `${reason.length} characters`).toMatchObject({
        code: 'invalid_request',
        details: [{ field: 'reason' }],
      });
    }
    const proposer = await createKey(app, t.member.id, { permissions: ['proposal.create', 'proposal.read'], workspaceId: t.workspace.id });
    expect((await reject('no', proposer.key)).errors?.[0].extensions).toMatchObject({
      code: 'permission_denied',
      details: { missing: ['article.update'] },
    });
    const longest = 'y'.repeat(1000);
    expect((await reject(longest)).data.rejectProposal).toEqual({ status: 'rejected', reason: longest });
  });
});

describe('proposals merge on approval (three-way, from the version they were made on)', () => {
  const PAGE = ['# Install', '', 'Download the package.', '', 'Run the installer.', '', 'Restart the service.'].join('\n');
  const merge = (key: string, id: number) =>
    app.gql(
      'query($id: Int!) { proposalMerge(workspace: "-", id: $id) { clean title markdown conflicts { field line currentLines base proposed current } } }',
      { id },
      key,
    );
  const edit = (t: Tenant, markdown: string) => app.api('PATCH', `${W}/articles/install`, { key: t.key, body: { markdown } });

  async function page(): Promise<Tenant> {
    const t = await tenant(app, { plan: 'pro' });
    expect((await app.api('POST', `${W}/sections`, { key: t.key, body: { label: 'Docs' } })).status).toBe(201);
    expect(
      (await app.api('POST', `${W}/articles`, { key: t.key, body: { title: 'Install', section: 'docs', markdown: PAGE } })).status,
    ).toBe(201);
    return t;
  }

  it('a change of status, visibility or placement, or of other lines, never makes a proposal stale', async () => {
    const t = await page();
    const p = (
      await propose(t.key, {
        article: 'install',
        markdown: PAGE.replace('Run the installer.', 'Run the installer as root.'),
        summary: 'root',
      })
    ).body;
    expect((await app.api('PATCH', `${W}/articles/install`, { key: t.key, body: { status: 'STABLE' } })).status).toBe(200);
    expect((await app.api('PATCH', `${W}/articles/install`, { key: t.key, body: { visibility: 'restricted' } })).status).toBe(200);
    expect((await edit(t, PAGE.replace('Restart the service.', 'Restart the service, then check its health.'))).status).toBe(200);
    const preview = (await merge(t.key, p.id)).data.proposalMerge;
    expect(preview).toMatchObject({ clean: true, conflicts: [] });
    expect(preview.markdown).toContain('Run the installer as root.');
    expect(preview.markdown).toContain('then check its health.');
    const ok = await approve(t.key, p.id);
    expect(ok.errors).toBeUndefined();
    const article = (await app.api('GET', `${W}/articles/install`, { key: t.key })).body;
    expect(article).toMatchObject({ status: 'STABLE', visibility: 'restricted', markdown: preview.markdown });
  });

  it('lines both changed differently answer 409 naming them with both versions; the proposal stays open and is applied with the resolution', async () => {
    const t = await page();
    const p = (
      await propose(t.key, { article: 'install', markdown: PAGE.replace('Run the installer.', 'Run setup.exe.'), summary: 'windows' })
    ).body;
    expect((await edit(t, PAGE.replace('Run the installer.', 'Run ./install.sh.'))).status).toBe(200);
    const preview = (await merge(t.key, p.id)).data.proposalMerge;
    expect(preview.clean).toBe(false);
    expect(preview.conflicts).toEqual([
      {
        field: 'markdown',
        line: 5,
        currentLines: 1,
        base: ['Run the installer.'],
        proposed: ['Run setup.exe.'],
        current: ['Run ./install.sh.'],
      },
    ]);
    expect(preview.markdown).toContain('<<<<<<< proposal\nRun setup.exe.\n=======\nRun ./install.sh.\n>>>>>>> current');
    const refused = await approve(t.key, p.id);
    expect(refused.errors?.[0].message).toMatch(/changed line 5 differently/);
    expect(refused.errors?.[0].extensions).toMatchObject({
      code: 'conflict',
      details: { conflicts: [{ line: 5, proposed: ['Run setup.exe.'] }] },
    });
    expect((await app.api('GET', `${W}/proposals`, { key: t.key })).body[0].status).toBe('open');
    // A resolution still holding the markers is refused; the reviewer's text is applied.
    const resolve = (markdown: string) =>
      app.gql(
        'mutation($id: Int!, $m: String) { approveProposal(workspace: "-", id: $id, resolution: { markdown: $m }) { status } }',
        { id: p.id, m: markdown },
        t.key,
      );
    expect((await resolve(preview.markdown)).errors?.[0].extensions.code).toBe('invalid_request');
    const text = preview.markdown.replace(
      /<<<<<<< proposal\n(.*)\n=======\n(.*)\n>>>>>>> current/,
      'Run setup.exe (Windows) or ./install.sh.',
    );
    expect((await resolve(text)).data.approveProposal.status).toBe('approved');
    expect((await app.api('GET', `${W}/articles/install`, { key: t.key })).body.markdown).toBe(text);
  });

  it('returns a proposal to its proposer with a comment they read over REST and MCP', async () => {
    const t = await page();
    const agent = await createKey(app, t.member.id, {
      permissions: ['proposal.create', 'proposal.read', 'article.read'],
      workspaceId: t.workspace.id,
    });
    const p = (await propose(agent.key, { article: 'install', markdown: 'short', summary: 'shorter' })).body;
    const denied = await app.gql(
      'mutation($id: Int!) { returnProposal(workspace: "-", id: $id, comment: "no") { status } }',
      { id: p.id },
      agent.key,
    );
    expect(denied.errors?.[0].extensions.code).toBe('permission_denied');
    const returned = await app.gql(
      'mutation($id: Int!) { returnProposal(workspace: "-", id: $id, comment: "Keep the restart step.") { status reason } }',
      { id: p.id },
      t.key,
    );
    expect(returned.data.returnProposal).toEqual({ status: 'returned', reason: 'Keep the restart step.' });
    const mine = (await app.api('GET', `${W}/proposals?status=returned`, { key: agent.key })).body;
    expect(mine).toMatchObject([{ id: p.id, status: 'returned', reason: 'Keep the restart step.' }]);
    const mcp = await fetch(`${app.url}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${agent.key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'proposals_list', arguments: {} } }),
    });
    expect(JSON.stringify(await mcp.json())).toContain('Keep the restart step.');
    expect((await approve(t.key, p.id)).errors?.[0].extensions.code).toBe('conflict');
  });
});
