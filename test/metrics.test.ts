import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { fanOutPast, startTestApp, type TestApp } from './support/app.js';
import { tenant } from './support/factories.js';
import { ownDatabase } from './support/ownDatabase.js';
import { freePort } from './support/processes.js';
import { until } from './support/wait.js';
import { freshEm } from '../src/db/orm.js';
import { sql } from '../src/db/sql.js';

const TOKEN = 'metrics_test_token_0123456789abcdef';
let app: TestApp;
let closed: TestApp;
// A database of its own on PostgreSQL: the webhook backlogs asserted here must not be worked off by another file's dispatcher.
let own: Awaited<ReturnType<typeof ownDatabase>>;
beforeAll(async () => {
  own = await ownDatabase('wks_metrics');
  [app, closed] = await Promise.all([
    startTestApp({
      metricsToken: TOKEN,
      rateLimit: { max: 3, windowSeconds: 60 },
      databaseUrl: own?.url,
      databaseDirectUrl: own?.directUrl,
      outboundAllowLoopback: true,
    }),
    startTestApp(),
  ]);
}, 120_000);
afterAll(async () => {
  await app?.close();
  await closed?.close();
  await own?.drop();
});

const scrape = (target: TestApp, headers: Record<string, string> = { authorization: `Bearer ${TOKEN}` }, method = 'GET') =>
  fetch(`${target.server.url}/metrics`, { method, headers });

/** The value of one sample line of the text format, or undefined. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (!Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) continue;
    return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

describe('/metrics (Prometheus text format, METRICS_TOKEN)', () => {
  it('does not exist without METRICS_TOKEN', async () => {
    const res = await scrape(closed);
    expect(res.status).toBe(404);
    expect(await res.text()).not.toContain('wks_http_requests_total');
  });

  it('refuses a scraper without the token, or with another, with a 401 envelope', async () => {
    for (const headers of [
      {} as Record<string, string>,
      { authorization: 'Bearer wrong' },
      { authorization: `Bearer ${TOKEN}x` },
      { authorization: TOKEN },
    ]) {
      const res = await scrape(app, headers);
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toContain('Bearer');
      expect((await res.json()).error.code).toBe('unauthorized');
    }
    const post = await scrape(app, { authorization: `Bearer ${TOKEN}` }, 'POST');
    expect(post.status).toBe(405);
  });

  it('counts requests by route and status, rate-limit refusals, and reports pools, backlogs and sockets', async () => {
    const t = await tenant(app);
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await app.api('GET', '/api/v1/workspaces/-/memory', { key: t.key })).status);
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
    await fetch(`${app.server.url}/no/such/path/${Math.random()}`);
    const res = await scrape(app);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    const text = await res.text();
    const labels = text.match(/wks_http_requests_total\{[^}]*route="([^"]+)"[^}]*status="200"/);
    expect(labels).not.toBeNull();
    const route = /wks_http_requests_total\{route="([^"]+)",method="GET",status="429"\}/.exec(text)?.[1];
    expect(route).toBeDefined();
    expect(route).not.toContain('/'); // the route table's name, not the path
    expect(sample(text, 'wks_http_requests_total', { route: route!, status: '429' })).toBe(2);
    expect(sample(text, 'wks_http_requests_total', { route: route!, status: '200' })).toBe(3);
    expect(sample(text, 'wks_rate_limit_refusals_total', { route: route! })).toBe(2);
    expect(sample(text, 'wks_http_request_duration_seconds_count', { route: route!, status: '200' })).toBe(3);
    expect(sample(text, 'wks_http_requests_total', { route: 'other', status: '404' })).toBeGreaterThanOrEqual(1);
    expect(text).not.toContain('/no/such/path');
    expect(sample(text, 'wks_db_pool_connections', { pool: 'statements', state: 'waiting' })).toBe(0);
    expect(sample(text, 'wks_db_pool_connections', { pool: 'statements', state: 'total' })).toBeGreaterThan(0);
    expect(sample(text, 'wks_embedding_backlog_depth')).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'wks_embedding_backlog_oldest_seconds')).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'wks_webhook_backlog_depth')).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'wks_webhook_backlog_oldest_seconds')).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'wks_websockets', { state: 'open' })).toBe(0);
    expect(sample(text, 'wks_graphql_subscriptions')).toBe(0);
    expect(sample(text, 'wks_process_cpu_seconds_total')).toBeGreaterThan(0);
    // No replica configured: no replica series.
    expect(text).not.toContain('wks_replica_lag_seconds');
  });

  it('shows a queued embedding in the backlog depth and age', async () => {
    const t = await tenant(app);
    const db = freshEm(app.server.orm);
    // An item queued 10 minutes ago (the worker is off in tests): the depth grows by one, the oldest is at least that old.
    const item = 2_000_000_000 - Math.floor(Math.random() * 1_000_000);
    await sql(
      db,
      `insert into embedding_queue (item_type, item_id, workspace_id, enqueued_at, attempts, claimed_until)
       values ('search', ?, ?, now() - interval '10 minutes', 0, now() + interval '1 hour')`,
      [item, t.workspace.id],
    );
    try {
      const text = await (await scrape(app)).text();
      expect(sample(text, 'wks_embedding_backlog_depth')).toBeGreaterThanOrEqual(1);
      expect(sample(text, 'wks_embedding_backlog_oldest_seconds')).toBeGreaterThanOrEqual(600);
    } finally {
      await sql(db, `delete from embedding_queue where item_type = 'search' and item_id = ?`, [item]);
    }
  });

  it('shows an event not yet fanned out, then its pending delivery to a target that refuses, in the webhook backlogs', async () => {
    const t = await tenant(app);
    const port = await freePort();
    const hook = await app.gql('mutation($input: CreateWebhookInput!) { createWebhook(input: $input) { id } }', {
      input: { organizationId: t.org.id, url: `http://127.0.0.1:${port}/hook` },
    });
    expect(hook.errors, JSON.stringify(hook.errors)).toBeUndefined();
    expect((await app.api('POST', '/api/v1/workspaces/-/sections', { key: t.key, body: { label: 'S', key: 's' } })).status).toBe(201);
    await new Promise((resolve) => setTimeout(resolve, 20));
    // No dispatcher runs in this process: the event waits past the fan-out cursor, and has no delivery yet.
    let text = await (await scrape(app)).text();
    expect(sample(text, 'wks_webhook_fanout_backlog_depth')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'wks_webhook_fanout_backlog_oldest_seconds')).toBeGreaterThan(0);
    // Dispatcher passes fan it out and try the delivery: refused, it stays pending for a retry.
    await fanOutPast(app, t.workspace.id);
    await new Promise((resolve) => setTimeout(resolve, 20));
    text = await (await scrape(app)).text();
    expect(sample(text, 'wks_webhook_fanout_backlog_depth')).toBe(0);
    expect(sample(text, 'wks_webhook_fanout_backlog_oldest_seconds')).toBe(0);
    expect(sample(text, 'wks_webhook_backlog_depth')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'wks_webhook_backlog_oldest_seconds')).toBeGreaterThan(0);
    const [delivery] = await sql<{ status: string; attempts: number }>(
      freshEm(app.server.orm),
      'select status, attempts from webhook_deliveries where webhook_id = ?',
      [hook.data.createWebhook.id],
    );
    expect(delivery).toEqual({ status: 'pending', attempts: 1 });
  });

  it('counts an open authenticated GraphQL subscription in the socket and subscription gauges', async () => {
    const t = await tenant(app);
    const client = createClient({
      url: `${app.server.url.replace(/^http/, 'ws')}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${t.key}` },
      retryAttempts: 0,
      lazy: false,
      onNonLazyError: () => undefined,
    });
    const errors: unknown[] = [];
    const stop = client.subscribe(
      { query: 'subscription($w: String!) { proposalChanged(workspace: $w) { action } }', variables: { w: '-' } },
      { next: (value) => errors.push(value), error: (error) => errors.push(error), complete: () => undefined },
    );
    try {
      const text = await scrapeUntil((s) => (sample(s, 'wks_graphql_subscriptions') ?? 0) >= 1, 'the subscription in the gauges');
      expect(errors).toEqual([]);
      expect(sample(text, 'wks_graphql_subscriptions')).toBeGreaterThanOrEqual(1);
      expect(sample(text, 'wks_websockets', { state: 'open' })).toBeGreaterThanOrEqual(1);
      expect(sample(text, 'wks_websockets', { state: 'admitted' })).toBeGreaterThanOrEqual(1);
      expect(sample(text, 'wks_websockets', { state: 'unauthenticated' })).toBe(0);
    } finally {
      stop();
      await client.dispose();
    }
    const text = await scrapeUntil((s) => sample(s, 'wks_websockets', { state: 'open' }) === 0, 'the socket to close');
    expect(sample(text, 'wks_graphql_subscriptions')).toBe(0);
  });

  it('times the connections the pools hand out and counts the callers that queued for one', async () => {
    const before = await (await scrape(app)).text();
    const db = () => freshEm(app.server.orm);
    // Deterministic: three times as many statements, and transactions, at once as the pool has connections (the size its
    // gauge shows once all are open); each holds its connection 50 ms, so at least two thirds of them queue until one is released.
    const statements = Number(process.env.DATABASE_URL ? process.env.DATABASE_POOL_MAX || 20 : 8);
    const max = { statements, transactions: Math.max(2, Math.ceil(statements / 2)) };
    await Promise.all(Array.from({ length: 3 * max.statements }, () => sql(db(), 'select pg_sleep(0.05)')));
    await Promise.all(Array.from({ length: 3 * max.transactions }, () => db().transactional((trx) => sql(trx, 'select pg_sleep(0.05)'))));
    const text = await (await scrape(app)).text();
    for (const pool of ['statements', 'transactions'] as const) {
      expect(sample(text, 'wks_db_pool_connections', { pool, state: 'total' }), pool).toBe(max[pool]);
      const grew = (name: string, labels: Record<string, string> = {}) =>
        (sample(text, name, { pool, ...labels }) ?? 0) - (sample(before, name, { pool, ...labels }) ?? 0);
      expect(grew('wks_db_pool_waits_total'), pool).toBeGreaterThanOrEqual(2 * max[pool]);
      expect(grew('wks_db_pool_wait_seconds_count'), pool).toBeGreaterThanOrEqual(3 * max[pool]);
      // The queued ones waited for a 50 ms statement to end: more observations in all than at or below 25 ms.
      expect(
        grew('wks_db_pool_wait_seconds_count') - grew('wks_db_pool_wait_seconds_bucket', { le: '0.025' }),
        pool,
      ).toBeGreaterThanOrEqual(max[pool]);
      expect(sample(text, 'wks_db_pool_wait_seconds_sum', { pool })).toBeGreaterThan(0);
    }
    expect(text).toMatch(/wks_db_pool_wait_seconds_bucket\{le="0\.0005",pool="statements"\} \d+/);
  });
});

/** Scrapes until `done` holds of the text (5 s at most, see until); that text. */
const scrapeUntil = (done: (text: string) => boolean, what: string): Promise<string> =>
  until(
    async () => {
      const text = await (await scrape(app)).text();
      return done(text) ? text : null;
    },
    what,
    5000,
    50,
  );
