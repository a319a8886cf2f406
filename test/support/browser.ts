// Debian's headless Chromium, driven by puppeteer-core (which downloads nothing), for the tests of the
// pages the service serves (/docs, GraphiQL, /console). Without chromium the browser tests are skipped,
// saying so, except on CI (CI set, as .ci/run does, which installs it), where they fail.
import { existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { describe, expect } from 'vitest';

/** The browser binary: CHROMIUM_PATH, else Debian's (or Ubuntu's) chromium. */
export const CHROMIUM = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => p && existsSync(p));

/** Where the browser tests leave their screenshots (git-ignored). */
export const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/', import.meta.url));

/**
 * `describe` for tests that need the browser: skipped, with a warning naming `file`, when chromium is
 * missing locally; run (and failing in `launchChromium`) when it is missing on CI.
 */
export function describeInBrowser(file: string, name: string, tests: () => void): void {
  if (!CHROMIUM) console.warn(`\n!!! ${file}: "${name}" is SKIPPED: no chromium (apt-get install chromium) !!!\n`);
  describe.skipIf(!CHROMIUM && !process.env.CI)(name, tests);
}

/**
 * Waits until the console shows a signed-in person the screen `hash` (the workspace choice, unless
 * they have one workspace or chose one before), or an item of it (`#/proposals/12`): the address, and
 * the header naming them (the fragment changes a task before hashchange draws the header).
 */
export async function waitForSignedInConsole(page: Page, timeout: number, hash = '#/workspaces'): Promise<void> {
  await page.waitForFunction(
    (expected: string) =>
      location.pathname === '/console' &&
      (location.hash === expected || location.hash.startsWith(`${expected}/`)) &&
      Boolean(document.getElementById('who')?.textContent),
    { timeout },
    hash,
  );
}

/** Starts headless Chromium (call in beforeAll; close it in afterAll). */
export function launchChromium(): Promise<Browser> {
  expect(CHROMIUM, 'chromium is required on CI (.ci/run installs it)').toBeDefined();
  return puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    // Root on CI needs --no-sandbox, small containers a /tmp-backed shared memory; the rest keeps Chromium's own traffic off.
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-dev-shm-usage',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
    ],
  });
}

/** What a page did: every URL it requested, and its script errors and console errors. */
export interface PageRecord {
  requests: string[];
  problems: string[];
}

/**
 * Records a page's requests and problems from now on. `ignore` drops console errors that are part
 * of the test (e.g. Chromium's "Failed to load resource" line for an answer the test asked to be a 401).
 */
export function recordPage(page: Page, options: { ignore?: RegExp } = {}): PageRecord {
  const record: PageRecord = { requests: [], problems: [] };
  page.on('request', (r) => record.requests.push(r.url()));
  page.on('pageerror', (e) => record.problems.push(`page error: ${String(e)}`));
  page.on('console', (m) => {
    if (m.type() === 'error' && !options.ignore?.test(m.text())) record.problems.push(`console: ${m.text()}`);
  });
  return record;
}

/** The requests that left `origin` (data: URLs are the page's own). */
export function requestsElsewhere(record: PageRecord, origin: string): string[] {
  return record.requests.filter((url) => !url.startsWith(`${origin}/`) && !url.startsWith('data:'));
}

/** Saves a screenshot as test-artifacts/<name>.png (name may hold a folder: "console/sign-in"); returns its path. */
export async function screenshot(page: Page, name: string, options: { fullPage?: boolean } = {}): Promise<string> {
  const path = `${ARTIFACTS}${name}.png`;
  mkdirSync(dirname(path), { recursive: true });
  await page.screenshot({ path, fullPage: options.fullPage ?? false });
  return path;
}
