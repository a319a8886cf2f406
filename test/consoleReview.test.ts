// The reviewer's day in the console, in Debian's headless Chromium through the real stack: an edit of
// an article that moved on shows its merge before approval and merges on it; an edit whose lines the
// article changed another way shows each conflict and is approved with the reviewer's text (markers
// left in are refused first); a proposal returned with a comment its proposer reads over REST; a
// content gap drafted from the memory notes that answer it; and the document pages that the `fetch`
// tool and search results link to. Screenshots: test-artifacts/console/*.png.
import type { Browser, ElementHandle, Page } from 'puppeteer-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { describeInBrowser, launchChromium, recordPage, screenshot, waitForSignedInConsole, type PageRecord } from './support/browser.js';
import { createKey, createMember, createOrg, createWorkspace, type MemberRow } from './support/factories.js';
import { mintSignInLink } from './support/signIn.js';

const W = '/api/v1/workspaces/-';
const lines = (n: number, f: (i: number) => string) => Array.from({ length: n }, (_, i) => f(i + 1)).join('\n');

/** A guide of 12 numbered lines, and the same with line `i` rewritten as `text`. */
const GUIDE = `# Guide\n\n${lines(12, (i) => `Step ${i} of the guide.`)}`;
const withLine = (markdown: string, i: number, text: string) =>
  markdown
    .split('\n')
    .map((l) => (l === `Step ${i} of the guide.` ? text : l))
    .join('\n');

interface Fixture {
  workspaceId: string;
  member: MemberRow;
  key: string;
  cleanId: number;
  conflictId: number;
  returnId: number;
  groupLabel: string;
}

let app: TestApp;
let fx: Fixture;

async function ok<T = any>(res: Promise<{ status: number; body: any; text: string }>, status = 200): Promise<T> {
  const r = await res;
  expect(r.status, r.text).toBe(status);
  return r.body as T;
}

beforeAll(async () => {
  app = await startTestApp();
  const org = await createOrg(app, { plan: 'pro' });
  // One organization with one workspace: the person goes straight in.
  const workspace = await createWorkspace(app, org.id, 'Runbooks');
  const member = await createMember(app, org.id, { role: 'owner' });
  const { key } = await createKey(app, member.id, {
    workspaceId: workspace.id,
    permissions: [
      'article.read',
      'article.create',
      'article.update',
      'article.publish',
      'proposal.read',
      'proposal.create',
      'section.create',
      'search.read',
      'memory.read',
      'memory.write',
      'content_gap.report',
    ],
  });
  await ok(app.api('POST', `${W}/sections`, { key, body: { label: 'Docs' } }), 201);
  await ok(app.api('POST', `${W}/articles`, { key, body: { title: 'Guide', section: 'docs', markdown: GUIDE } }), 201);
  const propose = (markdown: string, summary: string) =>
    ok<{ id: number }>(app.api('POST', `${W}/proposals`, { key, body: { article: 'guide', markdown, summary } }), 201);
  const clean = await propose(withLine(GUIDE, 3, 'Step 3, checked twice.'), 'Check step 3 twice');
  const conflict = await propose(withLine(GUIDE, 5, 'Step 5 as the proposer has it.'), 'Step 5, the proposer’s way');
  const returned = await propose(withLine(GUIDE, 12, 'Step 12, shorter.'), 'Shorten step 12');
  // The article moves on: line 5 rewritten another way, line 9 too, and its status changed.
  const moved = withLine(withLine(GUIDE, 5, 'Step 5 as the article has it now.'), 9, 'Step 9, updated meanwhile.');
  await ok(app.api('PATCH', `${W}/articles/guide`, { key, body: { markdown: moved, status: 'STABLE' } }));
  // A note that answers the questions of a content gap.
  await ok(
    app.api('PUT', `${W}/memory/note`, {
      key,
      body: {
        path: 'ops/rotate-certificates',
        body: 'To rotate the TLS certificates, run `wks certs rotate`; the service reloads them without a restart.',
        kind: 'fact',
        links: [],
        tags: [],
      },
    }),
  );
  for (const question of ['How do I rotate the TLS certificates?', 'rotate TLS certificates'])
    await ok(app.api('POST', `${W}/content-gaps`, { key, body: { question } }), 202);
  await app.server.drainEmbeddings(workspace.id);
  fx = {
    workspaceId: workspace.id,
    member,
    key,
    cleanId: clean.id,
    conflictId: conflict.id,
    returnId: returned.id,
    groupLabel: 'rotate the TLS certificates',
  };
}, 120_000);
afterAll(async () => app?.close());

describeInBrowser('consoleReview.test.ts', 'the reviewer’s day in the console', () => {
  let browser: Browser;
  let page: Page;
  let record: PageRecord;

  const waitText = (selector: string, text: string, timeout = 15_000) =>
    page.waitForFunction(
      (s: string, t: string) => [...document.querySelectorAll(s)].some((e) => e.textContent?.includes(t)),
      { timeout },
      selector,
      text,
    );
  const byText = async (selector: string, text: string): Promise<ElementHandle<Element>> =>
    (
      await page.waitForFunction(
        (s: string, t: string) => [...document.querySelectorAll(s)].find((e) => e.textContent?.includes(t)),
        { timeout: 10_000 },
        selector,
        text,
      )
    ).asElement() as ElementHandle<Element>;
  const shot = (name: string) => screenshot(page, `console/${name}`, { fullPage: true });
  const article = () => ok(app.api('GET', `${W}/articles/guide`, { key: fx.key }));
  const openProposal = async (id: number) => {
    await page.goto(`${app.url}/console#/proposals/${id}`, { waitUntil: 'networkidle0' });
    await waitText('#proposal-title', `#${id}`);
    await page.waitForSelector('.review-forms', { timeout: 15_000 });
  };

  beforeAll(async () => {
    browser = await launchChromium();
    page = await browser.newPage();
    await page.setViewport({ width: 1366, height: 900 });
    record = recordPage(page, { ignore: /Failed to load resource: the server responded with a status of 40[01]/ });
    const { url } = await mintSignInLink(app.url, app.adminToken, fx.member.email);
    await page.goto(`${app.url}${url}`, { waitUntil: 'networkidle0' });
    await waitForSignedInConsole(page, 15_000, '#/proposals');
  }, 60_000);
  afterAll(async () => browser?.close());

  it('shows the merge of an edit the article moved on from, and approving it keeps both changes', async () => {
    await openProposal(fx.cleanId);
    await waitText('.detail-pane [role="status"], .detail-pane .message', 'approving merges this edit into it');
    expect(await page.$eval('table.diff thead', (e) => e.textContent)).toContain('After approval (merged)');
    const changes = await page.$$eval('table.diff tr.row-change', (rows) =>
      rows.map((r) => [...r.querySelectorAll('td.code')].map((c) => c.textContent!.replace(/^(removed|added): /, ''))),
    );
    expect(changes).toEqual([['Step 3 of the guide.', 'Step 3, checked twice.']]);
    await shot('merge-preview');
    await page.click('.approve-form button[type="submit"]');
    await waitText('.review-result', 'is now at version 3');
    const now = await article();
    expect(now.markdown).toContain('Step 3, checked twice.');
    expect(now.markdown).toContain('Step 9, updated meanwhile.');
    expect(now.status).toBe('STABLE');
  }, 60_000);

  it('shows each conflict with its three versions; markers left in are refused; the reviewer’s text is approved', async () => {
    await openProposal(fx.conflictId);
    await waitText('.detail-pane', 'changed two ways');
    expect(await page.$eval('.conflict h4', (e) => e.textContent)).toBe('Line 7 of the article now');
    const sides = await page.$$eval('.conflict-side', (els) =>
      els.map((e) => [e.querySelector('h5')!.textContent, e.querySelector('pre')!.textContent]),
    );
    expect(sides).toEqual([
      ['When proposed (version 1)', 'Step 5 of the guide.'],
      ['Proposed', 'Step 5 as the proposer has it.'],
      ['Now (version 3)', 'Step 5 as the article has it now.'],
    ]);
    const merged = await page.$eval('.resolve-form textarea', (e) => (e as HTMLTextAreaElement).value);
    expect(merged).toContain(
      '<<<<<<< proposal\nStep 5 as the proposer has it.\n=======\nStep 5 as the article has it now.\n>>>>>>> current',
    );
    expect(await page.$('.approve-form')).toBeNull();
    await shot('merge-conflict');
    // Sent with its markers: refused in the page, nothing changes.
    await (await byText('.resolve-form button', 'Approve with this text')).click();
    await waitText('.review-actions .message-error', 'conflict marker');
    expect((await article()).version).toBe(3);
    // Resolved: both sentences kept in one line.
    const resolved = merged.replace(/<<<<<<< proposal\n[^]*?>>>>>>> current/, 'Step 5 as both have it.');
    await page.$eval('.resolve-form textarea', (e, v) => ((e as HTMLTextAreaElement).value = v as string), resolved);
    await (await byText('.resolve-form button', 'Approve with this text')).click();
    await waitText('.review-result', 'is now at version 4');
    const now = await article();
    expect(now.markdown).toBe(resolved);
    expect(now.markdown).toContain('Step 3, checked twice.');
  }, 60_000);

  it('returns a proposal with a comment its proposer reads over REST', async () => {
    await openProposal(fx.returnId);
    await page.type(`#comment-${fx.returnId}`, 'Keep the full sentence, please.');
    await page.keyboard.press('Enter');
    await waitText('.review-result', `Returned proposal #${fx.returnId} to its proposer`);
    const mine = await ok<any[]>(app.api('GET', `${W}/proposals?status=returned`, { key: fx.key }));
    expect(mine.find((p) => p.id === fx.returnId)).toMatchObject({ status: 'returned', reason: 'Keep the full sentence, please.' });
    expect((await article()).markdown).toContain('Step 12 of the guide.');
  }, 60_000);

  it('drafts a content gap from the memory note that answers it', async () => {
    await page.goto(`${app.url}/console#/gaps`, { waitUntil: 'networkidle0' });
    await waitText('.gap-label', fx.groupLabel);
    await (await byText('li.gap button', 'Draft')).click();
    await waitText('.draft-notes h3', 'Drafted from 1 memory note');
    expect(await page.$eval('.draft-notes code', (e) => e.textContent)).toBe('ops/rotate-certificates');
    const markdown = await page.$eval('.draft-form textarea', (e) => (e as HTMLTextAreaElement).value);
    expect(markdown).toContain('run `wks certs rotate`');
    expect(markdown).toContain('_From the memory note `ops/rotate-certificates` (version 1)._');
    expect(await page.$eval('.draft-form input[name="summary"]', (e) => (e as HTMLInputElement).value)).toContain(
      'ops/rotate-certificates',
    );
    await shot('gap-draft-from-notes');
    await page.select('.draft-form select[name="section"]', 'docs');
    await (await byText('.draft-form button', 'Create the proposal')).click();
    await waitText('.draft-pane [role="status"]', 'now waits for review');
    // The proposal holds the drafted text: the reviewer sees it as the new article's.
    await (await byText('.draft-pane [role="status"] a', 'Review proposal')).click();
    await page.waitForSelector('table.diff td.code-add', { timeout: 15_000 });
    expect(await page.$$eval('table.diff td.code-add', (cells) => cells.map((c) => c.textContent).join('\n'))).toContain(
      'wks certs rotate',
    );
  }, 60_000);

  it('opens the document pages that fetch and search link to, and says when a link leads nowhere', async () => {
    const fetched = await ok(app.api('GET', `${W}/documents?id=${encodeURIComponent('note:ops/rotate-certificates')}`, { key: fx.key }));
    const url = new URL(fetched.url);
    expect(url.origin).toBe(new URL(app.url).origin);
    await page.goto(fetched.url, { waitUntil: 'networkidle0' });
    await waitText('main h1', 'ops/rotate-certificates');
    expect(await page.$eval('.document-text', (e) => e.textContent)).toContain('wks certs rotate');
    expect(await page.$eval('main .pick-meta', (e) => e.textContent)).toContain('Memory note');
    await page.goto(`${app.url}/console#/ws/${fx.workspaceId}/articles/guide`, { waitUntil: 'networkidle0' });
    await waitText('main h1', 'Guide');
    expect(await page.$eval('.document-text', (e) => e.textContent)).toContain('Step 5 as both have it.');
    expect(await page.$eval('#context', (e) => e.textContent)).toContain('Runbooks');
    await shot('document');
    await page.goto(`${app.url}/console#/ws/${fx.workspaceId}/articles/no-such-article`, { waitUntil: 'networkidle0' });
    await waitText('main h1', 'article:no-such-article');
    expect(await page.$eval('main .message-error', (e) => e.textContent)).toMatch(/not found/i);
    await page.goto(`${app.url}/console#/ws/00000000-0000-4000-8000-000000000000/articles/guide`, { waitUntil: 'networkidle0' });
    await waitText('main h1', 'Document not found');
    expect(record.problems).toEqual([]);
  }, 60_000);
});
