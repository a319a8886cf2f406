import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { tenant } from './support/factories.js';
import { freshEm } from '../src/db/orm.js';
import { sql } from '../src/db/sql.js';

const TOKEN = 'metrics_test_token_0123456789abcdef';
let app: TestApp;
let closed: TestApp;
beforeAll(async () => {
  [app, closed] = await Promise.all([startTestApp({ metricsToken: TOKEN, rateLimit: { max: 3, windowSeconds: 60 } }), startTestApp()]);
}, 120_000);
afterAll(async () => {
  await app?.close();
  await closed?.close();
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
});
