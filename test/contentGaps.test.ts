import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { createKey, tenant, type Tenant } from './support/factories.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ embeddingWorker: false });
});
afterAll(async () => app?.close());

const W = '/api/v1/workspaces/-';
const GROUPS = 'query($w: ID!) { contentGapGroups(workspaceId: $w, includeResolved: true) { id label state proposalId resolvedAt } }';

async function ok(res: Promise<{ status: number; body: any }>, status = 200): Promise<any> {
  const r = await res;
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  return r.body;
}
const report = (t: Tenant, question: string) => ok(app.api('POST', `${W}/content-gaps`, { key: t.key, body: { question } }), 202);
const gaps = (key: string, query = '') => app.api('GET', `${W}/content-gaps${query}`, { key });
const propose = (key: string, group: number | string, body: Record<string, unknown>) =>
  app.api('POST', `${W}/content-gaps/${group}/proposal`, { key, body });
const draft = {
  title: 'Resetting your password',
  section: 'docs',
  markdown: 'Use the reset link.',
  summary: 'Answers the password questions',
};

/** A workspace with one article and two groups of questions (password, refunds), embedded and grouped. */
async function gapWorkspace(): Promise<Tenant> {
  const t = await tenant(app);
  await ok(app.api('POST', `${W}/sections`, { key: t.key, body: { label: 'Docs' } }), 201);
  await ok(
    app.api('POST', `${W}/articles`, {
      key: t.key,
      body: {
        title: 'Recovering account credentials',
        section: 'docs',
        markdown: 'If you forgot your login secret, request a reset link.',
      },
    }),
    201,
  );
  await report(t, 'How do I reset my password? Mail me at jane@example.com');
  await report(t, 'How can I reset my password');
  await ok(app.api('GET', `${W}/search?q=${encodeURIComponent('reset my password please now')}`, { key: t.key }));
  await report(t, 'What is the refund policy for annual plans?');
  await app.server.drainEmbeddings(t.workspace.id);
  return t;
}

describe('content gaps over REST, and from gap to draft', () => {
  it('lists the open groups, most asked first, with scrubbed samples and the nearest article', async () => {
    const t = await gapWorkspace();
    const list = await ok(gaps(t.key));
    expect(list.map((g: any) => g.questionCount)).toEqual([3, 1]);
    const [password, refund] = list;
    expect(password).toMatchObject({
      reportCount: 2,
      searchCount: 1,
      nearestArticle: 'recovering-account-credentials',
      state: 'open',
      proposalId: null,
    });
    expect(password.sampleQuestions).toHaveLength(3);
    expect(password.sampleQuestions[0]).toBe('reset my password please now');
    expect(JSON.stringify(password)).not.toContain('jane@example.com');
    expect(password.sampleQuestions.some((q: string) => /reset my password\? Mail me at/.test(q))).toBe(true);
    expect(refund).toMatchObject({ questionCount: 1, label: 'What is the refund policy for annual plans?' });
    expect(new Date(password.firstSeen).getTime()).toBeLessThanOrEqual(new Date(password.lastSeen).getTime());
    // Paginated: one per page, the cursor in Link.
    const first = await gaps(t.key, '?limit=1');
    expect(first.body.map((g: any) => g.id)).toEqual([password.id]);
    const next = /<([^>]+)>; rel="next"/.exec(first.headers.get('link') ?? '')?.[1];
    const url = new URL(next!, 'http://x');
    const second = await ok(app.api('GET', `${url.pathname}${url.search}`, { key: t.key }));
    expect(second.map((g: any) => g.id)).toEqual([refund.id]);
    expect((await gaps(t.key, '?cursor=bogus')).status).toBe(400);
  });

  it('turns a group into a new-draft proposal; approving it creates the draft and resolves the group', async () => {
    const t = await gapWorkspace();
    const [password] = await ok(gaps(t.key));
    const proposal = await ok(propose(t.key, password.id, draft), 201);
    expect(proposal).toMatchObject({ kind: 'new', status: 'open', section: 'docs', title: draft.title, summary: draft.summary });
    const listed = (await ok(gaps(t.key))).find((g: any) => g.id === password.id);
    expect(listed).toMatchObject({ state: 'proposed', proposalId: proposal.id });
    // A second proposal for the same group waits its turn.
    const again = await propose(t.key, password.id, draft);
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ code: 'conflict', details: { state: 'proposed', proposalId: proposal.id } });
    const approved = await app.gql(
      'mutation($id: Int!) { approveProposal(workspace: "-", id: $id) { status articleSlug } }',
      { id: proposal.id },
      t.key,
    );
    expect(approved.errors).toBeUndefined();
    expect(approved.data.approveProposal).toMatchObject({ status: 'approved', articleSlug: 'resetting-your-password' });
    expect((await ok(app.api('GET', `${W}/articles/resetting-your-password`, { key: t.key }))).status).toBe('DRAFT');
    expect((await ok(gaps(t.key))).map((g: any) => g.id)).not.toContain(password.id);
    const groups = (await app.gql(GROUPS, { w: t.workspace.id })).data.contentGapGroups;
    expect(groups.find((g: any) => g.id === password.id)).toMatchObject({ state: 'resolved', proposalId: proposal.id });
    expect(groups.find((g: any) => g.id === password.id).resolvedAt).toBeTruthy();
    // A resolved group takes no more proposals.
    const late = await propose(t.key, password.id, draft);
    expect(late.status).toBe(409);
    expect(late.body.error.details).toEqual({ state: 'resolved' });
  });

  it('a rejected proposal leaves the group open for another', async () => {
    const t = await gapWorkspace();
    const [, refund] = await ok(gaps(t.key));
    const first = await ok(propose(t.key, refund.id, { ...draft, title: 'Refunds' }), 201);
    const rejected = await app.gql(
      'mutation($id: Int!) { rejectProposal(workspace: "-", id: $id, reason: "too thin") { status } }',
      { id: first.id },
      t.key,
    );
    expect(rejected.errors).toBeUndefined();
    expect((await ok(gaps(t.key))).find((g: any) => g.id === refund.id)).toMatchObject({ state: 'open', proposalId: null });
    expect((await propose(t.key, refund.id, { ...draft, title: 'Refunds, properly' })).status).toBe(201);
  });

  it('refuses bad input (400), missing permissions (403), and groups of another workspace or none (404)', async () => {
    const t = await gapWorkspace();
    const [password] = await ok(gaps(t.key));
    for (const [body, field] of [
      [{ ...draft, section: undefined }, 'section'],
      [{ ...draft, title: '' }, 'title'],
      [{ ...draft, summary: 'x'.repeat(5000) }, 'summary'],
      [{ ...draft, extra: 1 }, 'extra'],
    ] as const) {
      const res = await propose(t.key, password.id, body);
      expect(res.status, field).toBe(400);
      expect(JSON.stringify(res.body.error), field).toContain(field);
    }
    const unknownSection = await propose(t.key, password.id, { ...draft, section: 'nope' });
    expect(unknownSection.status).toBe(400);
    expect((await propose(t.key, 'x', draft)).status).toBe(400);
    expect((await ok(gaps(t.key))).find((g: any) => g.id === password.id).state).toBe('open');
    const reader = await createKey(app, t.member.id, { permissions: ['article.read', 'proposal.create'], workspaceId: t.workspace.id });
    const listDenied = await gaps(reader.key);
    expect(listDenied.status).toBe(403);
    expect(listDenied.body.error.details).toEqual({ missing: ['article.create'] });
    const creator = await createKey(app, t.member.id, { permissions: ['article.create'], workspaceId: t.workspace.id });
    const proposeDenied = await propose(creator.key, password.id, draft);
    expect(proposeDenied.status).toBe(403);
    expect(proposeDenied.body.error.details).toEqual({ missing: ['proposal.create'] });
    const other = await tenant(app);
    expect(await ok(gaps(other.key))).toEqual([]);
    const foreign = await propose(other.key, password.id, draft);
    expect(foreign.status).toBe(404);
    expect((await propose(t.key, 2_000_000_000, draft)).status).toBe(404);
    expect((await ok(gaps(t.key))).find((g: any) => g.id === password.id).state).toBe('open');
  });

  it('drafts an answer from the memory notes that answer the group, which proposes as it is', async () => {
    const t = await gapWorkspace();
    const [password, refund] = await ok(gaps(t.key));
    const note = (path: string, body: string) =>
      ok(app.api('PUT', `${W}/memory/note`, { key: t.key, body: { path, body, kind: 'fact', links: [], tags: [] } }));
    await note(
      'ops/password-reset',
      'To reset a password, open Settings, then Security, and choose "Send reset link". The link expires in an hour.',
    );
    await note('billing/refunds', 'Annual plans are refunded pro rata within 30 days of the charge.');
    await note('misc/lunch', 'The team orders lunch on Fridays.');
    const drafted = await ok(app.api('GET', `${W}/content-gaps/${password.id}/draft`, { key: t.key }));
    expect(drafted.group).toMatchObject({ id: password.id, label: password.label, questionCount: 3 });
    expect(drafted.questions).toHaveLength(3);
    expect(drafted.questions).toContain('How can I reset my password');
    expect(JSON.stringify(drafted)).not.toContain('jane@example.com');
    expect(drafted.notes.map((n: any) => n.path)).toEqual(['ops/password-reset']);
    expect(drafted.notes[0]).toMatchObject({ kind: 'fact', version: 1, coverage: 1 });
    expect(drafted.notes[0].answers).toBeGreaterThanOrEqual(1);
    expect(drafted.notes[0].excerpt).toContain('To reset a password');
    expect(drafted.title).toBe(password.label);
    expect(drafted.markdown).toContain('- How can I reset my password\n');
    expect(drafted.markdown).toContain('## Password reset\n\nTo reset a password, open Settings');
    expect(drafted.markdown).toContain('_From the memory note `ops/password-reset` (version 1)._');
    expect(drafted.markdown).not.toContain('lunch');
    expect(drafted.summary).toContain('ops/password-reset');
    const refundDraft = await ok(app.api('GET', `${W}/content-gaps/${refund.id}/draft`, { key: t.key }));
    expect(refundDraft.notes.map((n: any) => n.path)).toEqual(['billing/refunds']);
    // A group no note answers gets a draft of its questions and says so.
    await report(t, 'Which colours does the dark theme use?');
    await app.server.drainEmbeddings(t.workspace.id);
    const theme = (await ok(gaps(t.key))).find((g: any) => g.label === 'Which colours does the dark theme use?');
    const bare = await ok(app.api('GET', `${W}/content-gaps/${theme.id}/draft`, { key: t.key }));
    expect(bare.notes).toEqual([]);
    expect(bare.markdown).toContain('No memory note answers these questions yet');
    expect(bare.summary).toContain('no memory note answers it yet');
    // The draft proposes as it is, and the group is then proposed.
    const { title, markdown, summary } = drafted;
    const proposal = await ok(propose(t.key, password.id, { title, section: 'docs', markdown, summary }), 201);
    expect(proposal.markdown).toBe(markdown);
    expect((await ok(app.api('GET', `${W}/content-gaps/${password.id}/draft`, { key: t.key }))).group.state).toBe('proposed');
  });

  it('refuses a draft without memory.read (403), for a resolved group (409), another workspace or none (404), bad ids (400), no key (401)', async () => {
    const t = await gapWorkspace();
    const [password, refund] = await ok(gaps(t.key));
    const draftOf = (key: string | undefined, group: number | string) => app.api('GET', `${W}/content-gaps/${group}/draft`, { key });
    const creator = await createKey(app, t.member.id, { permissions: ['article.create'], workspaceId: t.workspace.id });
    const denied = await draftOf(creator.key, password.id);
    expect(denied.status).toBe(403);
    expect(denied.body.error.details).toEqual({ missing: ['memory.read'] });
    const reader = await createKey(app, t.member.id, { permissions: ['memory.read'], workspaceId: t.workspace.id });
    expect((await draftOf(reader.key, password.id)).body.error.details).toEqual({ missing: ['article.create'] });
    expect((await draftOf(undefined, password.id)).status).toBe(401);
    expect((await draftOf(t.key, 'x')).status).toBe(400);
    expect((await draftOf(t.key, 0)).status).toBe(400);
    expect((await draftOf(t.key, 2_000_000_000)).status).toBe(404);
    const other = await tenant(app);
    const foreign = await draftOf(other.key, password.id);
    expect(foreign.status).toBe(404);
    expect(JSON.stringify(foreign.body)).not.toContain(password.label);
    const resolved = await app.gql('mutation($id: Int!) { resolveContentGapGroup(id: $id) { id } }', { id: refund.id });
    expect(resolved.errors).toBeUndefined();
    const late = await draftOf(t.key, refund.id);
    expect(late.status).toBe(409);
    expect(late.body.error.details).toEqual({ state: 'resolved' });
  });

  describe('grouping by meaning and words, re-clustered as questions arrive', () => {
    // Four wordings each of three questions: one group per question, whatever the order they come in.
    const WORDINGS = {
      smtp: [
        'How do I configure an SMTP relay?',
        'Which SMTP settings does the server need?',
        'How to set up SMTP for outgoing mail',
        'Where do I enter the SMTP host and port?',
      ],
      tls: [
        'How do I install a TLS certificate?',
        'Where do I upload my TLS certificate?',
        'How to add a TLS certificate for our domain',
        'Can I use my own TLS certificate?',
      ],
      refund: [
        'What is the refund policy?',
        'How do refunds work?',
        'Can I get a refund for my annual plan?',
        'Who do I ask for a refund?',
      ],
    };
    const labelled = Object.entries(WORDINGS).flatMap(([topic, qs]) => qs.map((question) => ({ topic, question })));
    const REPORTS = 'query($w: ID!) { contentGapReports(workspaceId: $w) { question groupId } }';

    async function grouped(order: { topic: string; question: string }[]): Promise<{ t: Tenant; partition: string[][] }> {
      const t = await tenant(app);
      for (const { question } of order) await report(t, question);
      await app.server.drainEmbeddings(t.workspace.id);
      const reports: { question: string; groupId: number | null }[] = (await app.gql(REPORTS, { w: t.workspace.id })).data
        .contentGapReports;
      expect(reports.every((r) => r.groupId !== null)).toBe(true);
      const byGroup = new Map<number, string[]>();
      for (const r of reports) byGroup.set(r.groupId!, [...(byGroup.get(r.groupId!) ?? []), r.question]);
      const partition = [...byGroup.values()].map((qs) => qs.sort()).sort((a, b) => a[0].localeCompare(b[0]));
      return { t, partition };
    }

    it('puts four wordings of each of three questions in three groups, in any order, with counts and labels recounted', async () => {
      const expected = Object.values(WORDINGS)
        .map((qs) => [...qs].sort())
        .sort((a, b) => a[0].localeCompare(b[0]));
      const inOrder = await grouped(labelled);
      expect(inOrder.partition).toEqual(expected);
      // Interleaved (one of each in turn) and reversed: the same groups.
      const interleaved = [0, 1, 2, 3].flatMap((i) => Object.values(WORDINGS).map((qs, k) => labelled[k * 4 + i]));
      expect((await grouped(interleaved)).partition).toEqual(expected);
      expect((await grouped([...labelled].reverse())).partition).toEqual(expected);
      // The listed groups say the same: three, four questions each, labelled by their earliest question.
      const listed = await ok(gaps(inOrder.t.key));
      expect(listed.map((g: any) => g.questionCount)).toEqual([4, 4, 4]);
      expect(listed.map((g: any) => g.label).sort()).toEqual([
        'How do I configure an SMTP relay?',
        'How do I install a TLS certificate?',
        'What is the refund policy?',
      ]);
    });

    it('a question asked again in the same words (case and spacing aside) joins the group of its earlier asking', async () => {
      const t = await tenant(app);
      await ok(app.api('POST', `${W}/sections`, { key: t.key, body: { label: 'Docs' } }), 201);
      for (const question of [WORDINGS.refund[0], ...WORDINGS.tls.slice(0, 2)]) await report(t, question);
      await app.server.drainEmbeddings(t.workspace.id);
      const before = await ok(gaps(t.key));
      const tls = before.find((g: any) => g.label === WORDINGS.tls[0]);
      const proposal = await ok(propose(t.key, tls.id, { ...draft, title: 'TLS certificates' }), 201);
      await report(t, `  ${WORDINGS.refund[0].toLowerCase().replace(' the ', ' the   ')}`);
      await report(t, WORDINGS.tls[1]);
      await report(t, WORDINGS.refund[0]);
      await app.server.drainEmbeddings(t.workspace.id);
      const after = await ok(gaps(t.key));
      // The same two groups (ids kept): refunds 1 → 3 questions, TLS 2 → 3.
      const counts = (groups: any[]) => Object.fromEntries(groups.map((g) => [g.id, g.questionCount]));
      const refund = before.find((g: any) => g.label === WORDINGS.refund[0]);
      expect(counts(before)).toEqual({ [refund.id]: 1, [tls.id]: 2 });
      expect(counts(after)).toEqual({ [refund.id]: 3, [tls.id]: 3 });
      expect(after.find((g: any) => g.id === tls.id)).toMatchObject({ state: 'proposed', proposalId: proposal.id });
    });

    it('keeps a group a draft was proposed from: later wordings join it, and its id and proposal stay', async () => {
      const t = await tenant(app);
      await ok(app.api('POST', `${W}/sections`, { key: t.key, body: { label: 'Docs' } }), 201);
      for (const question of WORDINGS.tls.slice(0, 2)) await report(t, question);
      await report(t, WORDINGS.refund[0]);
      await app.server.drainEmbeddings(t.workspace.id);
      const before = await ok(gaps(t.key));
      const tls = before.find((g: any) => g.label === WORDINGS.tls[0]);
      expect(tls.questionCount).toBe(2);
      const proposal = await ok(propose(t.key, tls.id, { ...draft, title: 'TLS certificates' }), 201);
      for (const question of WORDINGS.tls.slice(2)) await report(t, question);
      await app.server.drainEmbeddings(t.workspace.id);
      const after = await ok(gaps(t.key));
      expect(after.find((g: any) => g.id === tls.id)).toMatchObject({ questionCount: 4, state: 'proposed', proposalId: proposal.id });
      expect(after.map((g: any) => g.questionCount).sort()).toEqual([1, 4]);
    });
  });
});
