// GET /console: the review console, a single-page app served by the service for a signed-in member
// (a session cookie, from /console/sign-in) that speaks GraphQL only (POST /graphql, subscriptions over
// a WebSocket on /graphql). Here the member is an owner, signed in by a sign-in link.
// Checked over HTTP (the page, its CSP and its cacheable assets), its line diff in Node, then in
// Debian's headless Chromium through the real stack: sign-in, workspace choice, approving and
// rejecting proposals, drafting from a content gap, creating and revoking keys, and the audit trail
// updating live, with nothing requested from elsewhere. Screenshots: test-artifacts/console/*.png.
import { randomBytes } from 'node:crypto';
import type { Browser, CDPSession, ElementHandle, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_CSP } from '../src/app/console.js';
import { startTestApp, type TestApp } from './support/app.js';
import {
  describeInBrowser,
  launchChromium,
  recordPage,
  requestsElsewhere,
  screenshot,
  waitForSignedInConsole,
  type PageRecord,
} from './support/browser.js';
import { ALL_PERMISSIONS, createKey, createMember, type MemberRow } from './support/factories.js';
import { until } from './support/wait.js';
import { mintSignInLink, personGql } from './support/signIn.js';
import { sql } from '../src/db/sql.js';
import { freshEm } from '../src/db/orm.js';

const W = '/api/v1/workspaces/-';
const uniq = () => randomBytes(3).toString('hex');

const INSTALL_V1 = `# Installing the service

Download the installer from the releases page.
Run \`./install.sh --prefix /opt/wks\` as root.
Start the service with \`wks start\`.

## Configuration

The settings live in /etc/wks/config.toml.
Every setting can also come from the environment.
Restart the service after changing a setting.
The port defaults to 8080.
The data directory defaults to /var/lib/wks.
Logs go to standard output as JSON lines.

## Troubleshooting

Check the log for lines with "level":50.
Ask in the #wks channel.`;
const INSTALL_V2 = `# Installing the service

Download the signed installer from the releases page and check its checksum.
Run \`./install.sh --prefix /opt/wks\` as root.
Start the service with \`wks start\`.

## Configuration

The settings live in /etc/wks/config.toml.
Every setting can also come from the environment.
Restart the service after changing a setting.
The port defaults to 8080.
The data directory defaults to /var/lib/wks.
Logs go to standard output as JSON lines.

## Troubleshooting

Check the log for lines with "level":50.
Run \`wks doctor\` to check the installation.`;

interface Fixture {
  org: { id: string; name: string };
  workspace: { id: string; name: string };
  member: MemberRow;
  key: string;
  editId: number;
  draftId: number;
}

let app: TestApp;
let fx: Fixture;

async function ok<T = any>(res: Promise<{ status: number; body: any; text: string }>, status: number): Promise<T> {
  const r = await res;
  expect(r.status, r.text).toBe(status);
  return r.body as T;
}

async function admin<T = any>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const res = await app.gql(query, variables);
  expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
  return res.data as T;
}

beforeAll(async () => {
  app = await startTestApp();
  const org = (
    await admin('mutation($input: CreateOrganizationInput!) { createOrganization(input: $input) { id name } }', {
      input: { name: `Acme Docs ${uniq()}`, plan: 'pro', requireTwoFactor: false },
    })
  ).createOrganization;
  const workspace = (
    await admin('mutation($input: CreateWorkspaceInput!) { createWorkspace(input: $input) { id name } }', {
      input: { organizationId: org.id, name: 'Handbook' },
    })
  ).createWorkspace;
  // A second workspace: the person chooses (once) where to start.
  await admin('mutation($input: CreateWorkspaceInput!) { createWorkspace(input: $input) { id } }', {
    input: { organizationId: org.id, name: 'Archive' },
  });
  const member = await createMember(app, org.id, { role: 'owner' });
  // A key holding every permission: its row keeps its Revoke button in view.
  await createKey(app, member.id, { name: 'all-bot', workspaceId: workspace.id, permissions: ALL_PERMISSIONS });
  const { key } = await createKey(app, member.id, {
    name: 'writer-bot',
    workspaceId: workspace.id,
    permissions: [
      'article.read',
      'article.create',
      'article.update',
      'proposal.read',
      'proposal.create',
      'section.create',
      'search.read',
      'content_gap.report',
    ],
  });
  await ok(app.api('POST', `${W}/sections`, { key, body: { label: 'Docs' } }), 201);
  await ok(app.api('POST', `${W}/articles`, { key, body: { title: 'Install', section: 'docs', markdown: INSTALL_V1 } }), 201);
  const edit = await ok(
    app.api('POST', `${W}/proposals`, { key, body: { article: 'install', markdown: INSTALL_V2, summary: 'Signed installer, wks doctor' } }),
    201,
  );
  const draft = await ok(
    app.api('POST', `${W}/proposals`, {
      key,
      body: { section: 'docs', title: 'FAQ', markdown: '# FAQ\n\nQ: Is it fast?\nA: Yes.', summary: 'A page of frequent questions' },
    }),
    201,
  );
  // Two groups of unanswered questions (password resets, refunds), embedded and grouped.
  for (const question of ['How do I reset my password?', 'How can I reset my password', 'What is the refund policy for annual plans?']) {
    await ok(app.api('POST', `${W}/content-gaps`, { key, body: { question } }), 202);
  }
  await app.server.drainEmbeddings(workspace.id);
  fx = { org, workspace, member, key, editId: edit.id, draftId: draft.id };
}, 120_000);
afterAll(async () => app?.close());

describe('/console over HTTP', () => {
  it('answers the page without a key, under a CSP of this origin only, with nothing inline and no other origin named', async () => {
    for (const path of ['/console', '/console/']) {
      const res = await fetch(`${app.url}${path}`);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.headers.get('cache-control')).toBe('no-cache');
      const csp = res.headers.get('content-security-policy')!;
      expect(csp).toBe(CONSOLE_CSP);
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("connect-src 'self'");
      expect(csp).not.toMatch(/https?:|unsafe/);
      const html = await res.text();
      expect(html).not.toMatch(/https?:\/\/|\/\/[a-z]/i);
      expect(html).not.toMatch(/<script(?![^>]*\bsrc=)|<style|\sstyle=|\son[a-z]+=/i); // no inline script, style or handler
      expect(html).toContain('data-permissions="article.read');
    }
    expect((await fetch(`${app.url}/console`, { method: 'POST' })).status).toBe(404);
    expect((await fetch(`${app.url}/console/elsewhere`)).status).toBe(404);
  });

  it('serves its modules and style sheet by digest (immutable, ETag, 304), each import naming its digest; unknown names are 404s', async () => {
    const html = await (await fetch(`${app.url}/console`)).text();
    const links = [...html.matchAll(/(?:href|src)="(\/console\/assets\/[^"]+)"/g)].map((m) => m[1]);
    expect(links.filter((l) => /\.css\?v=/.test(l))).toHaveLength(1);
    expect(links.filter((l) => /\/main\.js\?v=/.test(l))).toHaveLength(1);
    const seen = new Set<string>();
    const queue = [...links];
    while (queue.length) {
      const link = queue.shift()!;
      if (seen.has(link)) continue;
      seen.add(link);
      expect(link).toMatch(/\?v=[\w-]{12}$/);
      const res = await fetch(`${app.url}${link}`);
      expect(res.status, link).toBe(200);
      expect(res.headers.get('content-type'), link).toMatch(/\.css\?/.test(link) ? /^text\/css/ : /^text\/javascript/);
      expect(res.headers.get('cache-control'), link).toContain('immutable');
      expect(res.headers.get('content-security-policy'), link).toBe(CONSOLE_CSP);
      const etag = res.headers.get('etag')!;
      expect(etag, link).toBe(`"${/\?v=(.+)$/.exec(link)![1]}"`);
      expect((await fetch(`${app.url}${link}`, { headers: { 'if-none-match': etag } })).status, link).toBe(304);
      const body = await res.text();
      // The SVG namespace is a name, never fetched: every other URL would name another origin. Web storage
      // is session.js's alone (the chosen workspace; the browser tests check nothing secret is kept).
      expect(body.replaceAll("'http://www.w3.org/2000/svg'", ''), link).not.toMatch(/https?:\/\/|document\.cookie|innerHTML|eval\(/);
      if (!/\/session\.js\?/.test(link)) expect(body, link).not.toMatch(/localStorage|sessionStorage/);
      for (const m of body.matchAll(/\b(?:from|import)\s*['"]\.\/([^'"]+)['"]/g)) {
        expect(m[1], `${link} imports ${m[1]}`).toMatch(/^[\w-]+\.js\?v=[\w-]{12}$/);
        queue.push(`/console/assets/${m[1]}`);
      }
    }
    expect([...seen].map((l) => /assets\/([^?]+)/.exec(l)![1]).sort()).toEqual(
      expect.arrayContaining([
        'audit.js',
        'console.css',
        'diff.js',
        'dom.js',
        'gaps.js',
        'graphql.js',
        'keys.js',
        'main.js',
        'proposals.js',
      ]),
    );
    // Without the digest: revalidated, not immutable.
    const plain = await fetch(`${app.url}/console/assets/main.js`);
    expect(plain.headers.get('cache-control')).toBe('no-cache');
    for (const path of [
      '/console/assets/nope.js',
      '/console/assets/..%2fconsole.ts',
      '/console/assets/__proto__',
      '/console/assets/main.ts',
    ]) {
      expect((await fetch(`${app.url}${path}`)).status, path).toBe(404);
    }
  });
});

describe('the sign-in page keeps its way back', () => {
  const cookieOf = (res: Response) => res.headers.getSetCookie().find((c) => c.startsWith('wks_return_to='));

  it('remembers ?return_to= (15 minutes, HttpOnly, the sign-in routes only) for the page opened again without one', async () => {
    const asked = await fetch(`${app.url}/console/sign-in?return_to=${encodeURIComponent('/oauth/authorize?client_id=x&state=y')}`);
    const cookie = cookieOf(asked)!;
    expect(cookie).toMatch(/^wks_return_to=[^;]+; Path=\/console\/sign-in; HttpOnly; SameSite=Lax; Max-Age=900$/);
    expect(await asked.text()).toContain('data-return-to="/oauth/authorize?client_id=x&amp;state=y"');
    // A sign-in link opened in a tab of its own: /console/sign-in, no return_to, the cookie along.
    const again = await fetch(`${app.url}/console/sign-in`, { headers: { cookie: cookie.split(';')[0] } });
    expect(await again.text()).toContain('data-return-to="/oauth/authorize?client_id=x&amp;state=y"');
    expect(cookieOf(again)).toBeUndefined();
    // Without it, the console; another site's address is never kept.
    expect(await (await fetch(`${app.url}/console/sign-in`)).text()).toContain('data-return-to="/console"');
    const elsewhere = await fetch(`${app.url}/console/sign-in?return_to=${encodeURIComponent('//evil.example/x')}`);
    expect(await elsewhere.text()).toContain('data-return-to="/console"');
    const forged = await fetch(`${app.url}/console/sign-in`, {
      headers: { cookie: `wks_return_to=${encodeURIComponent('https://evil.example')}` },
    });
    expect(await forged.text()).toContain('data-return-to="/console"');
  });

  it('a sign-in forgets it', async () => {
    const [{ email }] = await sql<{ email: string }>(freshEm(app.server.orm), 'select email from members where id = ?::uuid', [
      fx.member.id,
    ]);
    const { token } = await mintSignInLink(app.url, app.adminToken, email);
    const res = await fetch(`${app.url}/console/sign-in/link`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: app.url, cookie: 'wks_return_to=%2Fconsole%23%2Fgaps' },
      body: JSON.stringify({ token, returnTo: '/console#/gaps' }),
    });
    expect(res.status).toBe(200);
    expect(cookieOf(res)).toMatch(/^wks_return_to=; Path=\/console\/sign-in; .*Max-Age=0/);
  });
});

describe('the console line diff (run in Node)', () => {
  const load = async () => await import(new URL('../console/diff.js', import.meta.url).href);

  it('keeps the longest common subsequence of lines and pairs replaced lines side by side', async () => {
    const { lineDiff, sideBySide, splitLines, diffStats } = await load();
    expect(splitLines('')).toEqual([]);
    expect(splitLines('a\r\nb\n')).toEqual(['a', 'b']);
    const ops = lineDiff(['a', 'b', 'c', 'd'], ['a', 'x', 'c', 'd', 'e']);
    expect(ops.map((o: any) => `${o.type}:${o.text}`)).toEqual(['same:a', 'del:b', 'add:x', 'same:c', 'same:d', 'add:e']);
    expect(diffStats(ops)).toEqual({ additions: 2, deletions: 1 });
    const rows = sideBySide(ops, { context: 1 });
    expect(rows.map((r: any) => [r.kind, r.left?.text ?? null, r.right?.text ?? null])).toEqual([
      ['same', 'a', 'a'],
      ['change', 'b', 'x'],
      ['same', 'c', 'c'],
      ['same', 'd', 'd'],
      ['change', null, 'e'],
    ]);
    // The LCS, not a greedy match: moving one line keeps the rest.
    const moved = lineDiff(['1', '2', '3', '4', '5'], ['2', '3', '4', '5', '1']);
    expect(moved.filter((o: any) => o.type === 'same').map((o: any) => o.text)).toEqual(['2', '3', '4', '5']);
    // Line numbers on each side.
    expect(moved[0]).toMatchObject({ type: 'del', text: '1', a: 1, b: null });
    expect(moved.at(-1)).toMatchObject({ type: 'add', text: '1', a: null, b: 5 });
  });

  it('folds long unchanged runs, keeping context around changes', async () => {
    const { lineDiff, sideBySide } = await load();
    const before = Array.from({ length: 30 }, (_, i) => `line ${i + 1}`);
    const after = before.map((l, i) => (i === 14 ? 'changed' : l));
    const rows = sideBySide(lineDiff(before, after), { context: 3 });
    expect(rows.map((r: any) => r.kind)).toEqual(['fold', 'same', 'same', 'same', 'change', 'same', 'same', 'same', 'fold']);
    expect(rows[0].rows).toHaveLength(11);
    expect(rows.at(-1).rows).toHaveLength(12);
    expect(sideBySide(lineDiff(before, before)).map((r: any) => r.kind)).toEqual(['fold']);
  });

  it('stays fast on large texts (common ends set aside; past the cell budget the middle is shown replaced)', async () => {
    const { lineDiff, MAX_CELLS } = await load();
    const big = Array.from({ length: 20_000 }, (_, i) => `row ${i}`);
    const edited = [...big.slice(0, 10_000), 'inserted', ...big.slice(10_000)];
    let started = performance.now();
    const ops = lineDiff(big, edited);
    expect(ops.filter((o: any) => o.type !== 'same')).toEqual([{ type: 'add', text: 'inserted', a: null, b: 10_001 }]);
    expect(performance.now() - started).toBeLessThan(500);
    const n = Math.ceil(Math.sqrt(MAX_CELLS)) + 10;
    const left = Array.from({ length: n }, (_, i) => `l${i}`);
    const right = Array.from({ length: n }, (_, i) => `r${i}`);
    started = performance.now();
    const replaced = lineDiff(left, right);
    expect(replaced.filter((o: any) => o.type === 'del')).toHaveLength(n);
    expect(replaced.filter((o: any) => o.type === 'add')).toHaveLength(n);
    expect(performance.now() - started).toBeLessThan(500);
  });
});

describeInBrowser('console.test.ts', '/console in headless Chromium', () => {
  let browser: Browser;
  let page: Page;
  let cdp: CDPSession;
  let record: PageRecord;
  let origin: string;
  let sessionCookie = '';
  const sockets: string[] = [];

  /** Waits until an element matching `selector` contains `text`. */
  const waitText = (selector: string, text: string, timeout = 15_000) =>
    page.waitForFunction(
      (s: string, t: string) => [...document.querySelectorAll(s)].some((e) => e.textContent?.includes(t)),
      { timeout },
      selector,
      text,
    );
  /** The live indicator's state. */
  const liveState = () => page.$eval('#live', (e) => (e as HTMLElement).dataset.state);
  const waitLive = () =>
    page.waitForFunction(() => (document.querySelector('#live') as HTMLElement | null)?.dataset.state === 'live', { timeout: 15_000 });
  const shot = (name: string) => screenshot(page, `console/${name}`);
  /** The first element matching `selector` whose text contains `text`, once there is one. */
  const byText = async (selector: string, text: string, timeout = 10_000): Promise<ElementHandle<Element>> => {
    const handle = await page.waitForFunction(
      (s: string, t: string) => [...document.querySelectorAll(s)].find((e) => e.textContent?.includes(t)),
      { timeout },
      selector,
      text,
    );
    return handle.asElement() as ElementHandle<Element>;
  };
  const clickText = async (selector: string, text: string) => (await byText(selector, text)).click();

  beforeAll(async () => {
    browser = await launchChromium();
    page = await browser.newPage();
    // A 1366 × 768 laptop screen (the browser's own bars take some of it).
    await page.setViewport({ width: 1366, height: 768 });
    record = recordPage(page, { ignore: /Failed to load resource: the server responded with a status of 40[01]/ });
    cdp = await page.createCDPSession();
    await cdp.send('Network.enable');
    cdp.on('Network.webSocketCreated', (e) => sockets.push(e.url));
    // Test hook (not part of the page): the sockets the page opens, so the test can drop one.
    await page.evaluateOnNewDocument(() => {
      const Native = window.WebSocket;
      const opened: WebSocket[] = [];
      (window as any).__sockets = opened;
      window.WebSocket = class extends Native {
        constructor(url: string | URL, protocols?: string | string[]) {
          super(url, protocols);
          opened.push(this);
        }
      } as typeof WebSocket;
    });
    origin = new URL(app.url).origin;
  });
  afterAll(async () => browser?.close());

  it('sends a browser without a session to the sign-in page; an unknown link is refused there, a good one signs in (HttpOnly cookie)', async () => {
    await page.goto(`${app.url}/console#/proposals`, { waitUntil: 'networkidle0' });
    await page.waitForFunction(() => location.pathname === '/console/sign-in', { timeout: 10_000 });
    expect(await page.evaluate(() => document.body.dataset.returnTo)).toBe('/console#/proposals');
    await page.goto(`${app.url}/console/sign-in#link=wks_link_${'x'.repeat(43)}`, { waitUntil: 'networkidle0' });
    await page.waitForSelector('#notice .message-error', { timeout: 10_000 });
    expect(await page.$eval('#notice', (e) => e.textContent)).toContain('unknown, already used or expired');
    // The token left the address bar at once.
    expect(await page.evaluate(() => location.hash)).toBe('');
    // The page was opened again without return_to: it kept the way back it was first given.
    expect(await page.evaluate(() => document.body.dataset.returnTo)).toBe('/console#/proposals');
    // The field takes a pasted link; anything else is refused there, saying what a link looks like.
    await page.type('#link-input', 'hello');
    await page.keyboard.press('Enter');
    await waitText('#notice', 'That is not a sign-in link');
    await page.$eval('#link-input', (e) => ((e as HTMLInputElement).value = ''));
    await shot('sign-in');

    const [{ email }] = await sql<{ email: string }>(freshEm(app.server.orm), 'select email from members where id = ?::uuid', [
      fx.member.id,
    ]);
    const { url } = await mintSignInLink(app.url, app.adminToken, email);
    await page.goto(`${app.url}${url}`, { waitUntil: 'networkidle0' });
    await waitForSignedInConsole(page, 10_000);
    expect(await page.$eval('#who', (e) => e.textContent)).toBe(`${email} · owner`);
    // Two workspaces and none chosen yet: the choice, which then leads to the address asked for.
    await waitText('main [role="status"]', 'The address you opened (#/proposals) opens in the workspace you choose.');
    // The session is an HttpOnly cookie: the page's script cannot read it, and nothing else is stored.
    expect(await page.evaluate(() => document.cookie)).toBe('');
    expect(await page.evaluate(() => localStorage.length)).toBe(0);
    const cookies = await page.cookies();
    expect(cookies.map((c) => [c.name, c.httpOnly, c.sameSite])).toEqual([['wks_session', true, 'Lax']]);
    sessionCookie = `${cookies[0].name}=${cookies[0].value}`;
    await waitLive();
  }, 60_000);

  it('chooses the organization, then the workspace, with the keyboard', async () => {
    await page.waitForSelector('.pick-name', { timeout: 10_000 });
    // Oldest first: on a shared database the organization may be on a later page.
    for (let i = 0; i < 200; i++) {
      const listed = await page.$$eval('.pick-name', (els, name) => els.some((e) => e.textContent === name), fx.org.name);
      if (listed) break;
      const count = (await page.$$('.pick-name')).length;
      await clickText('button', 'Load more organizations');
      await page.waitForFunction((n: number) => document.querySelectorAll('.pick-name').length > n, { timeout: 10_000 }, count);
    }
    // Filter by name, Tab to the only button left, Enter; the workspaces' heading takes the focus.
    await page.click('#org-filter');
    await page.keyboard.type(fx.org.name);
    expect(await page.$eval('#org-filter', (e) => getComputedStyle(e).outlineStyle)).not.toBe('none'); // focus is visible
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toContain(fx.org.name);
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => document.activeElement?.id === 'ws-title', { timeout: 10_000 });
    await waitText('.pick-name', 'Handbook');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toContain('Handbook');
    await shot('workspace');
    await page.keyboard.press('Enter');
    // The fragment changes at once; the header is drawn when the browser fires hashchange, a task later.
    await page.waitForFunction(
      () => location.hash.startsWith('#/proposals') && (document.getElementById('context')?.textContent ?? '') !== '',
      { timeout: 10_000 },
    );
    expect(await page.$eval('#context', (e) => e.textContent)).toContain('Handbook');
    // Remembered for this person's next start in this browser: the workspace, nothing secret.
    const remembered = await page.evaluate((id: string) => localStorage.getItem(`wks.console.last-workspace:${id}`), fx.member.id);
    expect(JSON.parse(remembered!)).toEqual({
      id: fx.workspace.id,
      name: 'Handbook',
      organizationId: fx.org.id,
      organizationName: fx.org.name,
    });
  }, 60_000);

  it('shows an edit beside the current version, approves it, and the article changes', async () => {
    await page.waitForSelector(`.proposal-item`, { timeout: 15_000 });
    expect(await page.$$eval('.proposal-item', (els) => els.length)).toBe(2);
    await page.click(`[data-focus="proposal:${fx.editId}"]`);
    await waitText('#proposal-title', `#${fx.editId}`);
    await page.waitForSelector('table.diff td.code-del', { timeout: 15_000 });
    // The replaced line beside its replacement, the removed and added ones, unchanged lines folded.
    const changes = await page.$$eval('table.diff tr.row-change', (rows) =>
      rows.map((r) => [...r.querySelectorAll('td.code')].map((c) => c.textContent!.replace(/^(removed|added): /, ''))),
    );
    expect(changes).toContainEqual([
      'Download the installer from the releases page.',
      'Download the signed installer from the releases page and check its checksum.',
    ]);
    expect(changes).toContainEqual(['Ask in the #wks channel.', 'Run `wks doctor` to check the installation.']);
    expect(await page.$$eval('table.diff tr.row-fold', (rows) => rows.length)).toBeGreaterThan(0);
    expect(await page.$eval('.diff-stats', (e) => e.textContent)).toContain('+2 −2');
    expect(await page.$eval('table.diff thead', (e) => e.textContent)).toContain('version 1');
    await shot('proposals');

    await page.click('.approve-form button[type="submit"]');
    await waitText('.review-result', 'is now at version 2');
    expect(await page.$eval('.article-now pre', (e) => e.textContent)).toBe(INSTALL_V2);
    const article = await ok(app.api('GET', `${W}/articles/install`, { key: fx.key }), 200);
    expect(article).toMatchObject({ markdown: INSTALL_V2, version: 2 });
    await page.waitForFunction((id: number) => !document.querySelector(`[data-focus="proposal:${id}"]`), { timeout: 10_000 }, fx.editId);
  }, 60_000);

  it('rejects a new-draft proposal with a reason (Enter submits)', async () => {
    await page.click(`[data-focus="proposal:${fx.draftId}"]`);
    await waitText('#proposal-title', `#${fx.draftId}`);
    await page.waitForSelector('table.diff td.code-add');
    expect(await page.$eval('table.diff thead', (e) => e.textContent)).toContain('No article yet');
    await page.click(`#reason-${fx.draftId}`);
    await page.keyboard.type('We keep questions in the articles themselves.');
    await page.keyboard.press('Enter');
    await waitText('.review-result', `Rejected proposal #${fx.draftId}`);
    const rejected = await ok<any[]>(app.api('GET', `${W}/proposals?status=rejected`, { key: fx.key }), 200);
    expect(rejected.find((p) => p.id === fx.draftId)).toMatchObject({
      status: 'rejected',
      reason: 'We keep questions in the articles themselves.',
    });
    // The empty list says how proposals arrive.
    await waitText('.proposal-list', 'No open proposals');
    expect(await page.$eval('.proposal-list', (e) => e.textContent)).toContain('proposals_create');
    expect(await page.$eval('.proposal-list a', (a) => a.getAttribute('href'))).toBe('#/gaps');
  }, 60_000);

  it('lists content-gap groups with their questions and drafts a proposal from one', async () => {
    await clickText('nav a', 'Content gaps');
    await page.waitForFunction(() => location.hash === '#/gaps');
    await waitText('.gap-label', 'reset my password');
    await waitText('.gap-questions li', 'How can I reset my password');
    expect(await page.$$eval('li.gap', (els) => els.length)).toBe(2);
    await page.$$eval('li.gap', (cards) => {
      const card = cards.find((c) => c.querySelector('.gap-label')!.textContent!.includes('reset my password'))!;
      card.querySelector('button')!.setAttribute('data-test', 'draft');
    });
    await page.click('li.gap button[data-test="draft"]');
    await page.waitForSelector('.draft-form input[name="title"]');
    // The title field has the focus, prefilled with the group's label.
    expect(await page.evaluate(() => (document.activeElement as HTMLInputElement).name)).toBe('title');
    await page.$eval('.draft-form input[name="title"]', (e) => ((e as HTMLInputElement).value = ''));
    await page.keyboard.type('Resetting your password');
    await page.select('.draft-form select[name="section"]', 'docs');
    await page.$eval('.draft-form textarea', (e) => ((e as HTMLTextAreaElement).value = ''));
    await page.type('.draft-form textarea', '# Resetting your password\n\nUse the reset link on the sign-in page.');
    await page.$eval('.draft-form input[name="summary"]', (e) => ((e as HTMLInputElement).value = ''));
    await page.type('.draft-form input[name="summary"]', 'Answers the password-reset questions');
    await shot('content-gaps');
    await page.keyboard.press('Enter');
    await waitText('.draft-pane [role="status"]', 'now waits for review');
    const link = await page.$eval('.draft-pane [role="status"] a', (a) => a.getAttribute('href'));
    const proposalId = Number(/#\/proposals\/(\d+)/.exec(link!)![1]);
    const { contentGapGroups } = await admin<{ contentGapGroups: any[] }>(
      'query($w: ID!) { contentGapGroups(workspaceId: $w, includeResolved: true) { id label state proposalId } }',
      { w: fx.workspace.id },
    );
    const group = contentGapGroups.find((g) => g.label.includes('reset my password'));
    expect(group).toMatchObject({ state: 'proposed', proposalId });
    await waitText('li.gap a', `Review proposal #${proposalId}`);

    // The proposals screen lists it, as a new draft from the group.
    await clickText('nav a', 'Proposals');
    await page.waitForSelector(`[data-focus="proposal:${proposalId}"]`, { timeout: 10_000 });
  }, 60_000);

  it('shows agents beside people per day (a chart and its table) and the unanswered questions of each; edits the guidance', async () => {
    await clickText('nav a', 'Agents and people');
    await page.waitForFunction(() => location.hash === '#/activity');
    // The fixture's agent wrote and read over REST today; this person's console reads count as people.
    await page.waitForSelector('svg.chart rect.bar-agents', { timeout: 15_000 });
    const bars = await page.$$eval('svg.chart rect', (rects) =>
      rects.map((r) => [r.getAttribute('class'), Number(r.getAttribute('height'))]),
    );
    expect(bars.filter(([c]) => c === 'bar-agents')).toHaveLength(14);
    expect(bars.some(([c, height]) => c === 'bar-agents' && (height as number) > 0)).toBe(true);
    await waitText('section[aria-label="Unanswered questions from agents"] li', 'refund policy');
    expect(await page.$eval('section[aria-label="Unanswered questions from people"]', (e) => e.textContent)).toContain('None open');
    // The chart names its unit.
    expect(await page.$eval('svg.chart text.axis-unit', (e) => e.textContent)).toBe('operations per day');
    expect(await page.$eval('.chart-figure figcaption', (e) => e.textContent)).toContain('reads plus writes');
    await shot('agents-and-people');

    // Each question links to its group, and to drafting the article that answers it.
    const refunds = 'section[aria-label="Unanswered questions from agents"] li';
    const groupHref = await (await byText(refunds, 'refund policy')).$eval('a.question', (a) => a.getAttribute('href'));
    const groupId = /^#\/gaps\/(.+)$/.exec(groupHref!)![1];
    await (await byText(refunds, 'refund policy')).$eval('a.question', (a) => (a as HTMLElement).click());
    await page.waitForFunction((id: string) => location.hash === `#/gaps/${id}`, { timeout: 10_000 }, groupId);
    await page.waitForSelector('li.gap.gap-asked', { timeout: 10_000 });
    expect(await page.$eval('li.gap.gap-asked .gap-label', (e) => e.textContent)).toContain('refund policy');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('data-focus'))).toBe(`gap:${groupId}`);
    await page.goBack();
    await page.waitForFunction(() => location.hash === '#/activity');
    await clickText(`${refunds} a`, 'Draft a proposal');
    await page.waitForFunction((id: string) => location.hash === `#/gaps/${id}/draft`, { timeout: 10_000 }, groupId);
    await page.waitForSelector('.draft-form input[name="title"]', { timeout: 10_000 });
    expect(await page.$eval('.draft-for', (e) => e.textContent)).toContain('refund policy');
    expect(await page.evaluate(() => (document.activeElement as HTMLInputElement).name)).toBe('title');
    await shot('draft-from-dashboard');
    await clickText('.draft-form button', 'Cancel');
    await page.waitForFunction(() => location.hash === '#/gaps');

    await clickText('nav a', 'Guidance');
    await page.waitForSelector('form.guidance textarea');
    // None yet: the screen says what to start with.
    await waitText('main p.muted', 'No guidance yet. Start with a few lines for agents');
    await page.click('form.guidance textarea');
    await page.keyboard.type('Write runbooks under runbooks/, one per service.');
    await waitText('#guidance-count', 'of 4,096 bytes');
    await clickText('form.guidance button', 'Save guidance');
    await waitText('[role="status"]', 'Saved.');
    await shot('guidance');
    const rest = await ok(app.api('GET', '/api/v1/workspaces/-/guidance', { key: fx.key }), 200);
    expect(rest.markdown).toBe('Write runbooks under runbooks/, one per service.');
  }, 60_000);

  let createdSecret = '';
  it('creates a key with chosen permissions, shows its secret once, and revokes it: REST then refuses it', async () => {
    await clickText('nav a', 'Agent keys');
    await page.waitForSelector('.create-form input[name="name"]', { timeout: 15_000 });
    await waitText('table.keys', 'writer-bot');
    // A key holding all 18 permissions: three chips and the rest folded, its Revoke button in view (the table never scrolls sideways).
    const allBot = await byText('table.keys tbody tr', 'all-bot');
    expect(await allBot.$$eval('td.perms > ul.chips > li', (chips) => chips.length)).toBe(3);
    expect(await allBot.$eval('td.perms details summary', (e) => e.textContent)).toBe(`and ${ALL_PERMISSIONS.length - 3} more`);
    const fits = () =>
      page.$eval('table.keys', (table) => {
        const wrap = table.closest('.table-wrap')!;
        const box = wrap.getBoundingClientRect();
        const buttons = [...table.querySelectorAll('.cell-action button')].map((b) => b.getBoundingClientRect());
        return {
          overflow: wrap.scrollWidth - wrap.clientWidth,
          outside: buttons.filter((b) => b.right > box.right + 0.5 || b.left < box.left - 0.5 || b.right > window.innerWidth).length,
          buttons: buttons.length,
        };
      });
    // A 1366 px screen less a browser's scroll bar, and a narrower one (where the form goes under the table);
    // asked to confirm, the action cell grows: "Revoke all-bot now" and Cancel stay in view too.
    for (const width of [1366, 1351, 1120]) {
      await page.setViewport({ width, height: 768 });
      expect(await fits(), `${width} px`).toEqual({ overflow: 0, outside: 0, buttons: 2 });
      await (await allBot.$('.cell-action button'))!.click();
      await waitText('table.keys .cell-action button', 'Revoke all-bot now');
      expect(await fits(), `${width} px, confirming`).toEqual({ overflow: 0, outside: 0, buttons: 3 });
      if (width === 1351) await shot('keys-confirm');
      await clickText('table.keys .cell-action button', 'Cancel');
    }
    await page.setViewport({ width: 1366, height: 768 });
    await page.click('.create-form input[name="name"]');
    await page.keyboard.type('console-bot');
    expect(await page.$eval('.create-form select[name="member"]', (e) => (e as HTMLSelectElement).value)).toBe(fx.member.id);
    expect(await page.$eval('.create-form select[name="workspace"]', (e) => (e as HTMLSelectElement).value)).toBe(fx.workspace.id);
    await page.click('.create-form input[value="article.read"]');
    await page.click('.create-form input[value="search.read"]');
    await page.focus('.create-form input[name="name"]');
    await page.keyboard.press('Enter');
    await page.waitForSelector('.secret-box input.secret', { timeout: 10_000 });
    createdSecret = await page.$eval('.secret-box input.secret', (e) => (e as HTMLInputElement).value);
    expect(createdSecret).toMatch(/^svc_pat_/);
    await waitText('table.keys tbody th', 'console-bot');
    await shot('keys');

    await ok(app.api('GET', `${W}/articles/install`, { key: createdSecret }), 200);
    const keys = await admin<{ agentKeys: any }>(
      'query($o: ID!) { agentKeys(organizationId: $o, first: 100) { edges { node { name permissions workspaceId } } } }',
      { o: fx.org.id },
    );
    expect(keys.agentKeys.edges.map((e: any) => e.node)).toContainEqual({
      name: 'console-bot',
      permissions: ['article.read', 'search.read'],
      workspaceId: fx.workspace.id,
    });

    // Once: hidden for good when dismissed.
    await clickText('.secret-box button', 'Done');
    await page.waitForFunction(() => !document.querySelector('.secret-box'));
    expect(await page.evaluate((s: string) => document.documentElement.outerHTML.includes(s), createdSecret)).toBe(false);

    const row = await byText('table.keys tbody tr', 'console-bot');
    await (await row.$('.cell-action button'))!.click();
    await clickText('.cell-action button', 'Revoke console-bot now');
    await page.waitForFunction(
      () =>
        [...document.querySelectorAll('table.keys tr')].some(
          (r) => r.textContent!.includes('console-bot') && r.textContent!.includes('revoked'),
        ),
      { timeout: 10_000 },
    );
    const refused = await app.api('GET', `${W}/articles/install`, { key: createdSecret });
    expect(refused.status).toBe(401);
  }, 60_000);

  it('shows the audit trail, filtered, with new events arriving live (and after the socket drops)', async () => {
    await clickText('nav a', 'Audit trail');
    await page.waitForSelector('table.audit tbody tr', { timeout: 15_000 });
    await waitText('table.audit', 'proposal.approved');
    await waitLive();
    // The service has the subscription (the protocol does not acknowledge one): events committed from now on reach it.
    await until(() => app.server.live.size === 1, 'the audit subscription');
    await page.evaluate(() => ((window as any).__sameDocument = true));

    // An agent's change appears on top without a reload.
    await ok(
      app.api('POST', `${W}/articles`, { key: fx.key, body: { title: 'Live from the audit trail', section: 'docs', markdown: 'Hello.' } }),
      201,
    );
    await waitText('table.audit tbody tr.fresh', 'article.created');
    expect(await page.$eval('table.audit tbody tr', (r) => r.textContent)).toContain('article.created');
    await shot('audit');

    // Filters: only the approvals, newest first.
    await page.click('#audit-action');
    await page.keyboard.type('proposal.approved');
    await page.keyboard.press('Enter');
    await page.waitForFunction(
      () => {
        const rows = [...document.querySelectorAll('table.audit tbody tr')];
        return rows.length > 0 && rows.every((r) => r.textContent!.includes('proposal.approved'));
      },
      { timeout: 10_000 },
    );
    await page.select('#audit-actor', 'agent');
    await page.click('.filters button[type="submit"]');
    await waitText('table.audit', 'No events match');

    // Clear the filters; drop the socket: the indicator says offline, then live again, and events still arrive.
    await page.click('.filters button[type="reset"]');
    await page.waitForFunction(() => document.querySelectorAll('table.audit tbody tr').length > 3, { timeout: 10_000 });
    const before = sockets.length;
    await page.evaluate(() => (window as any).__sockets.at(-1).close());
    await page.waitForFunction(() => (document.querySelector('#live') as HTMLElement).dataset.state !== 'live', { timeout: 5_000 });
    expect(await page.$eval('#live', (e) => e.textContent)).toMatch(/Offline|Connecting/);
    await waitLive();
    expect(sockets.length).toBe(before + 1);
    await until(() => app.server.live.size === 1, 'the audit subscription, again');
    await ok(app.api('POST', `${W}/content-gaps`, { key: fx.key, body: { question: 'Is there a dark theme?' } }), 202);
    await waitText('table.audit tbody tr.fresh', 'content_gap.reported');
    expect(await page.evaluate(() => (window as any).__sameDocument)).toBe(true);
    expect(await liveState()).toBe('live');
  }, 60_000);

  it('names each session’s browser in words, its whole User-Agent kept; Connected apps says how an app gets there, with no stray id', async () => {
    await clickText('nav a', 'Sessions');
    const mine = await byText('table.sessions tbody tr', 'This browser');
    const cell = await mine.$eval('td.user-agent', (td) => ({ text: td.textContent, title: td.getAttribute('title') }));
    const userAgent = await page.evaluate(() => navigator.userAgent);
    expect(cell.title).toBe(userAgent);
    const major = /HeadlessChrome\/(\d+)/.exec(userAgent)![1];
    expect(cell.text).toBe(`Chrome (headless) ${major} on Linux`);
    await shot('sessions');

    await clickText('nav a', 'Connected apps');
    await waitText('table.grants td.empty', 'No connected apps yet');
    expect(await page.$eval('table.grants td.empty', (e) => e.textContent)).toContain(`${origin}/mcp`);
    const lead = await page.$eval('main .lead', (e) => e.textContent!);
    expect(lead).toBe(`Apps the members of ${fx.org.name} allowed over OAuth (MCP and the REST API).`);
    expect(await page.$eval('main', (e) => e.textContent)).not.toContain(fx.org.id.slice(0, 8));
  }, 60_000);

  it('signs out (the session ends on the service, the cookie is gone); no request left the origin and nothing failed', async () => {
    const csrf = await page.evaluate(async () => (await (await fetch('/console/session')).json()).csrf as string);
    await clickText('.session button', 'Sign out');
    await page.waitForFunction(() => location.pathname === '/console/sign-in', { timeout: 10_000 });
    expect(await page.$eval('#notice', (e) => e.textContent)).toContain('Signed out.');
    // The session cookie is gone; the sign-in page keeps only its way back (to the screen signed out from).
    expect((await page.cookies()).map((c) => [c.name, c.path, c.httpOnly])).toEqual([['wks_return_to', '/console/sign-in', true]]);
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    // What stays in this browser: the person's last workspace (its id and name), never a token.
    const stored = await page.evaluate(() => Object.entries(localStorage));
    expect(stored.map(([key]) => key)).toEqual([`wks.console.last-workspace:${fx.member.id}`]);
    expect(JSON.stringify(stored)).not.toMatch(/wks_|csrf|token/i);
    const after = await personGql(app.url, { cookie: sessionCookie, csrf }, 'query { viewer { email } }');
    expect(after.errors?.[0].extensions.code).toBe('unauthorized');

    expect(requestsElsewhere(record, origin)).toEqual([]);
    expect(record.requests.filter((url) => url.startsWith(`${origin}/graphql`)).length).toBeGreaterThan(10);
    expect(sockets.length).toBeGreaterThan(0);
    for (const url of sockets) expect(url).toBe(`${origin.replace(/^http/, 'ws')}/graphql`);
    expect(record.problems).toEqual([]);
  }, 30_000);
  it('a proposal’s address opened signed out leads, after sign-in with a pasted link, to that proposal in the remembered workspace', async () => {
    const proposal = await ok(
      app.api('POST', `${W}/proposals`, {
        key: fx.key,
        body: { article: 'install', markdown: `${INSTALL_V2}\nOne more line.`, summary: 'One more line' },
      }),
      201,
    );
    await page.goto(`${app.url}/console#/proposals/${proposal.id}`, { waitUntil: 'networkidle0' });
    await page.waitForFunction(() => location.pathname === '/console/sign-in', { timeout: 10_000 });
    const [{ email }] = await sql<{ email: string }>(freshEm(app.server.orm), 'select email from members where id = ?::uuid', [
      fx.member.id,
    ]);
    const { url } = await mintSignInLink(app.url, app.adminToken, email);
    await page.type('#link-input', `${app.url}${url}`);
    await page.keyboard.press('Enter');
    // Straight to the proposal: no workspace choice (two workspaces, the last one remembered).
    await page.waitForFunction(
      (id: number) => location.pathname === '/console' && location.hash === `#/proposals/${id}`,
      { timeout: 15_000 },
      proposal.id,
    );
    await waitText('#proposal-title', `#${proposal.id}`);
    expect(await page.$eval('#context', (e) => e.textContent)).toContain('Handbook');
    await shot('deep-link');
  }, 60_000);
});
