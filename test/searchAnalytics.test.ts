import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { tenant, type Tenant } from './support/factories.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.close());

const W = '/api/v1/workspaces/-';
const ANALYTICS = `query($w: ID!, $days: Int) { searchAnalytics(workspaceId: $w, days: $days) {
  day searches zeroResults zeroResultRate rankings { fulltext semantic hybrid } p50Ms p95Ms
  topQueries { query count } topZeroResultQueries { query count } } }`;

async function search(t: Tenant, q: string, extra = '') {
  const res = await app.api('GET', `${W}/search?q=${encodeURIComponent(q)}${extra}`, { key: t.key });
  expect(res.status).toBe(200);
}

describe('search analytics for dashboards (GraphQL, admin token)', () => {
  it("counts a workspace's searches per day: zero-result rate, rankings, durations, top queries scrubbed", async () => {
    const t = await tenant(app);
    const other = await tenant(app);
    expect((await app.api('POST', `${W}/sections`, { key: t.key, body: { label: 'Docs' } })).status).toBe(201);
    expect(
      (await app.api('POST', `${W}/articles`, { key: t.key, body: { title: 'Webhooks', section: 'docs', markdown: 'Events.' } })).status,
    ).toBe(201);
    for (let i = 0; i < 3; i++) await search(t, i ? 'webhooks' : 'Webhooks');
    await search(t, 'nothing here');
    await search(t, 'nothing here');
    await search(t, 'mail jane@example.com');
    await search(t, 'webhooks', '&mode=semantic');
    await search(other, 'webhooks');
    const res = await app.gql(ANALYTICS, { w: t.workspace.id });
    expect(res.errors).toBeUndefined();
    const days = res.data.searchAnalytics;
    expect(days).toHaveLength(1);
    const [today] = days;
    expect(today.day).toBe(new Date().toISOString().slice(0, 10));
    expect(today).toMatchObject({ searches: 7, zeroResults: 3, zeroResultRate: 0.429 });
    expect(today.rankings.fulltext + today.rankings.semantic).toBe(7);
    expect(today.rankings.hybrid).toBe(0);
    expect(today.p95Ms).toBeGreaterThanOrEqual(today.p50Ms);
    expect(today.topQueries[0]).toEqual({ query: 'webhooks', count: 4 });
    expect(today.topZeroResultQueries[0]).toEqual({ query: 'nothing here', count: 2 });
    expect(JSON.stringify(today)).not.toContain('jane@example.com');
    expect(today.topZeroResultQueries.map((q: any) => q.query)).toContain('mail [email]');
    // Another workspace's searches are its own.
    expect((await app.gql(ANALYTICS, { w: other.workspace.id })).data.searchAnalytics[0].searches).toBe(1);
  });

  it('needs the admin token, a workspace id, and 1–90 days', async () => {
    const t = await tenant(app);
    const asAgent = await app.gql(ANALYTICS, { w: t.workspace.id }, t.key);
    expect(asAgent.errors?.[0].extensions?.code).toBe('permission_denied');
    for (const days of [0, 91]) {
      const res = await app.gql(ANALYTICS, { w: t.workspace.id, days });
      expect(res.errors?.[0].extensions?.code, String(days)).toBe('invalid_request');
    }
    expect((await app.gql(ANALYTICS, { w: 'nope' })).errors?.[0].extensions?.code).toBe('not_found');
    expect((await app.gql(ANALYTICS, { w: t.workspace.id })).data.searchAnalytics).toEqual([]);
  });
});
