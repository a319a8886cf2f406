import { introspectionFromSchema, type GraphQLSchema } from 'graphql';
import type { Context } from 'koa';
import type { Middleware } from '../http/middleware.js';
import { assetLoader, CSS, JS, pageHead, sameOriginCsp, sendAsset, sendPage, type Asset, type AssetSource } from './pageAssets.js';
import { GRAPHQL_EXPLORERS } from '../config.js';

/**
 * GRAPHQL_EXPLORER: what GET /graphql shows a browser. `graphiql` (the default): GraphiQL, served by this
 * process, which offers Apollo Sandbox beside it; `sandbox`: Apollo Sandbox from Apollo's CDN, which
 * gives way to GraphiQL when the browser cannot reach it; `off`: no page.
 */
export { GRAPHQL_EXPLORERS };
export type GraphQLExplorer = (typeof GRAPHQL_EXPLORERS)[number];
/** The explorer when GRAPHQL_EXPLORER is unset: the one that needs no network. */
export const DEFAULT_EXPLORER: GraphQLExplorer = 'graphiql';

const ASSET_PATH = '/graphql/explorer/assets/';
/** Each explorer's own address, whichever one GET /graphql shows. */
export const GRAPHIQL_PATH = '/graphql/explorer/graphiql';
export const SANDBOX_PATH = '/graphql/explorer/sandbox';
/** Where the Sandbox page goes when Apollo's CDN cannot be reached. */
const FALLBACK = `${GRAPHIQL_PATH}?sandbox=unreachable`;

/** Apollo's embeddable Sandbox (the version Apollo Server 5's own landing page loads), and the frame it opens. */
const SANDBOX_SCRIPT = 'https://embeddable-sandbox.cdn.apollographql.com/v2/embeddable-sandbox.umd.production.min.js';
const SANDBOX_FRAME = 'https://sandbox.embed.apollographql.com';
/** How long the Sandbox page waits for Apollo's CDN (a closed network may never answer) before it opens GraphiQL. */
export const SANDBOX_WAIT_MS = 8000;

/** GraphiQL's page: nothing but this origin, no inline script or style (the CSS's fonts and icons are data: URLs). */
export const EXPLORER_CSP = sameOriginCsp();
/** The Sandbox page: this origin, plus Apollo's script and the frame it opens (and nothing inline). */
export const SANDBOX_CSP = EXPLORER_CSP.replace("script-src 'self'", `script-src 'self' ${new URL(SANDBOX_SCRIPT).origin}`).replace(
  "object-src 'none'",
  `frame-src ${SANDBOX_FRAME}; object-src 'none'`,
);

const DEFAULT_QUERY = `# GraphiQL, served by this service: the page loads nothing from elsewhere.
# Signed in to the console (/console/sign-in)? Operations run as you, by your role:
#   { viewer { email role allowed } }
# Automation may instead open "Headers" below and send the admin token or an agent key:
#   { "Authorization": "Bearer svc_pat_…" }
# Headers are not stored in the browser.

{
  __typename
}
`;

/**
 * Starts GraphiQL 4 (its UMD build, on React 18's) against /graphql, wherever the page is served. Its
 * schema query is answered from schema.json: GraphiQL's own introspection query (depth 21) is past
 * /graphql's depth limit of 15.
 */
const GRAPHIQL_SCRIPT = `'use strict';
(async () => {
  const root = document.getElementById('graphiql');
  // A signed-in person's session: its cookie goes along by itself, its CSRF token in a header.
  const session = await fetch('/console/session', { credentials: 'same-origin', cache: 'no-store' })
    .then((res) => (res.ok ? res.json() : null))
    .catch(() => null);
  const headers = session?.signedIn ? { 'x-csrf-token': session.csrf } : {};
  const remote = GraphiQL.createFetcher({ url: location.origin + '/graphql', headers });
  let schema;
  const fetcher = (params, options) =>
    params.operationName === 'GraphiQLServedSchema'
      ? (schema ??= fetch(new URL(root.dataset.schema, location.href)).then((res) => res.json()))
      : remote(params, options);
  ReactDOM.createRoot(root).render(
    React.createElement(GraphiQL, {
      fetcher,
      introspectionQueryName: 'GraphiQLServedSchema',
      defaultQuery: ${JSON.stringify(DEFAULT_QUERY)},
      defaultEditorToolsVisibility: 'headers',
      shouldPersistHeaders: false,
    }),
  );
})();
`;

/**
 * Loads Apollo Sandbox from Apollo's CDN into the page. When the script cannot be loaded (an error at
 * once, or no answer within the wait), the browser goes to GraphiQL, served by this service, which says why.
 */
const SANDBOX_START = `'use strict';
(() => {
  const root = document.getElementById('sandbox');
  let settled = false;
  const fallBack = () => {
    if (settled) return;
    settled = true;
    location.replace(root.dataset.fallback);
  };
  const timer = setTimeout(fallBack, Number(root.dataset.waitMs));
  const script = document.createElement('script');
  script.src = root.dataset.script;
  script.addEventListener('error', fallBack);
  script.addEventListener('load', () => {
    if (settled) return;
    if (typeof window.EmbeddedSandbox !== 'function') return fallBack();
    settled = true;
    clearTimeout(timer);
    root.replaceChildren();
    root.classList.add('loaded');
    new window.EmbeddedSandbox({
      target: '#sandbox',
      initialEndpoint: location.origin + '/graphql',
      endpointIsEditable: false,
      runTelemetry: false,
      allowDynamicStyles: false,
    });
  });
  document.head.append(script);
})();
`;

const PAGE_STYLE = `html, body { height: 100%; margin: 0; }
body { display: flex; flex-direction: column; font: 14px/1.4 system-ui, sans-serif; }
.explorer-bar { display: flex; flex-wrap: wrap; gap: 0.25rem 1rem; align-items: baseline; padding: 0.4rem 1rem; }
.explorer-bar { background: #f4f5f7; border-bottom: 1px solid #d9dce3; color: #1d2330; }
.explorer-bar a { color: #1f5fd1; }
.explorer-bar .hint { color: #5b6270; }
.explorer-notice { margin: 0; padding: 0.5rem 1rem; background: #fff4d6; border-bottom: 1px solid #e8c96a; color: #5a4100; }
#graphiql, #sandbox { flex: 1; min-height: 0; }
#sandbox:not(.loaded) { padding: 1rem; }
#sandbox iframe { width: 100%; height: 100%; border: 0; }
`;

/** Every file the pages load, by the name it is served under (the schema's introspection is added at run time). */
const ASSETS: Record<string, AssetSource> = {
  'schema.json': { type: 'application/json; charset=utf-8' },
  'react.js': { type: JS, file: ['react', 'umd/react.production.min.js'] },
  'react-dom.js': { type: JS, file: ['react-dom', 'umd/react-dom.production.min.js'] },
  'graphiql.js': { type: JS, file: ['graphiql', 'graphiql.min.js'] },
  'graphiql.css': { type: CSS, file: ['graphiql', 'graphiql.min.css'] },
  'start.js': { type: JS, text: GRAPHIQL_SCRIPT },
  'sandbox.js': { type: JS, text: SANDBOX_START },
  'page.css': { type: CSS, text: PAGE_STYLE },
};

/** The sentence the GraphiQL page shows after the Sandbox page gave way to it (a fixed text: nothing is taken from the URL). */
const UNREACHABLE =
  'Apollo Sandbox could not be loaded: this browser cannot reach Apollo’s CDN. This is GraphiQL, served by the service itself.';

type Href = (name: string) => string;

function graphiqlPage(href: Href, notice: string | null): string {
  const links = [
    `<link rel="stylesheet" href="${href('graphiql.css')}">`,
    `<link rel="stylesheet" href="${href('page.css')}">`,
    ...['react.js', 'react-dom.js', 'graphiql.js', 'start.js'].map((name) => `<script defer src="${href(name)}"></script>`),
  ].join('\n');
  return `${pageHead('GraphiQL', links)}
<body>
<header class="explorer-bar"><strong>GraphiQL</strong><span class="hint">served by this service: it works without internet access</span>
<a id="open-sandbox" href="${SANDBOX_PATH}">Open Apollo Sandbox instead</a>
<span class="hint">(loads from Apollo’s CDN; GraphiQL comes back when it cannot be reached)</span></header>
${notice ? `<p class="explorer-notice" id="explorer-notice" role="status">${notice}</p>\n` : ''}\
<div id="graphiql" data-schema="${href('schema.json')}">Loading GraphiQL…</div>
</body>
</html>
`;
}

function sandboxPage(href: Href): string {
  const links = [`<link rel="stylesheet" href="${href('page.css')}">`, `<script defer src="${href('sandbox.js')}"></script>`].join('\n');
  return `${pageHead('Apollo Sandbox', links)}
<body>
<header class="explorer-bar"><strong>Apollo Sandbox</strong><span class="hint">loaded from Apollo’s CDN</span>
<a id="open-graphiql" href="${GRAPHIQL_PATH}">Open GraphiQL instead</a>
<span class="hint">(served by this service; works without internet access)</span></header>
<div id="sandbox" data-script="${SANDBOX_SCRIPT}" data-fallback="${FALLBACK}" data-wait-ms="${SANDBOX_WAIT_MS}">
<p>Loading Apollo Sandbox from Apollo’s CDN… If this browser cannot reach it, GraphiQL (served by this service) opens instead.</p>
<noscript><p>The explorers need JavaScript.</p></noscript>
</div>
</body>
</html>
`;
}

/** A browser navigating to /graphql (Apollo's rule: a GET that prefers HTML to JSON). */
function wantsPage(ctx: Context): boolean {
  return ctx.method === 'GET' && ctx.accepts('application/json', 'application/graphql-response+json', 'text/html') === 'text/html';
}

/** The page to answer at `ctx` (the chosen explorer at /graphql, either one at its own address), or null. */
function pageAt(ctx: Context, chosen: GraphQLExplorer): 'graphiql' | 'sandbox' | null {
  if (ctx.path === '/graphql') return wantsPage(ctx) ? (chosen === 'sandbox' ? 'sandbox' : 'graphiql') : null;
  if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return null;
  if (ctx.path === GRAPHIQL_PATH) return 'graphiql';
  if (ctx.path === SANDBOX_PATH) return 'sandbox';
  return null;
}

function sendExplorer(ctx: Context, which: 'graphiql' | 'sandbox', assets: Map<string, Asset>): void {
  const href: Href = (name) => `${ASSET_PATH}${name}?v=${assets.get(name)!.hash}`;
  if (which === 'sandbox') return sendPage(ctx, sandboxPage(href), SANDBOX_CSP);
  sendPage(ctx, graphiqlPage(href, ctx.query.sandbox === 'unreachable' ? UNREACHABLE : null), EXPLORER_CSP);
}

/**
 * GET /graphql from a browser answers the chosen explorer's page; each also has its own address
 * (GRAPHIQL_PATH, SANDBOX_PATH), so each can offer the other. GraphiQL's scripts and styles (GraphiQL,
 * React, ReactDOM from node_modules) and the schema's introspection are served under
 * /graphql/explorer/assets/, under a CSP that allows this origin only, so using it sends no request
 * off the machine. The Sandbox page loads Apollo's script from its CDN and, when that fails, sends
 * the browser to GraphiQL: a closed network never shows a blank page.
 */
export function graphqlExplorer(schema: GraphQLSchema, chosen: GraphQLExplorer): Middleware {
  const load = assetLoader({
    ...ASSETS,
    // The answer GraphiQL's introspection query would get.
    'schema.json': {
      ...ASSETS['schema.json'],
      make: () => JSON.stringify({ data: introspectionFromSchema(schema, { inputValueDeprecation: true, specifiedByUrl: true }) }),
    },
  });
  return async (ctx, next) => {
    const which = pageAt(ctx, chosen);
    if (which) return sendExplorer(ctx, which, await load());
    if (!ctx.path.startsWith(ASSET_PATH) || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) return next();
    const name = ctx.path.slice(ASSET_PATH.length);
    const asset = Object.hasOwn(ASSETS, name) ? (await load()).get(name) : undefined;
    if (!asset) return next(); // the app's 404
    sendAsset(ctx, asset, EXPLORER_CSP);
  };
}
