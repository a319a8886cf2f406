import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Context } from 'koa';

export const JS = 'text/javascript; charset=utf-8';
export const CSS = 'text/css; charset=utf-8';

/**
 * The CSP of a page served with its assets from this process: this origin only, no inline script,
 * fonts and icons as data: URLs; `inlineStyles` for renderers that set element styles inline.
 */
export function sameOriginCsp(options: { inlineStyles?: boolean } = {}): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    options.inlineStyles ? "style-src 'self' 'unsafe-inline'" : "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** A file a page loads: a file of an npm package, text of ours, or text made at run time (`make`). */
export interface AssetSource {
  type: string;
  file?: [pkg: string, path: string];
  text?: string;
  make?: () => string;
}

export interface Asset {
  type: string;
  body: Buffer;
  /** Short content digest: the `?v=` of the page's links, and the ETag. */
  hash: string;
}

/**
 * The files of a page served from this process (no CDN), read once on first use. Package files
 * are resolved now, so a missing package fails the start rather than the first page view.
 */
export function assetLoader(sources: Record<string, AssetSource>): () => Promise<Map<string, Asset>> {
  const require = createRequire(import.meta.url);
  const paths = Object.fromEntries(
    Object.entries(sources).map(([name, a]) => [name, a.file && join(dirname(require.resolve(`${a.file[0]}/package.json`)), a.file[1])]),
  );
  let loaded: Promise<Map<string, Asset>> | undefined;
  return () =>
    (loaded ??= Promise.all(
      Object.entries(sources).map(async ([name, a]) => {
        const body = paths[name] ? await readFile(paths[name]) : Buffer.from(a.text ?? a.make?.() ?? '');
        return [name, { type: a.type, body, hash: createHash('sha256').update(body).digest('base64url').slice(0, 12) }] as const;
      }),
    ).then((entries) => new Map(entries)));
}

/** Answers one asset under `csp`: immutable when asked for by its current digest, else revalidated by ETag. */
export function sendAsset(ctx: Context, asset: Asset, csp: string): void {
  ctx.set('Content-Security-Policy', csp);
  ctx.set('ETag', `"${asset.hash}"`);
  ctx.set('Cache-Control', ctx.query.v === asset.hash ? 'public, max-age=31536000, immutable' : 'no-cache');
  ctx.type = asset.type;
  if (ctx.get('if-none-match') === `"${asset.hash}"`) {
    ctx.status = 304;
    return;
  }
  ctx.body = asset.body;
}

/** Answers a page's HTML under `csp`, never cached (its links carry the assets' digests). */
export function sendPage(ctx: Context, html: string, csp: string): void {
  ctx.set('Content-Security-Policy', csp);
  ctx.set('Cache-Control', 'no-cache');
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = html;
}

/** The opening of a served page up to its `</head>`: the same meta tags on every page, then its title and its links. */
export function pageHead(title: string, links: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title} · Workspace Knowledge Service</title>
<link rel="icon" href="data:,">
${links}
</head>`;
}
