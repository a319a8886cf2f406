// A real OpenID Connect provider (the `oidc-provider` package) on loopback, for the sign-in tests:
// authorization code with PKCE, ID tokens signed with its own keys. Its sign-in page asks for an
// e-mail address (the account: `sub` and `email`, verified unless it starts with "unverified") and
// whether a second factor was used (the ID token's `amr`: ["pwd", "otp", "mfa"], else ["pwd"]).
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import Provider from 'oidc-provider';
import { expect } from 'vitest';
import type { ServerOptions } from '../../src/server.js';
import { startTestApp, type TestApp } from './app.js';
import type { SignedInPerson } from './signIn.js';
import { testLogger } from './internalErrors.js';

export interface TestIdentityProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Starts answering, for a service whose sign-in callback is `callbackUrl`. */
  serve(callbackUrl: string): void;
  close(): Promise<void>;
}

const escapeHtml = (text: string) => text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

async function formBody(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

function loginPage(uid: string, client: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>Test identity provider</title></head>
<body style="font-family: sans-serif; max-width: 30rem; margin: 3rem auto">
<h1>Test identity provider</h1><p>Sign in to <strong>${escapeHtml(client)}</strong></p>
<form method="post" action="/interaction/${escapeHtml(uid)}/login">
<p><label>E-mail <input id="email" name="email" type="email" required></label></p>
<p><label><input id="mfa" name="mfa" type="checkbox" value="yes"> I used my second factor</label></p>
<p><button id="submit" type="submit">Sign in</button></p></form></body></html>`;
}

/** Starts the provider's HTTP server on loopback; `serve` configures it once the service's address is known. */
export async function startIdentityProvider(): Promise<TestIdentityProvider> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientId = 'wks-console';
  const clientSecret = 'test-client-secret-0123456789abcdef';
  return {
    issuer,
    clientId,
    clientSecret,
    serve(callbackUrl: string) {
      const provider = new Provider(issuer, {
        clients: [
          {
            client_id: clientId,
            client_secret: clientSecret,
            redirect_uris: [callbackUrl],
            response_types: ['code'],
            grant_types: ['authorization_code'],
          },
        ],
        claims: { acr: null, amr: null, auth_time: null, sid: null, iss: null, openid: ['sub', 'amr'], email: ['email', 'email_verified'] },
        pkce: { required: () => true },
        ttl: { IdToken: 600, AccessToken: 600, AuthorizationCode: 60, Interaction: 600, Session: 3600, Grant: 3600 },
        features: { devInteractions: { enabled: false } },
        interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
        findAccount: (_ctx: unknown, id: string) => ({
          accountId: id,
          claims: () => ({ sub: id, email: id, email_verified: !id.startsWith('unverified') }),
        }),
      });
      provider.proxy = false;
      const handler = provider.callback();
      server.on('request', (req, res) => {
        void (async () => {
          const match = /^\/interaction\/([\w-]+)(\/login)?$/.exec(req.url ?? '');
          if (!match) return handler(req, res);
          const details = await provider.interactionDetails(req, res);
          if (!match[2]) {
            res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
            return res.end(loginPage(details.uid, String(details.params.client_id)));
          }
          const form = await formBody(req);
          const accountId = form.get('email') ?? '';
          const grant = new provider.Grant({ accountId, clientId });
          grant.addOIDCScope('openid email');
          const grantId = await grant.save();
          const amr = form.get('mfa') === 'yes' ? ['pwd', 'otp', 'mfa'] : ['pwd'];
          await provider.interactionFinished(
            req,
            res,
            { login: { accountId, amr }, consent: { grantId } },
            { mergeWithLastSubmission: false },
          );
        })().catch((error: unknown) => {
          res.writeHead(500);
          res.end(String(error));
        });
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * A test app that signs people in through a fresh identity provider, logging every request at
 * debug level into `logLines` (the sign-in tests check that no secret reaches a log line);
 * `overrides` are the app's other options (a `logger` given there replaces that log).
 */
export async function startAppWithIdentityProvider(
  overrides: Partial<ServerOptions> = {},
): Promise<{ app: TestApp; idp: TestIdentityProvider; logLines: string[] }> {
  const idp = await startIdentityProvider();
  const logLines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logLines.push(chunk.toString());
      done();
    },
  });
  try {
    const app = await startTestApp({
      oidc: { issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret, name: 'Test IdP' },
      logger: testLogger({ level: 'debug', destination: sink }),
      ...overrides,
    });
    idp.serve(`${app.url}/console/sign-in/oidc/callback`);
    return { app, idp, logLines };
  } catch (error) {
    await idp.close();
    throw error;
  }
}

/** A browser's cookies, per origin (enough for these two loopback servers). */
export class Jar {
  private readonly cookies = new Map<string, Map<string, string>>();
  take(url: string, res: Response): void {
    const origin = new URL(url).origin;
    const jar = this.cookies.get(origin) ?? new Map<string, string>();
    this.cookies.set(origin, jar);
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair.indexOf('=');
      const value = pair.slice(eq + 1);
      if (value && !/Max-Age=0/i.test(line)) jar.set(pair.slice(0, eq), value);
      else jar.delete(pair.slice(0, eq));
    }
  }
  header(url: string): string {
    return [...(this.cookies.get(new URL(url).origin) ?? [])].map(([k, v]) => `${k}=${v}`).join('; ');
  }
  get(url: string, name: string): string | undefined {
    return this.cookies.get(new URL(url).origin)?.get(name);
  }
}

/** One request as a browser sends it (cookies of the jar, no redirect followed). */
export async function visit(jar: Jar, url: string, init: RequestInit = {}): Promise<Response> {
  const res = await fetch(url, {
    ...init,
    redirect: 'manual',
    headers: { ...(init.headers as Record<string, string>), cookie: jar.header(url) },
  });
  jar.take(url, res);
  return res;
}

/**
 * Runs the whole sign-in through the identity provider as a browser would, the person typing
 * `email` on the provider's page (and ticking the second factor when `mfa`); `tamper` may change
 * the provider's answer before the browser brings it to the service. Returns the service's answer
 * to that callback, the browser's cookies and the callback URL.
 */
export async function signInWithProvider(
  appUrl: string,
  idp: TestIdentityProvider,
  email: string,
  options: { mfa?: boolean; returnTo?: string; tamper?: (url: URL) => void } = {},
): Promise<{ jar: Jar; answer: Response; callback: URL }> {
  const jar = new Jar();
  const start = await visit(jar, `${appUrl}/console/sign-in/oidc?return_to=${encodeURIComponent(options.returnTo ?? '/console')}`);
  expect(start.status).toBe(303);
  const authorize = new URL(start.headers.get('location')!);
  expect(authorize.origin).toBe(idp.issuer);
  expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
  expect(authorize.searchParams.get('state')).toBeTruthy();
  expect(authorize.searchParams.get('nonce')).toBeTruthy();
  let res = await visit(jar, authorize.href);
  let url = new URL(res.headers.get('location')!, idp.issuer).href;
  expect(url).toMatch(/\/interaction\//);
  await visit(jar, url);
  const body = new URLSearchParams({ email, ...(options.mfa ? { mfa: 'yes' } : {}) });
  res = await visit(jar, `${url}/login`, { method: 'POST', body, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  // The provider resumes the authorization, then sends the browser back with the code.
  while (res.status >= 300 && res.status < 400) {
    url = new URL(res.headers.get('location')!, url).href;
    if (url.startsWith(appUrl)) break;
    res = await visit(jar, url);
  }
  const callback = new URL(url);
  expect(callback.pathname).toBe('/console/sign-in/oidc/callback');
  options.tamper?.(callback);
  const answer = await visit(jar, callback.href);
  return { jar, answer, callback };
}

/**
 * Signs `email` in through the identity provider (with a second factor when `mfa`) and answers
 * what a browser then holds: the session cookie and the session's CSRF token. Throws when the
 * service refused the sign-in.
 */
export async function signedInWithProvider(
  appUrl: string,
  idp: TestIdentityProvider,
  email: string,
  options: { mfa?: boolean } = {},
): Promise<SignedInPerson> {
  const { jar, answer } = await signInWithProvider(appUrl, idp, email, options);
  const token = jar.get(appUrl, 'wks_session');
  if (!token) throw new Error(`the identity provider's sign-in was refused: ${answer.status} ${answer.headers.get('location')}`);
  const cookie = `wks_session=${token}`;
  const session = (await (await fetch(`${appUrl}/console/session`, { headers: { cookie } })).json()) as { csrf: string };
  return { cookie, csrf: session.csrf };
}
