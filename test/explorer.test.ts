// GRAPHQL_EXPLORER: GraphiQL (the default) and Apollo Sandbox pages, in a real headless Chromium (Debian's
// `chromium`, driven by puppeteer-core, which downloads nothing). Every request GraphiQL makes must stay on
// the service's origin, with the network beyond it cut; the Sandbox page gives way to GraphiQL when
// Apollo's CDN cannot be reached (refused at once, or never answering).
// Without chromium the browser test is skipped, saying so, except on CI (CI set, as .ci/run does), where it fails.
import type { Browser, HTTPRequest, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { describeInBrowser, launchChromium, recordPage, requestsElsewhere, screenshot } from './support/browser.js';
import { createMember, createOrg } from './support/factories.js';
import { signIn } from './support/signIn.js';
import { freshEm } from '../src/db/orm.js';
import { sql } from '../src/db/sql.js';
import { SANDBOX_CSP, SANDBOX_WAIT_MS } from '../src/app/explorer.js';

const SANDBOX_CDN = 'https://embeddable-sandbox.cdn.apollographql.com/';

let app: TestApp;
/** A second service whose GRAPHQL_EXPLORER is `sandbox`. */
let sandboxApp: TestApp;
beforeAll(async () => {
  // No explorer option: the default one.
  [app, sandboxApp] = await Promise.all([startTestApp(), startTestApp({ explorer: 'sandbox' })]);
});
afterAll(async () => {
  await Promise.all([app?.close(), sandboxApp?.close()]);
});

const asBrowser = { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' };

describe('the explorers over HTTP', () => {
  it('answers a browser with GraphiQL by default, under a CSP of this origin only, and JSON clients with GraphQL', async () => {
    const page = await fetch(`${app.url}/graphql`, { headers: asBrowser });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = page.headers.get('content-security-policy')!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).not.toMatch(/https?:|unsafe/);
    const html = await page.text();
    expect(html).toContain('<title>GraphiQL');
    expect(html).not.toMatch(/https?:\/\//);
    expect(html).not.toMatch(/<script>|<style|style=/); // nothing inline
    // It offers the other explorer, at its own address (nothing of it is loaded until the person opens it).
    expect(html).toContain('href="/graphql/explorer/sandbox"');
    expect(await (await fetch(`${app.url}/graphql/explorer/graphiql`)).text()).toBe(html);

    const json = await fetch(`${app.url}/graphql?query=${encodeURIComponent('{ __typename }')}`, {
      headers: { accept: 'application/json', 'apollo-require-preflight': 'true' },
    });
    expect(await json.json()).toEqual({ data: { __typename: 'Query' } });
  });

  it('serves the bundles from node_modules with their types, cacheable by digest; unknown names are 404s', async () => {
    const html = await (await fetch(`${app.url}/graphql`, { headers: { accept: 'text/html' } })).text();
    const links = [...html.matchAll(/(?:href|src|data-schema)="\/(graphql\/explorer\/assets\/[^"]+)"/g)].map((m) => m[1]);
    expect(links).toHaveLength(7);
    for (const link of links) {
      const res = await fetch(`${app.url}/${link}`);
      expect(res.status, link).toBe(200);
      expect(res.headers.get('content-type'), link).toMatch(
        /\.css\?/.test(link) ? /^text\/css/ : /\.json\?/.test(link) ? /^application\/json/ : /^text\/javascript/,
      );
      expect(res.headers.get('cache-control'), link).toContain('immutable');
      const etag = res.headers.get('etag')!;
      expect((await fetch(`${app.url}/${link}`, { headers: { 'if-none-match': etag } })).status).toBe(304);
    }
    for (const path of [
      'graphql/explorer/assets/nope.js',
      'graphql/explorer/assets/..%2fpackage.json',
      'graphql/explorer/assets/constructor',
    ]) {
      expect((await fetch(`${app.url}/${path}`)).status, path).toBe(404);
    }
  });

  it('GRAPHQL_EXPLORER=sandbox: the Sandbox page, which names Apollo’s script and frame in its CSP and nothing inline, and GraphiQL beside it', async () => {
    const res = await fetch(`${sandboxApp.url}/graphql`, { headers: asBrowser });
    expect(res.status).toBe(200);
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toBe(SANDBOX_CSP);
    expect(csp).toContain("script-src 'self' https://embeddable-sandbox.cdn.apollographql.com;");
    expect(csp).toContain('frame-src https://sandbox.embed.apollographql.com;');
    expect(csp).not.toMatch(/unsafe|connect-src [^;]*https/);
    const html = await res.text();
    expect(html).toContain('<title>Apollo Sandbox');
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)|<style|style=/);
    expect(html).toContain('data-fallback="/graphql/explorer/graphiql?sandbox=unreachable"');
    expect(html).toContain('href="/graphql/explorer/graphiql"');
    expect((await fetch(`${sandboxApp.url}/graphql/explorer/sandbox`)).headers.get('content-security-policy')).toBe(SANDBOX_CSP);
    // GraphiQL at its own address says why it is shown, in a fixed sentence (nothing is taken from the URL).
    const fallback = await (await fetch(`${sandboxApp.url}/graphql/explorer/graphiql?sandbox=unreachable`)).text();
    expect(fallback).toContain('Apollo Sandbox could not be loaded');
    const other = await (await fetch(`${sandboxApp.url}/graphql/explorer/graphiql?sandbox=%3Cb%3Ehi`)).text();
    expect(other).not.toMatch(/could not be loaded|<b>hi/);
    // Apollo's own landing pages are never served: a GET without a query is a plain GraphQL GET.
    const json = await fetch(`${sandboxApp.url}/graphql`, { headers: { accept: 'application/json', 'apollo-require-preflight': '1' } });
    expect(await json.text()).not.toMatch(/<html|apollographql/i);
  });

  it('is not served when GRAPHQL_EXPLORER=off', async () => {
    const off = await startTestApp({ explorer: 'off' });
    try {
      const res = await fetch(`${off.url}/graphql`, { headers: { accept: 'text/html' } });
      expect(await res.text()).not.toMatch(/<html|graphiql|sandbox/i);
      for (const path of ['/graphql/explorer/assets/graphiql.js', '/graphql/explorer/graphiql', '/graphql/explorer/sandbox'])
        expect((await fetch(`${off.url}${path}`)).status, path).toBe(404);
    } finally {
      await off.close();
    }
  });
});

/**
 * A closed network for `page`: everything beyond `origin` is refused, as a browser without internet access
 * sees it, except Apollo's CDN when `cdn` says otherwise (`hang`: never answered; a string: served as the script).
 * Returns the addresses beyond the origin the page asked for.
 */
async function closedNetwork(page: Page, origin: string, cdn: 'refuse' | 'hang' | string = 'refuse'): Promise<string[]> {
  const elsewhere: string[] = [];
  await page.setRequestInterception(true);
  page.on('request', (request: HTTPRequest) => {
    const url = request.url();
    if (url.startsWith(`${origin}/`) || url.startsWith('data:')) return void request.continue();
    elsewhere.push(url);
    if (!url.startsWith(SANDBOX_CDN) || cdn === 'refuse') return void request.abort('internetdisconnected');
    if (cdn !== 'hang') void request.respond({ status: 200, contentType: 'text/javascript', body: cdn });
  });
  return elsewhere;
}

/** Types `query` into GraphiQL's editor, runs it and returns the answer as the page shows it. */
async function runInGraphiql(page: Page, query: string): Promise<unknown> {
  await page.waitForSelector('.graphiql-query-editor .CodeMirror', { timeout: 15_000 });
  await page.click('.graphiql-query-editor .CodeMirror');
  await page.keyboard.down('Control');
  await page.keyboard.press('a');
  await page.keyboard.up('Control');
  await page.keyboard.press('Backspace');
  await page.keyboard.type(query);
  await page.keyboard.press('Escape');
  await page.click('.graphiql-execute-button');
  await page.waitForFunction(() => /"data"/.test(document.querySelector('.graphiql-response')?.textContent ?? ''), { timeout: 15_000 });
  const answer = await page.$eval('.graphiql-response .CodeMirror', (e) =>
    (e as unknown as { CodeMirror: { getValue(): string } }).CodeMirror.getValue(),
  );
  return JSON.parse(answer);
}

describeInBrowser('explorer.test.ts', 'GraphiQL in headless Chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('runs as the signed-in person: their session cookie, no header to type', async () => {
    const org = await createOrg(app);
    const member = await createMember(app, org.id, { role: 'viewer' });
    const [{ email }] = await sql<{ email: string }>(freshEm(app.server.orm), 'select email from members where id = ?::uuid', [member.id]);
    const { cookie } = await signIn(app.url, app.adminToken, email);
    const page = await browser.newPage();
    const record = recordPage(page);
    const [name, value] = cookie.split('=');
    await page.setCookie({ name, value, url: app.url, httpOnly: true, sameSite: 'Lax' });
    await page.goto(`${app.url}/graphql`, { waitUntil: 'networkidle0' });
    await page.waitForSelector('.graphiql-query-editor .CodeMirror', { timeout: 15_000 });
    await page.click('.graphiql-query-editor .CodeMirror');
    await page.keyboard.down('Control');
    await page.keyboard.press('a');
    await page.keyboard.up('Control');
    await page.keyboard.press('Backspace');
    await page.keyboard.type('{ viewer { email role } }');
    await page.keyboard.press('Escape');
    await page.click('.graphiql-execute-button');
    await page.waitForFunction(() => document.querySelector('.graphiql-response')?.textContent?.includes('viewer'), { timeout: 15_000 });
    const answer = await page.$eval('.graphiql-response .CodeMirror', (e) =>
      (e as unknown as { CodeMirror: { getValue(): string } }).CodeMirror.getValue(),
    );
    expect(JSON.parse(answer)).toEqual({ data: { viewer: { email, role: 'viewer' } } });
    await screenshot(page, 'explorer-signed-in');
    expect(record.problems).toEqual([]);
  }, 60_000);

  it('loads everything from the service, runs an admin mutation with the token header and shows the answer', async () => {
    const page = await browser.newPage();
    await page.setViewport({ width: 1280, height: 800 });
    const record = recordPage(page);
    const { requests } = record;

    await page.goto(`${app.url}/graphql`, { waitUntil: 'networkidle0' });
    await page.waitForSelector('.graphiql-query-editor .CodeMirror', { timeout: 15_000 });

    // Type the operation as a person would (closing brackets and quotes typed over the editor's own).
    const name = `From GraphiQL ${Date.now()}`;
    const mutation = `mutation { createOrganization(input: {name: "${name}", plan: "pro"}) { name plan } }`;
    await page.click('.graphiql-query-editor .CodeMirror');
    await page.keyboard.down('Control');
    await page.keyboard.press('a');
    await page.keyboard.up('Control');
    await page.keyboard.press('Backspace');
    await page.keyboard.type(mutation);
    await page.keyboard.press('Escape'); // any completion list closes
    await page.click('.graphiql-editor-tool .graphiql-editor:not(.hidden) .CodeMirror'); // the headers editor (the tools open on it)
    await page.keyboard.type(`{"Authorization": "Bearer ${app.adminToken}"}`);
    await page.click('.graphiql-execute-button');

    await page.waitForFunction(() => document.querySelector('.graphiql-response')?.textContent?.includes('createOrganization'), {
      timeout: 15_000,
    });
    const answer = await page.$eval('.graphiql-response .CodeMirror', (e) =>
      (e as unknown as { CodeMirror: { getValue(): string } }).CodeMirror.getValue(),
    );
    expect(JSON.parse(answer)).toEqual({ data: { createOrganization: { name, plan: 'pro' } } });

    // The schema (served as schema.json: GraphiQL's own introspection is past the depth limit) fills the docs.
    await page.click('.graphiql-sidebar button[aria-label="Show Documentation Explorer"]');
    await page.waitForFunction(() => document.querySelector('.graphiql-plugin')?.textContent?.includes('mutation: Mutation'), {
      timeout: 5_000,
    });
    await page.$$eval('.graphiql-plugin a', (links) => (links.find((a) => a.textContent === 'Mutation') as HTMLElement).click());
    await page.waitForFunction(() => document.querySelector('.graphiql-plugin')?.textContent?.includes('createOrganization'), {
      timeout: 5_000,
    });

    await screenshot(page, 'explorer');

    const origin = new URL(app.url).origin;
    expect(requestsElsewhere(record, origin)).toEqual([]);
    expect(requests.filter((url) => url.startsWith(`${origin}/graphql/explorer/assets/`))).toHaveLength(7);
    expect(requests.filter((url) => url === `${origin}/graphql`).length).toBe(2); // the page, the mutation
    expect(record.problems).toEqual([]);
  }, 60_000);
  it('works on a closed network: the default explorer loads and runs a query with nothing beyond the service reachable', async () => {
    const page = await browser.newPage();
    const origin = new URL(app.url).origin;
    const elsewhere = await closedNetwork(page, origin);
    const record = recordPage(page);
    await page.goto(`${app.url}/graphql`, { waitUntil: 'networkidle0' });
    expect(await runInGraphiql(page, '{ __typename }')).toEqual({ data: { __typename: 'Query' } });
    expect(await page.$eval('#open-sandbox', (a) => a.getAttribute('href'))).toBe('/graphql/explorer/sandbox');
    expect(elsewhere).toEqual([]);
    expect(record.problems).toEqual([]);
    await page.close();
  }, 60_000);

  it('GRAPHQL_EXPLORER=sandbox on a closed network: Apollo’s CDN refused, the page opens GraphiQL, which says why and runs queries', async () => {
    const page = await browser.newPage();
    const origin = new URL(sandboxApp.url).origin;
    const elsewhere = await closedNetwork(page, origin);
    const record = recordPage(page, { ignore: /ERR_INTERNET_DISCONNECTED/ });
    await page.goto(`${sandboxApp.url}/graphql`);
    await page.waitForFunction(() => location.pathname === '/graphql/explorer/graphiql', { timeout: 10_000 });
    expect(await page.$eval('#explorer-notice', (e) => e.textContent)).toContain('Apollo Sandbox could not be loaded');
    expect(await runInGraphiql(page, '{ __typename }')).toEqual({ data: { __typename: 'Query' } });
    await screenshot(page, 'explorer-sandbox-offline');
    expect(elsewhere.every((url) => url.startsWith(SANDBOX_CDN))).toBe(true);
    expect(elsewhere.length).toBeGreaterThan(0);
    expect(record.problems).toEqual([]);
    await page.close();
  }, 60_000);

  it('GRAPHQL_EXPLORER=sandbox where Apollo’s CDN never answers: GraphiQL takes over after the wait', async () => {
    const page = await browser.newPage();
    await closedNetwork(page, new URL(sandboxApp.url).origin, 'hang');
    const started = Date.now();
    await page.goto(`${sandboxApp.url}/graphql`, { waitUntil: 'domcontentloaded' });
    expect(await page.$eval('#sandbox', (e) => e.textContent)).toContain('Loading Apollo Sandbox');
    await page.waitForFunction(() => location.pathname === '/graphql/explorer/graphiql', { timeout: SANDBOX_WAIT_MS + 10_000 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(SANDBOX_WAIT_MS - 500);
    await page.waitForSelector('.graphiql-query-editor .CodeMirror', { timeout: 15_000 });
    await page.close();
  }, 60_000);

  it('GRAPHQL_EXPLORER=sandbox where Apollo’s CDN answers: Sandbox is started against /graphql, and the page stays', async () => {
    const page = await browser.newPage();
    // Apollo's script stands in: it records how the page started it.
    const fake = `window.EmbeddedSandbox = function (options) {
      const target = document.querySelector(options.target);
      target.dataset.started = JSON.stringify(options);
      target.textContent = 'Sandbox';
    };`;
    await closedNetwork(page, new URL(sandboxApp.url).origin, fake);
    await page.goto(`${sandboxApp.url}/graphql`, { waitUntil: 'networkidle0' });
    await page.waitForSelector('#sandbox[data-started]', { timeout: 10_000 });
    const options = JSON.parse(await page.$eval('#sandbox', (e) => (e as HTMLElement).dataset.started!));
    expect(options).toMatchObject({ target: '#sandbox', initialEndpoint: `${sandboxApp.url}/graphql`, endpointIsEditable: false });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(new URL(page.url()).pathname).toBe('/graphql');
    expect(await page.$eval('#open-graphiql', (a) => a.getAttribute('href'))).toBe('/graphql/explorer/graphiql');
    await page.close();
  }, 60_000);
});
