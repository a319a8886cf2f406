// The consent screen in headless Chromium: a signed-in member sees the client, the workspace and the
// permissions (those beyond the role struck out), allows, and the browser lands on the client's
// redirect URI with the code (the page's CSP lets the form lead there and nowhere else). Screenshots
// in test-artifacts/oauth/.
import { createHash, randomBytes } from 'node:crypto';
import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { describeInBrowser, launchChromium, recordPage, requestsElsewhere, screenshot } from './support/browser.js';
import { createOrg, createWorkspace } from './support/factories.js';
import { callbackServer } from './support/oauthClient.js';
import { signIn as signInAs } from './support/signIn.js';

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
    const params = new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: callback.url,
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
      state: 'xyz',
      scope: 'memory.read memory.write search.read section.create openapi.manage',
      resource: `${app.url}/mcp`,
    });
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
    expect(row).toContain('Claude (test double)');
    expect(row).toContain('self-registered');
    expect(row).toContain('memory.write');
    await screenshot(page, 'oauth/connected-apps', { fullPage: true });
    await page.click('tr[data-grant] .cell-action button');
    await page.click('tr[data-grant] .cell-action button.danger');
    await page.waitForFunction(() => !document.querySelector('tr[data-grant]'), { timeout: 10_000 });
    expect((await tools()).status).toBe(401);
  });

  it('an unregistered redirect URI gets a page of the service, not a redirect', async () => {
    const response = await page.goto(`${app.url}/oauth/authorize?client_id=${clientId}&redirect_uri=https%3A%2F%2Fevil.example%2Fcb`);
    expect(response!.status()).toBe(400);
    expect(page.url().startsWith(app.url)).toBe(true);
    await screenshot(page, 'oauth/refused-redirect');
  });
});
