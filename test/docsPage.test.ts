// GET /docs: the API reference rendered by Swagger UI from the served OpenAPI document, with its
// scripts from node_modules. Checked over HTTP, then in Debian's headless Chromium (puppeteer-core):
// every request the page makes stays on the service's origin and every operation is shown.
// Without chromium the browser test is skipped, saying so, except on CI (CI set), where it fails.
import type { Browser } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { describeInBrowser, launchChromium, recordPage, requestsElsewhere, screenshot } from './support/browser.js';

let app: TestApp;
let operations: number;
beforeAll(async () => {
  app = await startTestApp();
  const doc = (await (await fetch(`${app.url}/api/v1/openapi.json`)).json()) as { paths: Record<string, object> };
  operations = Object.values(doc.paths).reduce((n, ops) => n + Object.keys(ops).length, 0);
});
afterAll(async () => app?.close());

describe('/docs over HTTP', () => {
  it('answers the page without a key, under a CSP of this origin only, with its assets cacheable by digest', async () => {
    const res = await fetch(`${app.url}/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toMatch(/https?:|script-src[^;]*unsafe/);
    const html = await res.text();
    expect(html).not.toMatch(/https?:\/\//);
    expect(html).not.toMatch(/<script>/); // no inline script
    const links = [...html.matchAll(/(?:href|src)="(\/docs\/assets\/[^"]+)"/g)].map((m) => m[1]);
    expect(links).toHaveLength(3);
    for (const link of links) {
      const asset = await fetch(`${app.url}${link}`);
      expect(asset.status, link).toBe(200);
      expect(asset.headers.get('content-type'), link).toMatch(/\.css\?/.test(link) ? /^text\/css/ : /^text\/javascript/);
      expect(asset.headers.get('cache-control'), link).toContain('immutable');
      expect((await fetch(`${app.url}${link}`, { headers: { 'if-none-match': asset.headers.get('etag')! } })).status).toBe(304);
    }
    for (const path of ['/docs/assets/nope.js', '/docs/assets/..%2fpackage.json', '/docs/assets/__proto__']) {
      expect((await fetch(`${app.url}${path}`)).status, path).toBe(404);
    }
    expect((await fetch(`${app.url}/docs`, { method: 'POST' })).status).toBe(404);
  });
});

describeInBrowser('docsPage.test.ts', '/docs in headless Chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => browser?.close());

  it('renders every operation of the served document, loading nothing from elsewhere', async () => {
    const page = await browser.newPage();
    await page.setViewport({ width: 1280, height: 900 });
    const record = recordPage(page);
    await page.goto(`${app.url}/docs`, { waitUntil: 'networkidle0' });
    await page.waitForSelector('.opblock', { timeout: 20_000 });
    expect(await page.$$eval('.opblock', (blocks) => blocks.length)).toBe(operations);
    expect(await page.$eval('.info .title', (e) => e.textContent)).toContain('Workspace Knowledge Service');

    // Open one operation: its example request body is shown.
    await page.click('#operations-Memory-memory_put_note .opblock-summary');
    await page.waitForFunction(
      () => document.querySelector('#operations-Memory-memory_put_note')?.textContent?.includes('runbooks/deploy'),
      {
        timeout: 10_000,
      },
    );
    await screenshot(page, 'docs');

    const origin = new URL(app.url).origin;
    expect(requestsElsewhere(record, origin)).toEqual([]);
    expect(record.requests).toContain(`${origin}/api/v1/openapi.json`);
    expect(record.problems).toEqual([]);
  }, 60_000);
});
