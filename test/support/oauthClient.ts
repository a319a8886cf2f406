import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { createServer, request as httpRequest, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';

/** An OAuth client provider for the MCP SDK that keeps everything in memory and records where it was sent to authorize. */
export class MemoryOAuthProvider implements OAuthClientProvider {
  authorizationUrl: URL | undefined;
  private information: OAuthClientInformationMixed | undefined;
  private saved: OAuthTokens | undefined;
  private verifier = '';

  constructor(
    readonly redirectUrl: string,
    readonly clientMetadata: OAuthClientMetadata,
    readonly clientMetadataUrl?: string,
  ) {}

  state(): string {
    return randomBytes(16).toString('hex');
  }
  clientInformation() {
    return this.information;
  }
  saveClientInformation(information: OAuthClientInformationMixed) {
    this.information = information;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

/** A signed-in person's browser state: the session cookie and the CSRF token. */
export interface Browser {
  cookie: string;
}

const ENTITIES: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" };
const unescape = (value: string) => value.replace(/&(amp|lt|gt|quot|#39);/g, (m) => ENTITIES[m]);

/** The hidden fields of the consent form, as a browser would submit them. */
export function consentFields(html: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const match of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
    fields[unescape(match[1])] = unescape(match[2]);
  return fields;
}

/** The way back to the client a refusal page offers a signed-in person (its link), or null when it offers none. */
export function backLink(html: string): URL | null {
  const href = /<a class="back" href="([^"]+)">/.exec(html)?.[1];
  return href ? new URL(unescape(href)) : null;
}

/** GETs the authorization URL as the signed-in person's browser: the consent page (or a redirect). */
export async function openAuthorization(url: string | URL, browser: Browser | null): Promise<Response> {
  return fetch(url, { redirect: 'manual', headers: browser ? { cookie: browser.cookie } : {} });
}

/** Posts the consent form (hidden fields as served, with changes) and answers the response (a 303 back to the client, or a refusal). */
export async function submitConsent(
  baseUrl: string,
  browser: Browser | null,
  fields: Record<string, string>,
  changes: Record<string, string | null> = {},
): Promise<Response> {
  const form = new URLSearchParams();
  for (const [name, value] of Object.entries({ decision: 'allow', ...fields, ...changes })) if (value !== null) form.set(name, value);
  return fetch(`${baseUrl}/oauth/authorize`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(browser ? { cookie: browser.cookie } : {}) },
    body: form.toString(),
  });
}

/** The person's whole part: open the authorization URL, see the consent page, allow; answers where the browser is sent back to. */
export async function approve(
  baseUrl: string,
  url: string | URL,
  browser: Browser,
  changes: Record<string, string | null> = {},
): Promise<URL> {
  const page = await openAuthorization(url, browser);
  const html = await page.text();
  if (page.status !== 200) throw new Error(`the consent page answered ${page.status}: ${html.slice(0, 300)}`);
  const done = await submitConsent(baseUrl, browser, consentFields(html), changes);
  if (done.status !== 303) throw new Error(`the consent answered ${done.status}: ${(await done.text()).slice(0, 300)}`);
  return new URL(done.headers.get('location')!);
}

/** A self-signed certificate for 127.0.0.1 and localhost (its PEM files in a temporary directory). */
export function selfSignedCertificate(): { certFile: string; keyFile: string; cert: Buffer; key: Buffer } {
  const dir = mkdtempSync(join(tmpdir(), 'wks-cimd-'));
  const certFile = join(dir, 'cert.pem');
  const keyFile = join(dir, 'key.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
      '-keyout',
      keyFile,
      '-out',
      certFile,
    ],
    { stdio: 'ignore' },
  );
  return { certFile, keyFile, cert: readFileSync(certFile), key: readFileSync(keyFile) };
}

/** A served path that answers `302 Found` to `location` (see serveDocuments). */
export class Redirect {
  constructor(readonly location: string) {}
}

/**
 * A served path that answers too slowly (see serveDocuments): the status line and headers at once,
 * then one byte of the document every `everyMs`, never finishing, until the client gives up.
 */
export class Trickle {
  constructor(readonly everyMs = 500) {}
}

/** Answers a Trickle: a byte at a time, so neither the connection nor the socket ever looks idle. */
function trickle(res: ServerResponse, everyMs: number): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.write('{');
  const timer = setInterval(() => res.write(' '), everyMs);
  res.on('close', () => clearInterval(timer));
}

/**
 * An https server on loopback serving JSON documents by path (a client's metadata document);
 * counts requests per path. A path's value may also be a Redirect or a Trickle.
 */
export async function serveDocuments(
  tls: { cert: Buffer; key: Buffer },
  documents: Map<string, unknown>,
): Promise<{ origin: string; hits: Map<string, number>; server: HttpsServer }> {
  const hits = new Map<string, number>();
  const server = createHttpsServer(tls, (req, res) => {
    const path = req.url ?? '/';
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const document = documents.get(path);
    if (document === undefined) {
      res.writeHead(404).end();
      return;
    }
    if (document instanceof Redirect) {
      res.writeHead(302, { location: document.location }).end();
      return;
    }
    if (document instanceof Trickle) return trickle(res, document.everyMs);
    const body = typeof document === 'string' ? document : JSON.stringify(document);
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=600' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { origin: `https://127.0.0.1:${(server.address() as AddressInfo).port}`, hits, server };
}

/** A loopback callback server (a native client's redirect URI): resolves each request's URL. */
export async function callbackServer(): Promise<{ url: string; next(): Promise<URL>; server: Server }> {
  const waiting: ((url: URL) => void)[] = [];
  const server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' }).end('You can close this window.');
    waiting.shift()?.(new URL(req.url ?? '/', 'http://127.0.0.1'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`;
  return { url, next: () => new Promise<URL>((resolve) => waiting.push(resolve)), server };
}

/** A random loopback address (127.x.y.z): a client address of its own, so per-address limits on a shared database start at zero. */
export function loopbackAddress(): string {
  const byte = () => 1 + Math.floor(Math.random() * 250);
  return `127.${byte()}.${byte()}.${byte()}`;
}

/** GETs `url` from `localAddress` (fetch cannot choose the address it connects from), not following redirects. */
export function getFrom(
  url: string,
  localAddress: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { localAddress, headers }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** POSTs JSON from `localAddress` (fetch cannot choose the address it connects from), with extra `headers` if any. */
export function postJsonFrom(
  url: string,
  body: string,
  localAddress: string,
  contentType = 'application/json',
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: any }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'POST', localAddress, headers: { 'content-type': contentType, ...headers } }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text ? JSON.parse(text) : null }));
    });
    req.on('error', reject);
    req.end(body);
  });
}
