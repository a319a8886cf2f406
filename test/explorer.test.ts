// GRAPHQL_EXPLORER=graphiql: the GraphiQL page in a real headless Chromium (Debian's `chromium`, driven by
// puppeteer-core, which downloads nothing). Every request the page makes must stay on the service's origin.
// Without chromium the browser test is skipped, saying so, except on CI (CI set, as .ci/run does), where it fails.
import type { Browser } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { describeInBrowser, launchChromium, recordPage, requestsElsewhere, screenshot } from './support/browser.js';
import { createMember, createOrg } from './support/factories.js';
import { signIn } from './support/signIn.js';
import { freshEm } from '../src/db/orm.js';
import { sql } from '../src/db/sql.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ explorer: 'graphiql' });
});
afterAll(async () => {
  await app?.close();
});

describe('GraphiQL over HTTP', () => {
  it('answers a browser with the page under a CSP of this origin only, and JSON clients with GraphQL', async () => {
    const page = await fetch(`${app.url}/graphql`, { headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = page.headers.get('content-security-policy')!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).not.toMatch(/https?:|unsafe/);
    const html = await page.text();
    expect(html).not.toMatch(/https?:\/\//);
    expect(html).not.toMatch(/<script>|<style|style=/); // nothing inline

    const json = await fetch(`${app.url}/graphql?query=${encodeURIComponent('{ __typename }')}`, {
      headers: { accept: 'application/json', 'apollo-require-preflight': 'true' },
    });
    expect(await json.json()).toEqual({ data: { __typename: 'Query' } });
  });

  it('serves the bundles from node_modules with their types, cacheable by digest; unknown names are 404s', async () => {
    const html = await (await fetch(`${app.url}/graphql`, { headers: { accept: 'text/html' } })).text();
    const links = [...html.matchAll(/(?:href|src|data-schema)="(graphql\/explorer\/assets\/[^"]+)"/g)].map((m) => m[1]);
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

  it('is not served when GRAPHQL_EXPLORER=off', async () => {
    const off = await startTestApp({ explorer: 'off' });
    try {
      const res = await fetch(`${off.url}/graphql`, { headers: { accept: 'text/html' } });
      expect(await res.text()).not.toMatch(/<html|graphiql|sandbox/i);
      expect((await fetch(`${off.url}/graphql/explorer/assets/graphiql.js`)).status).toBe(404);
    } finally {
      await off.close();
    }
  });
});

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
});
