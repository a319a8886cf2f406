import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PERMISSIONS, ROLES, roleColumn } from '../auth/permissions.js';
import { EVENT_TYPES, TARGET_TYPES } from '../webhooks/events.js';
import type { Middleware } from '../http/middleware.js';
import { CSS, JS, pageHead, sameOriginCsp, sendAsset, sendPage, type Asset } from './pageAssets.js';

const PAGE_PATH = '/console';
const ASSET_PATH = '/console/assets/';

/** This origin only (its GraphQL over HTTP and WebSocket), no inline script or style. */
export const CONSOLE_CSP = sameOriginCsp();

/**
 * The console's own files: plain ES modules and one style sheet, read as they are (no build step).
 * They live in the project's top-level console/ folder, two levels above this module in both layouts:
 * console/ beside src/ when run from the sources, dist/console/ beside dist/src/ after `npm run build`
 * (which compiles src/ into dist/src/ and copies the folder to dist/console/).
 */
const DIR = fileURLToPath(new URL('../../console/', import.meta.url));
const TYPES: Record<string, string> = { '.js': JS, '.css': CSS };
const FILE_NAME = /^[\w-]+\.(?:js|css)$/;
const ENTRY = 'main.js';
const STYLE = 'console.css';
/** The sign-in page's own script (not part of the console's page). */
export const SIGN_IN_SCRIPT = 'signInPage.js';

/** A static `import … from './x.js'`, `export … from './x.js'` or `import './x.js'` between console modules. */
const RELATIVE_IMPORT = /(\b(?:from|import)\s*)(['"])\.\/([\w-]+\.js)\2/g;

const digest = (body: Buffer) => createHash('sha256').update(body).digest('base64url').slice(0, 12);

/**
 * Reads every file of the console once. A module's imports of its siblings are rewritten to name
 * their digest (`./diff.js?v=…`), so every file the page loads is addressed by its content and
 * cached for good, and a changed module changes the address of each module importing it.
 */
async function loadAssets(names: string[]): Promise<Map<string, Asset>> {
  const sources = new Map(await Promise.all(names.map(async (name) => [name, await readFile(join(DIR, name), 'utf8')] as const)));
  const assets = new Map<string, Asset>();
  const build = (name: string, importers: string[]): Asset => {
    const built = assets.get(name);
    if (built) return built;
    if (importers.includes(name)) throw new Error(`console modules import each other in a cycle: ${[...importers, name].join(' → ')}`);
    const source = sources.get(name);
    if (source === undefined) throw new Error(`console/${importers.at(-1)} imports ./${name}, which does not exist`);
    const text = name.endsWith('.js')
      ? source.replace(RELATIVE_IMPORT, (_all, keyword: string, quote: string, dep: string) => {
          return `${keyword}${quote}./${dep}?v=${build(dep, [...importers, name]).hash}${quote}`;
        })
      : source;
    const body = Buffer.from(text);
    const asset: Asset = { type: TYPES[extname(name)], body, hash: digest(body) };
    assets.set(name, asset);
    return asset;
  };
  for (const name of names) build(name, []);
  return assets;
}

const escapeAttribute = (text: string) => text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

/**
 * The service's own lists of names the console offers (read by its pageNames.js), so it never holds a
 * copy of them: permissions, events, and the role table, a column per role (who may open a screen,
 * said in words when someone else opens it).
 */
const NAMES: Record<string, readonly string[]> = {
  permissions: PERMISSIONS,
  'event-types': EVENT_TYPES,
  'target-types': TARGET_TYPES,
  roles: ROLES,
  ...Object.fromEntries(ROLES.map((role) => [`role-${role}`, roleColumn(role)])),
};
const nameAttributes = Object.entries(NAMES)
  .map(([name, list]) => `data-${name}="${escapeAttribute(list.join(' '))}"`)
  .join(' ');

function page(assets: Map<string, Asset>): string {
  const href = (name: string) => `${ASSET_PATH}${name}?v=${assets.get(name)!.hash}`;
  const modules = [...assets.keys()].filter((name) => name.endsWith('.js') && name !== ENTRY && name !== SIGN_IN_SCRIPT).sort();
  const links = [
    `<link rel="stylesheet" href="${href(STYLE)}">`,
    ...modules.map((name) => `<link rel="modulepreload" href="${href(name)}">`),
    `<script type="module" src="${href(ENTRY)}"></script>`,
  ].join('\n');
  return `${pageHead('Review console', links)}
<body ${nameAttributes}>
<a class="skip-link" href="#main">Skip to content</a>
<header class="topbar">
<p class="brand">Review console <span class="brand-sub">Workspace Knowledge Service</span></p>
<div id="context" class="context"></div>
<div id="session" class="session"></div>
</header>
<nav id="nav" class="tabs" aria-label="Console screens" hidden></nav>
<main id="main" tabindex="-1"><p class="loading">Loading the review console…</p><noscript><p>The review console needs JavaScript.</p></noscript></main>
<div id="announcer" class="sr-only" role="status" aria-live="polite"></div>
</body>
</html>
`;
}

/** The console's files, read once on first use (listed now: a build that lost the files fails the start, not the first page view). */
export function consoleAssets(): () => Promise<Map<string, Asset>> {
  const names = readdirSync(DIR)
    .filter((name) => FILE_NAME.test(name))
    .sort();
  for (const required of [ENTRY, STYLE, SIGN_IN_SCRIPT]) {
    if (!names.includes(required)) throw new Error(`the review console's ${required} is missing from ${DIR}`);
  }
  let loaded: Promise<Map<string, Asset>> | undefined;
  return () => (loaded ??= loadAssets(names));
}

/** The address of one of the console's files, by its digest. */
export async function consoleAssetHref(load: () => Promise<Map<string, Asset>>, name: string): Promise<string> {
  return `${ASSET_PATH}${name}?v=${(await load()).get(name)!.hash}`;
}

/**
 * GET /console: the review console, a single-page app (plain JavaScript and CSS from
 * the top-level console/ folder, served under /console/assets/) that signs in with the admin token and speaks
 * GraphQL only: POST /graphql and subscriptions over a WebSocket on /graphql. Nothing is loaded
 * from elsewhere, and no script or style is inline.
 */
export function consolePage(load = consoleAssets()): Middleware {
  return async (ctx, next) => {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next();
    if (ctx.path === PAGE_PATH || ctx.path === `${PAGE_PATH}/`) return sendPage(ctx, page(await load()), CONSOLE_CSP);
    if (!ctx.path.startsWith(ASSET_PATH)) return next();
    const name = ctx.path.slice(ASSET_PATH.length);
    const asset = FILE_NAME.test(name) ? (await load()).get(name) : undefined;
    if (!asset) return next(); // the app's 404
    sendAsset(ctx, asset, CONSOLE_CSP);
  };
}
