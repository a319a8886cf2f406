// A real OpenID Connect provider (the `oidc-provider` package) on loopback, for the sign-in tests:
// authorization code with PKCE, ID tokens signed with its own keys. Its sign-in page asks for an
// e-mail address (the account: `sub` and `email`, verified unless it starts with "unverified") and
// whether a second factor was used (the ID token's `amr`: ["pwd", "otp", "mfa"], else ["pwd"]).
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import Provider from 'oidc-provider';
import type pino from 'pino';
import { createLogger } from '../../src/app/logger.js';
import { startTestApp, type TestApp } from './app.js';

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
 * debug level into `logLines` (the sign-in tests check that no secret reaches a log line).
 */
export async function startAppWithIdentityProvider(): Promise<{ app: TestApp; idp: TestIdentityProvider; logLines: string[] }> {
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
      logger: createLogger({ level: 'debug', destination: sink }) as pino.Logger,
    });
    idp.serve(`${app.url}/console/sign-in/oidc/callback`);
    return { app, idp, logLines };
  } catch (error) {
    await idp.close();
    throw error;
  }
}
