import { introspectionFromSchema, type GraphQLSchema } from 'graphql';
import type { Context } from 'koa';
import type { Middleware } from '../http/middleware.js';
import { assetLoader, CSS, JS, sameOriginCsp, sendAsset, sendPage, type Asset, type AssetSource } from './pageAssets.js';
import { GRAPHQL_EXPLORERS } from '../config.js';

/** GRAPHQL_EXPLORER: what GET /graphql shows a browser. Apollo Sandbox comes from Apollo's CDN; GraphiQL from this process. */
export { GRAPHQL_EXPLORERS };
/** The chosen page, or Apollo's production landing page (the default under NODE_ENV=production). */
export type GraphQLExplorer = (typeof GRAPHQL_EXPLORERS)[number] | 'apollo-production';

const ASSET_PATH = '/graphql/explorer/assets/';

/** Nothing but this origin: no CDN, no inline script or style (the CSS's fonts and icons are data: URLs). */
export const EXPLORER_CSP = sameOriginCsp();

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
 * Starts GraphiQL 4 (its UMD build, on React 18's) against the endpoint that served the page. Its schema
 * query is answered from schema.json: GraphiQL's own introspection query (depth 21) is past /graphql's
 * depth limit of 15.
 */
const START_SCRIPT = `'use strict';
(async () => {
  const root = document.getElementById('graphiql');
  // A signed-in person's session: its cookie goes along by itself, its CSRF token in a header.
  const session = await fetch('/console/session', { credentials: 'same-origin', cache: 'no-store' })
    .then((res) => (res.ok ? res.json() : null))
    .catch(() => null);
  const headers = session?.signedIn ? { 'x-csrf-token': session.csrf } : {};
  const remote = GraphiQL.createFetcher({ url: location.origin + location.pathname, headers });
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

const PAGE_STYLE = 'html, body { height: 100%; margin: 0; } #graphiql { height: 100vh; }\n';

/** Every file the page loads, by the name it is served under (the schema's introspection is added at run time). */
const ASSETS: Record<string, AssetSource> = {
  'schema.json': { type: 'application/json; charset=utf-8' },
  'react.js': { type: JS, file: ['react', 'umd/react.production.min.js'] },
  'react-dom.js': { type: JS, file: ['react-dom', 'umd/react-dom.production.min.js'] },
  'graphiql.js': { type: JS, file: ['graphiql', 'graphiql.min.js'] },
  'graphiql.css': { type: CSS, file: ['graphiql', 'graphiql.min.css'] },
  'start.js': { type: JS, text: START_SCRIPT },
  'page.css': { type: CSS, text: PAGE_STYLE },
};

function page(assets: Map<string, Asset>): string {
  const href = (name: string) => `graphql/explorer/assets/${name}?v=${assets.get(name)!.hash}`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>GraphiQL · Workspace Knowledge Service</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${href('graphiql.css')}">
<link rel="stylesheet" href="${href('page.css')}">
<script defer src="${href('react.js')}"></script>
<script defer src="${href('react-dom.js')}"></script>
<script defer src="${href('graphiql.js')}"></script>
<script defer src="${href('start.js')}"></script>
</head>
<body><div id="graphiql" data-schema="${href('schema.json')}">Loading GraphiQL…</div></body>
</html>
`;
}

/** A browser navigating to /graphql (Apollo's rule: a GET that prefers HTML to JSON). */
function wantsPage(ctx: Context): boolean {
  return ctx.method === 'GET' && ctx.accepts('application/json', 'application/graphql-response+json', 'text/html') === 'text/html';
}

/**
 * GRAPHQL_EXPLORER=graphiql: GET /graphql from a browser answers a GraphiQL page whose scripts and
 * styles (GraphiQL, React, ReactDOM from node_modules) and the schema's introspection are served under /graphql/explorer/assets/,
 * under a CSP that allows this origin only, so using it sends no request off the machine.
 */
export function graphiqlExplorer(schema: GraphQLSchema): Middleware {
  const load = assetLoader({
    ...ASSETS,
    // The answer GraphiQL's introspection query would get.
    'schema.json': {
      ...ASSETS['schema.json'],
      make: () => JSON.stringify({ data: introspectionFromSchema(schema, { inputValueDeprecation: true, specifiedByUrl: true }) }),
    },
  });
  return async (ctx, next) => {
    if (ctx.path === '/graphql' && wantsPage(ctx)) {
      sendPage(ctx, page(await load()), EXPLORER_CSP);
      return;
    }
    if (!ctx.path.startsWith(ASSET_PATH) || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) return next();
    const name = ctx.path.slice(ASSET_PATH.length);
    const asset = Object.hasOwn(ASSETS, name) ? (await load()).get(name) : undefined;
    if (!asset) return next(); // the app's 404
    sendAsset(ctx, asset, EXPLORER_CSP);
  };
}
