import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Context } from 'koa';

// The page helpers every served page shares; the pages that serve assets find them here too.
export { pageHead, sameOriginCsp, sendPage } from '../http/page.js';

export const JS = 'text/javascript; charset=utf-8';
export const CSS = 'text/css; charset=utf-8';

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
