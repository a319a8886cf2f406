/** What every HTML page the service serves shares: its head, its answer and its Content Security Policy. */
import type { Context } from 'koa';

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
