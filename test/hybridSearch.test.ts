import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fuseRankings, hybridRankings, RRF_K, SEMANTIC_WEIGHT } from '../src/search/fusion.js';
import { startTestApp, type TestApp } from './support/app.js';
import { createKey, createMember, tenant, type Tenant } from './support/factories.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ embeddingWorker: false });
});
afterAll(async () => app?.close());

const W = '/api/v1/workspaces/-';
const search = (t: Tenant, query: string, key = t.key) => app.api('GET', `${W}/search?${query}`, { key });

/** Articles where the words of a question and its meaning point at different pages. */
const PAGES: [string, string, Record<string, unknown>?][] = [
  ['Recovering account credentials', 'If you forgot your login secret, request a reset link from the sign-in page.'],
  ['Password rules', 'A password needs twelve characters. Reset intervals are set by your administrator.'],
  ['Billing', 'Invoices are sent monthly; plans can be changed at any time.'],
  ['Webhooks', 'Receive events over HTTP with signed requests.'],
  ['Team members', 'Invite people to the workspace and give them roles.'],
];

async function docs(t: Tenant, pages = PAGES) {
  expect((await app.api('POST', `${W}/sections`, { key: t.key, body: { label: 'Docs' } })).status).toBe(201);
  for (const [title, markdown, extra] of pages) {
    const res = await app.api('POST', `${W}/articles`, { key: t.key, body: { title, section: 'docs', markdown, ...extra } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  }
}

describe('hybrid search (mode=hybrid)', () => {
  it('fuses full text, embeddings and titles or headings with any word by reciprocal rank: items any ranking finds, scores decreasing', async () => {
    const t = await tenant(app);
    await docs(t);
    await app.server.drainEmbeddings(t.workspace.id);
    const q = 'q=' + encodeURIComponent('reset my password');
    const fullText = await search(t, q);
    const semantic = await search(t, `${q}&mode=semantic`);
    // The any-word ranking: pages whose title or headings hold any of the words (here one title), by their rank for any of them.
    const anyWord = { body: [{ slug: 'password-rules' }] };
    const hybrid = await search(t, `${q}&mode=hybrid`);
    expect(hybrid.status).toBe(200);
    expect(hybrid.headers.get('x-search-ranking')).toBe('hybrid');
    expect(hybrid.headers.get('x-search-fallback')).toBeNull();
    expect(semantic.headers.get('x-search-ranking')).toBe('semantic');
    const slugs = (res: { body: any[] }) => res.body.map((h) => h.slug);
    // Full text finds only the page with the words; the fusion also has what embeddings find.
    expect(slugs(fullText)).toEqual(['password-rules']);
    expect(slugs(semantic)).toContain('recovering-account-credentials');
    expect(new Set(slugs(hybrid))).toEqual(new Set([...slugs(fullText), ...slugs(semantic), ...slugs(anyWord)]));
    // An item both rankings have outscores one only a single ranking has.
    const both = slugs(hybrid).filter((s: string) => slugs(fullText).includes(s) && slugs(semantic).includes(s));
    expect(both.length).toBeGreaterThan(0);
    expect(hybrid.body[0].slug).toBe(both[0]);
    const scores = hybrid.body.map((h: any) => h.score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    const rankIn = (res: { body: any[] }, slug: string) => slugs(res).indexOf(slug) + 1;
    expect(scores[0]).toBeCloseTo(
      1 / (RRF_K + 1) + SEMANTIC_WEIGHT / (RRF_K + rankIn(semantic, both[0])) + 1.5 / (RRF_K + rankIn(anyWord, both[0])),
      5,
    );
    expect(hybrid.body.find((h: any) => h.slug === 'password-rules').snippet).toContain('<mark>');
    // The database fuses exactly as fuseRankings does: same order (ties included), same scores.
    const expected = fuseRankings(hybridRankings(slugs(fullText), slugs(semantic), slugs(anyWord)), (s: string) => s).map((f) => [
      f.item,
      Math.round(f.score * 1e6) / 1e6,
    ]);
    expect(hybrid.body.map((h: any) => [h.slug, h.score])).toEqual(expected);
  });

  it('pages with a cursor that keeps the hybrid ranking; limit and mode are checked (400)', async () => {
    const t = await tenant(app);
    await docs(
      t,
      Array.from({ length: 8 }, (_, i) => [`Password topic ${i}`, `How to reset a password, part ${i}.`] as [string, string]),
    );
    await app.server.drainEmbeddings(t.workspace.id);
    const first = await search(t, 'q=password&mode=hybrid&limit=3');
    expect(first.body).toHaveLength(3);
    const next = /<([^>]+)>; rel="next"/.exec(first.headers.get('link') ?? '')?.[1];
    const url = new URL(next!, 'http://x');
    const second = await app.api('GET', `${url.pathname}${url.search}`, { key: t.key });
    expect(second.headers.get('x-search-ranking')).toBe('hybrid');
    expect(second.body).toHaveLength(3);
    const all = await search(t, 'q=password&mode=hybrid&limit=6');
    expect([...first.body, ...second.body].map((h: any) => h.slug)).toEqual(all.body.map((h: any) => h.slug));
    for (const bad of ['q=password&mode=best', 'q=password&mode=hybrid&semantic=true', 'q=password&mode=fulltext&semantic=true']) {
      const res = await search(t, bad);
      expect(res.status, bad).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
    }
    expect((await search(t, 'q=password&mode=semantic&semantic=true')).status).toBe(200);
  });

  it('falls back to full text while items wait for embeddings, saying why', async () => {
    const t = await tenant(app);
    await docs(t);
    const res = await search(t, 'q=password&mode=hybrid');
    expect(res.status).toBe(200);
    expect(res.headers.get('x-search-ranking')).toBe('fulltext');
    expect(res.headers.get('x-search-fallback')).toBe('embeddings_pending');
    expect(res.body.map((h: any) => h.slug)).toEqual(['password-rules']);
  });

  it('applies the same visibility as full text: restricted and archived articles stay out', async () => {
    const t = await tenant(app, { plan: 'pro' });
    await docs(t, [...PAGES, ['Password vault', 'Where the team keeps its password secrets.', { visibility: 'restricted' }]]);
    expect((await app.api('PATCH', `${W}/articles/billing`, { key: t.key, body: { status: 'ARCHIVED' } })).status).toBe(200);
    await app.server.drainEmbeddings(t.workspace.id);
    const member = await createMember(app, t.org.id, { role: 'viewer' });
    const viewer = (await createKey(app, member.id, { permissions: ['search.read'], workspaceId: t.workspace.id })).key;
    const mine = await search(t, 'q=password%20invoices&mode=hybrid');
    expect(mine.body.map((h: any) => h.slug)).toContain('password-vault');
    const theirs = await search(t, 'q=password%20invoices&mode=hybrid', viewer);
    expect(theirs.headers.get('x-search-ranking')).toBe('hybrid');
    expect(JSON.stringify(theirs.body)).not.toContain('vault');
    expect(theirs.body.map((h: any) => h.slug)).not.toContain('billing');
  });

  it('is the same over GraphQL', async () => {
    const t = await tenant(app);
    await docs(t);
    await app.server.drainEmbeddings(t.workspace.id);
    const res = await app.gql(
      'query { search(workspace: "-", q: "reset my password", mode: hybrid) { ranking items { slug } } }',
      {},
      t.key,
    );
    expect(res.errors).toBeUndefined();
    expect(res.data.search.ranking).toBe('hybrid');
    expect(res.data.search.items.map((h: any) => h.slug)).toContain('password-rules');
  });
});
