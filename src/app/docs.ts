import type { Middleware } from '../http/middleware.js';
import { assetLoader, CSS, JS, sameOriginCsp, sendAsset, sendPage, type Asset } from './pageAssets.js';

const PAGE_PATH = '/docs';
const ASSET_PATH = '/docs/assets/';

/**
 * This origin only. Swagger UI sets element styles inline (hence 'unsafe-inline' for styles, never
 * for scripts) and shows icons as data: URLs; "Try it out" calls this origin's API.
 */
export const DOCS_CSP = sameOriginCsp({ inlineStyles: true });

/** Renders the served document; no validator badge (it would call validator.swagger.io). */
const START_SCRIPT = `'use strict';
window.ui = SwaggerUIBundle({
  url: document.getElementById('docs').dataset.openapi,
  dom_id: '#docs',
  deepLinking: true,
  validatorUrl: null,
  defaultModelsExpandDepth: 0,
  docExpansion: 'list',
  persistAuthorization: false,
  presets: [SwaggerUIBundle.presets.apis],
  layout: 'BaseLayout',
});
`;

const load = assetLoader({
  'swagger-ui.css': { type: CSS, file: ['swagger-ui-dist', 'swagger-ui.css'] },
  'swagger-ui-bundle.js': { type: JS, file: ['swagger-ui-dist', 'swagger-ui-bundle.js'] },
  'start.js': { type: JS, text: START_SCRIPT },
});

/** What the page says until the reference has loaded (and the document's own address). */
const LOADING = 'Loading the API reference… (the OpenAPI document itself: ' + '<a href="/api/v1/openapi.json">/api/v1/openapi.json</a>)';

function page(assets: Map<string, Asset>): string {
  const href = (name: string) => `${ASSET_PATH}${name}?v=${assets.get(name)!.hash}`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>API reference · Workspace Knowledge Service</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${href('swagger-ui.css')}">
<script defer src="${href('swagger-ui-bundle.js')}"></script>
<script defer src="${href('start.js')}"></script>
</head>
<body><div id="docs" data-openapi="/api/v1/openapi.json">${LOADING}</div></body>
</html>
`;
}

/**
 * GET /docs: the API reference, rendered in the browser by Swagger UI (from the swagger-ui-dist
 * package, served under /docs/assets/) from the served OpenAPI document. No key needed, nothing
 * loaded from elsewhere.
 */
export function apiReferencePage(): Middleware {
  return async (ctx, next) => {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next();
    if (ctx.path === PAGE_PATH || ctx.path === `${PAGE_PATH}/`) return sendPage(ctx, page(await load()), DOCS_CSP);
    if (!ctx.path.startsWith(ASSET_PATH)) return next();
    const asset = (await load()).get(ctx.path.slice(ASSET_PATH.length));
    if (!asset) return next(); // the app's 404
    sendAsset(ctx, asset, DOCS_CSP);
  };
}
