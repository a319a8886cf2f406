import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { inject } from 'vitest';
import { freshEm } from '../../src/db/orm.js';
import { sql } from '../../src/db/sql.js';
import { startServer, type RunningServer, type ServerOptions } from '../../src/server.js';
import { testLogger, watchOf } from './internalErrors.js';
import { OpenApiChecker } from './openapiCheck.js';
import { rawRequest } from './raw.js';
import { until } from './wait.js';

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  /** The body as received. */
  text: string;
}

export interface RequestOptions {
  key?: string | null;
  body?: unknown;
  /** Sent as is (for malformed bodies); implies no JSON encoding. */
  rawBody?: string;
  headers?: Record<string, string>;
  /** A multipart/form-data body. */
  form?: FormData;
  /** Send the path byte for byte over node:http (`fetch` normalises `..` and `%2e%2e` away). */
  rawPath?: boolean;
}

/** Clients of a running service (in this process or spawned) that validate every response. */
export interface ServiceClient {
  url: string;
  adminToken: string;
  /** A REST call; the response is checked against the served OpenAPI document. */
  api<T = any>(method: string, path: string, options?: RequestOptions): Promise<ApiResponse<T>>;
  /** A GraphQL call with the admin token unless another bearer is given (null = none). */
  gql<T = any>(
    query: string,
    variables?: Record<string, unknown>,
    bearer?: string | null,
  ): Promise<{ status: number; data: T; errors?: { message: string; extensions: { code: string; details?: any } }[] }>;
}

/** A running service on its own database copy, with clients that validate every response. */
export interface TestApp extends ServiceClient {
  server: RunningServer;
  close(): Promise<void>;
  /**
   * Declares that the running test makes the service log internal errors: exactly `count` of them
   * (any number without one). An internal error no test declared fails the test (internalErrors.ts).
   */
  expectInternalErrors(count?: number): void;
}

/** Starts the app like `npm start` does, on a copy of the migrated database (or the real one). */
export async function startTestApp(overrides: Partial<ServerOptions> = {}): Promise<TestApp> {
  const dump = inject('pgliteDump');
  const adminToken = `adm_test_${randomBytes(16).toString('hex')}`;
  const logger = overrides.logger ?? testLogger();
  const watch = watchOf(logger);
  const server = await startServer({
    port: 0,
    host: '127.0.0.1',
    databaseUrl: process.env.DATABASE_URL || undefined,
    // The direct connection of the shared database only when the app runs on it (not on a database of its own).
    databaseDirectUrl: overrides.databaseUrl ? undefined : process.env.DATABASE_DIRECT_URL || undefined,
    poolMax: Number(process.env.DATABASE_POOL_MAX) || undefined,
    embeddedDump: dump ? new Blob([readFileSync(dump)]) : undefined,
    adminToken,
    logger,
    rateLimit: { max: 10_000, windowSeconds: 60 },
    // On a shared PostgreSQL every running dispatcher takes deliveries from the one queue, so only
    // the webhook tests run one (with loopback allowed, like every other process of the suite).
    webhookDispatcher: false,
    // Likewise background embedding: tests that need vectors drain the queue themselves.
    embeddingWorker: false,
    ...overrides,
  });
  return {
    ...(await serviceClient(server.url, adminToken)),
    server,
    close: () => server.close(),
    expectInternalErrors: (count) => watch.expect(count),
  };
}

/**
 * Runs webhook fan-out passes until the cursor has passed every event of `workspaceId`. One pass
 * may not: the cursor only moves below the oldest transaction still running in the whole cluster,
 * and on a shared PostgreSQL another test file's open transaction can hold that back for a while.
 */
export async function fanOutPast(app: TestApp, workspaceId: string): Promise<void> {
  await until(async () => {
    await app.server.dispatchWebhooks();
    const [row] = await sql<{ behind: number }>(
      freshEm(app.server.orm),
      `select count(*)::int as behind from events e, event_cursors c
        where c.name = 'webhooks' and e.workspace_id = ? and (e.xid, e.id) > (c.last_xid, c.last_id)`,
      [workspaceId],
    );
    return row.behind === 0;
  }, "the webhook fan-out to pass the workspace's events");
}

/** Clients for the service at `url` (e.g. one spawned with `spawnService`), checked against the document it serves. */
export async function serviceClient(baseUrl: string, adminToken: string): Promise<ServiceClient> {
  const openapi = await (await fetch(`${baseUrl}/api/v1/openapi.json`)).json();
  const checker = new OpenApiChecker(openapi);

  const api: ServiceClient['api'] = async (method, path, options = {}) => {
    const headers: Record<string, string> = { ...options.headers };
    if (options.key) headers.authorization = `Bearer ${options.key}`;
    let body: string | FormData | undefined = options.form ?? options.rawBody;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    }
    const url = `${baseUrl}${path}`;
    if (options.rawPath) {
      if (body instanceof FormData) throw new Error('rawPath sends string bodies only');
      const raw = await rawRequest(baseUrl, method, path, { headers, body });
      const rawHeaders = new Headers(Object.entries(raw.headers).map(([k, v]): [string, string] => [k, [v ?? ''].flat().join(', ')]));
      checker.check(method, url, raw.status, rawHeaders.get('content-type'), raw.body);
      return { status: raw.status, headers: rawHeaders, body: raw.body, text: raw.text };
    }
    const res = await fetch(url, { method, headers, body });
    const text = await res.text();
    const contentType = res.headers.get('content-type');
    const parsed = contentType?.includes('json') && text ? JSON.parse(text) : text;
    checker.check(method, url, res.status, contentType, parsed);
    return { status: res.status, headers: res.headers, body: parsed, text };
  };

  const gql: ServiceClient['gql'] = async (query, variables = {}, bearer = adminToken) => {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (bearer) headers.authorization = `Bearer ${bearer}`;
    const res = await fetch(`${baseUrl}/graphql`, { method: 'POST', headers, body: JSON.stringify({ query, variables }) });
    const json = (await res.json()) as { data: any; errors?: any[] };
    return { status: res.status, data: json.data, errors: json.errors };
  };

  return { url: baseUrl, adminToken, api, gql };
}
