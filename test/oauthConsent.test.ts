// The consent screen in headless Chromium: a signed-in member sees the client, the workspace and the
// permissions (those beyond the role struck out), allows, and the browser lands on the client's
// redirect URI with the code (the page's CSP lets the form lead there and nowhere else). A person not
// signed in yet is sent to sign in and, opening a sign-in link in a tab of its own, comes back to the
// consent screen. Screenshots in test-artifacts/oauth/.
import { createHash, randomBytes } from 'node:crypto';
import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { describeInBrowser, launchChromium, recordPage, requestsElsewhere, screenshot } from './support/browser.js';
import { createOrg, createWorkspace } from './support/factories.js';
import { callbackServer } from './support/oauthClient.js';
import { mintSignInLink, signIn as signInAs } from './support/signIn.js';

describeInBrowser('oauthConsent.test.ts', 'the consent screen in a browser', () => {
  let app: TestApp;
  let chromium: Browser;
  let page: Page;
  let callback: Awaited<ReturnType<typeof callbackServer>>;
  let clientId: string;
  let org: { id: string };
  let workspace: { id: string };
  let verifier: string;
  let code: string;

  /** The authorization request of the test client: its query string. */
  const authorizeQuery = (challenge: string, state: string) =>
    new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: callback.url,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state,
      scope: 'memory.read memory.write search.read section.create openapi.manage',
      resource: `${app.url}/mcp`,
    });

  beforeAll(async () => {
    app = await startTestApp({ oauth: { registrationsPerHour: 100_000 } });
    chromium = await launchChromium();
    callback = await callbackServer();
    const registered = await fetch(`${app.url}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'Claude (test double)', redirect_uris: [callback.url] }),
    });
    clientId = ((await registered.json()) as { client_id: string }).client_id;
    org = await createOrg(app);
    workspace = await createWorkspace(app, org.id);
    await createWorkspace(app, org.id);
    const email = `consent-${randomBytes(4).toString('hex')}@example.com`;
    await app.gql('mutation($input: CreateMemberInput!) { createMember(input: $input) { id } }', {
      input: { organizationId: org.id, email, role: 'editor' },
    });
    const { cookie } = await signInAs(app.url, app.adminToken, email);
    page = await chromium.newPage();
    await page.setViewport({ width: 900, height: 1000 });
    const [name, ...value] = cookie.split(';')[0].split('=');
    await page.setCookie({ name, value: value.join('='), url: app.url });
  }, 60_000);

  afterAll(async () => {
    await chromium?.close();
    callback?.server.close();
    await app?.close();
  });

  it('shows who asks, for which workspace and permissions, and sends the browser back with a code on Allow', async () => {
    const record = recordPage(page);
    verifier = randomBytes(32).toString('base64url');
    const params = authorizeQuery(createHash('sha256').update(verifier).digest('base64url'), 'xyz');
    await page.goto(`${app.url}/oauth/authorize?${params}`);
    const text = await page.$eval('main', (m) => m.textContent ?? '');
    expect(text).toContain('Claude (test double)');
    expect(text).toContain('not verified');
    expect(text).toContain('Write and delete shared memory notes');
    expect(await page.$$eval('li.no', (items) => items.length)).toBe(2); // section.create and openapi.manage: not an editor's
    expect(await page.$$eval('select[name=workspace] option', (o) => o.length)).toBe(2);
    await screenshot(page, 'oauth/consent', { fullPage: true });
    const arrived = callback.next();
    await Promise.all([page.waitForNavigation(), page.click('button.allow')]);
    const back = await arrived;
    code = back.searchParams.get('code')!;
    expect(code).toMatch(/^wks_ac_/);
    expect(back.searchParams.get('state')).toBe('xyz');
    expect(page.url().startsWith(callback.url)).toBe(true);
    expect(record.problems).toEqual([]);
    expect(requestsElsewhere(record, app.url).map((u) => new URL(u).origin)).toEqual([new URL(callback.url).origin]);
  });

  it('the grant appears under Connected apps in the console, and revoking it there ends its tokens', async () => {
    const redeemed = await fetch(`${app.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        client_id: clientId,
        code,
        code_verifier: verifier,
        redirect_uri: callback.url,
      }),
    });
    const tokens = (await redeemed.json()) as { access_token: string };
    const tools = () =>
      fetch(`${app.url}/mcp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          authorization: `Bearer ${tokens.access_token}`,
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
    expect((await tools()).status).toBe(200);
    await page.setViewport({ width: 1366, height: 768 }); // the console's layout size
    await page.goto(`${app.url}/console`, { waitUntil: 'networkidle0' });
    // The workspace as the console's picker keeps it (the picker itself is the console's own test).
    await page.evaluate((w) => sessionStorage.setItem('wks.console.workspace', JSON.stringify(w)), {
      id: workspace.id,
      name: 'Workspace',
      organizationId: org.id,
      organizationName: 'Org',
    });
    await page.goto(`${app.url}/console#/apps`, { waitUntil: 'networkidle0' });
    await page.waitForSelector('tr[data-grant]', { timeout: 10_000 });
    const row = await page.$eval('tr[data-grant]', (tr) => tr.textContent ?? '');
    // The page names the organization, never its id.
    expect(await page.$eval('main', (m) => m.textContent)).not.toContain(org.id.slice(0, 8));
    expect(row).toContain('Claude (test double)');
    expect(row).toContain('self-registered');
    expect(row).toContain('memory.write');
    await screenshot(page, 'oauth/connected-apps', { fullPage: true });
    await page.click('tr[data-grant] .cell-action button');
    await page.click('tr[data-grant] .cell-action button.danger');
    await page.waitForFunction(() => !document.querySelector('tr[data-grant]'), { timeout: 10_000 });
    expect((await tools()).status).toBe(401);
  });

  it('a person sent to sign in from the consent screen who opens a sign-in link in another tab lands back on it', async () => {
    const context = await chromium.createBrowserContext(); // a browser with no session
    try {
      const waiting = await context.newPage();
      const params = authorizeQuery(createHash('sha256').update(randomBytes(32).toString('base64url')).digest('base64url'), 'back');
      await waiting.goto(`${app.url}/oauth/authorize?${params}`);
      expect(new URL(waiting.url()).pathname).toBe('/console/sign-in');
      expect(new URL(waiting.url()).searchParams.get('return_to')).toBe(`/oauth/authorize?${params}`);
      // The link arrives elsewhere (a chat, an e-mail) and opens in a new tab: /console/sign-in#link=…, no return_to.
      const email = `consent-back-${randomBytes(4).toString('hex')}@example.com`;
      await app.gql('mutation($input: CreateMemberInput!) { createMember(input: $input) { id } }', {
        input: { organizationId: org.id, email, role: 'editor' },
      });
      const { url } = await mintSignInLink(app.url, app.adminToken, email);
      const tab = await context.newPage();
      const record = recordPage(tab);
      await tab.goto(`${app.url}${url}`);
      await tab.waitForFunction(() => location.pathname === '/oauth/authorize', { timeout: 15_000 });
      expect(new URL(tab.url()).searchParams.get('state')).toBe('back');
      await tab.waitForSelector('button.allow');
      expect(await tab.$eval('main', (m) => m.textContent)).toContain(`act as you, ${email}`);
      await screenshot(tab, 'oauth/consent-after-sign-in', { fullPage: true });
      expect(record.problems).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('an unregistered redirect URI gets a page of the service, not a redirect', async () => {
    const response = await page.goto(`${app.url}/oauth/authorize?client_id=${clientId}&redirect_uri=https%3A%2F%2Fevil.example%2Fcb`);
    expect(response!.status()).toBe(400);
    expect(page.url().startsWith(app.url)).toBe(true);
    await screenshot(page, 'oauth/refused-redirect');
  });
});
