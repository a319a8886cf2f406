import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fuse, SEMANTIC_SHARE } from '../src/search/fusion.js';
import type { Neighbour } from '../src/search/vectors.js';
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
  it("fuses full text and the embeddings (moved towards full text's first hits): items either finds, scores as fuse() computes them", async () => {
    const t = await tenant(app);
    await docs(t);
    await app.server.drainEmbeddings(t.workspace.id);
    const q = 'q=' + encodeURIComponent('reset my password');
    const fullText = await search(t, q);
    const hybrid = await search(t, `${q}&mode=hybrid&explain=true`);
    expect(hybrid.status).toBe(200);
    expect(hybrid.headers.get('x-search-ranking')).toBe('hybrid');
    expect(hybrid.headers.get('x-search-fallback')).toBeNull();
    const slugs = (res: { body: any[] }) => res.body.map((h) => h.slug);
    // Full text finds the pages with the words; the fusion also has what the embeddings find.
    expect(slugs(fullText)).toEqual(['password-rules', 'recovering-account-credentials']);
    expect(slugs(hybrid)).toEqual(expect.arrayContaining(slugs(fullText)));
    const byMeaning = hybrid.body.filter((h: any) => h.explain.semantic);
    expect(byMeaning.length).toBeGreaterThan(slugs(fullText).length);
    expect(hybrid.body[0].slug).toBe('password-rules');
    const scores = hybrid.body.map((h: any) => h.score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    // Every hit explains its ranks; fusing the two rankings they describe gives exactly this page.
    for (const [i, h] of hybrid.body.entries()) expect(h.explain.fusedRank).toBe(i + 1);
    const ranked = (part: 'fullText' | 'semantic') =>
      hybrid.body.filter((h: any) => h.explain[part]).sort((a: any, b: any) => a.explain[part].rank - b.explain[part].rank);
    // Items numbered by their place in the page: fuse() needs ids, not slugs.
    const ids = new Map(hybrid.body.map((h: any, i: number) => [h.slug, i + 1]));
    const expected = fuse(
      ranked('fullText').map((h: any) => ({ type: 'article' as const, id: ids.get(h.slug)!, score: h.explain.fullText.score })),
      ranked('semantic').map(
        (h: any) =>
          ({ itemType: 'article', itemId: ids.get(h.slug)!, passage: 0, similarity: 1, score: h.explain.semantic.similarity }) as Neighbour,
      ),
    );
    expect(expected.map((c) => [c.itemId, expect.closeTo(c.score, 5)])).toEqual(hybrid.body.map((h: any) => [ids.get(h.slug), h.score]));
    // The embeddings ranked by the question moved towards full text's first hits: other similarities than the question's own.
    const semantic = await search(t, `${q}&mode=semantic&explain=true`);
    const asked = new Map(semantic.body.map((h: any) => [h.slug, h.explain.semantic.similarity]));
    const moved = byMeaning.filter((h: any) => asked.has(h.slug));
    expect(moved.length).toBeGreaterThan(0);
    for (const h of moved) expect(h.explain.semantic.similarity).not.toBeCloseTo(asked.get(h.slug) as number, 4);
    // The page full text ranks first holds most of full text's share.
    expect(hybrid.body[0].score).toBeGreaterThanOrEqual(1 - SEMANTIC_SHARE);
    expect(hybrid.body.find((h: any) => h.slug === 'password-rules').snippet).toContain('<mark>');
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
