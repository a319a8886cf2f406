import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serviceClient, type ApiResponse, type ServiceClient } from './support/app.js';
import { tenant } from './support/factories.js';
import { ownDatabase } from './support/ownDatabase.js';
import { spawnService, type ServiceProcess } from './support/processes.js';
import { until } from './support/wait.js';

// One service started like `npm start` with nothing configured but its database and admin token:
// the defaults a user gets (600 requests per key per 60 s, background embedding and webhook
// dispatch on, loopback refused). It has a database of its own (a fresh embedded directory, or a
// database created on the server): its dispatcher refuses loopback, so on the shared database it
// would fail other files' deliveries to their local receivers.
const dir = mkdtempSync(join(tmpdir(), 'wks-defaults-'));
const ADMIN = `adm_defaults_${randomBytes(16).toString('hex')}`;

let service: ServiceProcess;
let client: ServiceClient;
let own: Awaited<ReturnType<typeof ownDatabase>>;
beforeAll(async () => {
  own = await ownDatabase('wks_defaults');
  const database: Record<string, string> = own ? own.env : { DATA_DIR: join(dir, 'data') };
  // Undo every setting the test helpers make (loopback, no dispatcher, no embeddings, small pools).
  service = await spawnService({
    ...database,
    ADMIN_TOKEN: ADMIN,
    OUTBOUND_ALLOW_LOOPBACK: '',
    WEBHOOK_DISPATCHER: '',
    EMBEDDINGS: '',
    DATABASE_POOL_MAX: '',
  });
  client = await serviceClient(service.url, ADMIN);
}, 120_000);
afterAll(async () => {
  await service?.stop();
  await own?.drop();
  rmSync(dir, { recursive: true, force: true });
});

const W = '/api/v1/workspaces/-';

describe('production defaults', () => {
  it('lets exactly 600 requests per key through in a 60 s window, then answers 429 with Retry-After', async () => {
    const t = await tenant(client);
    // Windows are aligned to the clock: the burst must not straddle a minute's edge.
    const toEdge = 60_000 - (Date.now() % 60_000);
    if (toEdge < 20_000) await new Promise((r) => setTimeout(r, toEdge + 100));
    const first = await client.api('GET', `${W}/changelog`, { key: t.key });
    expect(first.status).toBe(200);
    expect(first.headers.get('ratelimit-policy')).toBe('"default";q=600;w=60');
    expect(first.headers.get('ratelimit')).toMatch(/^"default";r=599;t=\d+$/);
    const statuses: number[] = [];
    let refused: ApiResponse | null = null;
    for (let sent = 1; sent < 610; sent += 61) {
      const wave = await Promise.all(Array.from({ length: 61 }, () => client.api('GET', `${W}/changelog`, { key: t.key })));
      statuses.push(...wave.map((r) => r.status));
      refused ??= wave.find((r) => r.status === 429) ?? null;
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(599);
    expect(statuses.filter((s) => s === 429)).toHaveLength(statuses.length - 599);
    expect(refused!.body.error.code).toBe('rate_limited');
    expect(Number(refused!.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Number(refused!.headers.get('retry-after'))).toBeLessThanOrEqual(60);
  }, 60_000);

  it('refuses loopback webhook targets and spec URLs', async () => {
    const t = await tenant(client);
    const hook = await client.gql('mutation($input: CreateWebhookInput!) { createWebhook(input: $input) { id } }', {
      input: { organizationId: t.org.id, url: `${service.url}/hook` },
    });
    expect(hook.errors?.[0].extensions).toMatchObject({ code: 'invalid_request', details: [{ field: 'url' }] });
    const spec = await client.api('PUT', `${W}/openapi`, { key: t.key, body: { url: `${service.url}/api/v1/openapi.json` } });
    expect(spec.status).toBe(400);
    expect(JSON.stringify(spec.body.error.details)).toContain('url');
  });

  it('dispatches webhooks in the background: an event becomes a recorded delivery attempt', async () => {
    const t = await tenant(client);
    // A public documentation address (TEST-NET-3): allowed, and nobody answers there.
    const created = await client.gql('mutation($input: CreateWebhookInput!) { createWebhook(input: $input) { id } }', {
      input: { organizationId: t.org.id, url: 'http://203.0.113.7:9/hook', workspaceId: t.workspace.id, events: ['changelog.*'] },
    });
    expect(created.errors).toBeUndefined();
    const hookId = created.data.createWebhook.id;
    const entry = await client.api('POST', `${W}/changelog`, {
      key: t.key,
      body: { title: 'Hello', markdown: 'x', status: 'draft', tags: [], published_at: null },
    });
    expect(entry.status).toBe(201);
    const deliveries = await until(
      async () => {
        const res = await client.gql('query($id: ID!) { webhookDeliveries(webhookId: $id) { eventType attempts attemptLog { error } } }', {
          id: hookId,
        });
        const list = res.data.webhookDeliveries as { eventType: string; attempts: number; attemptLog: { error: string | null }[] }[];
        return list.length && list[0].attempts > 0 ? list : null;
      },
      'a delivery attempt',
      45_000,
      200,
    );
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0].eventType).toBe('changelog.created');
    expect(deliveries[0].attemptLog[0].error).toBeTruthy();
  }, 60_000);

  it('embeds new articles in the background: semantic search ranks them without any drain', async () => {
    const t = await tenant(client);
    expect((await client.api('POST', `${W}/sections`, { key: t.key, body: { label: 'Docs', key: 'docs' } })).status).toBe(201);
    const article = await client.api('POST', `${W}/articles`, {
      key: t.key,
      body: { title: 'Recovering account credentials', section: 'docs', markdown: 'Request a reset link from the sign-in page.' },
    });
    expect(article.status).toBe(201);
    const ask = () => client.api('GET', `${W}/search?q=${encodeURIComponent('how do I change my password')}&semantic=true`, { key: t.key });
    const res = await until(
      async () => {
        const r = await ask();
        return r.headers.get('x-search-ranking') === 'semantic' ? r : null;
      },
      'the background worker to embed the article',
      45_000,
      250,
    );
    expect(res.body.map((h: { slug: string }) => h.slug)).toEqual(['recovering-account-credentials']);
  }, 60_000);
});
