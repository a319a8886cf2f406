import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshEm } from '../src/db/orm.js';
import { DisabledEmbedder, embedderFromEnv } from '../src/search/embedder.js';
import { removeEmbeddings, VectorIndex, type Neighbour } from '../src/search/vectors.js';
import { startTestApp, type TestApp } from './support/app.js';
import { bm25Reference } from './support/bm25Reference.js';
import { startEmbeddingsEndpoint } from './support/embedders.js';
import { createKey, createMember, tenant, type Tenant } from './support/factories.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ embeddingWorker: false });
});
afterAll(async () => app?.close());

const W = '/api/v1/workspaces/-';

async function docs(t: Tenant, pages: [string, string, Record<string, unknown>?][]) {
  await app.api('POST', `${W}/sections`, { key: t.key, body: { label: 'Docs' } });
  for (const [title, markdown, extra] of pages) {
    const res = await app.api('POST', `${W}/articles`, { key: t.key, body: { title, section: 'docs', markdown, ...extra } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  }
}

const search = (t: Tenant, query: string, key = t.key) => app.api('GET', `${W}/search?${query}`, { key });

describe('full-text search (10)', () => {
  it('finds by title and body word, ranks the title hit first, and includes published changelog entries', async () => {
    const t = await tenant(app);
    await docs(t, [
      ['Webhooks', 'Receive events over HTTP.'],
      ['Getting started', 'Create a key, then configure webhooks for your events.'],
      ['Billing', 'Invoices and plans.'],
    ]);
    await app.api('POST', `${W}/changelog`, {
      key: t.key,
      body: { title: 'Webhook retries', markdown: 'Retries now back off.', status: 'published', tags: [], published_at: null },
    });
    await app.api('POST', `${W}/changelog`, {
      key: t.key,
      body: { title: 'Webhook draft', markdown: 'secret plans', status: 'draft', tags: [], published_at: null },
    });
    const res = await search(t, 'q=webhooks');
    expect(res.status).toBe(200);
    expect(res.headers.get('x-search-ranking')).toBe('fulltext');
    const keys = res.body.map((h: any) => h.slug ?? `changelog:${h.title}`);
    // Title hits (article and changelog) rank above the body-only hit.
    expect(keys.slice(0, 2).sort()).toEqual(['changelog:Webhook retries', 'webhooks']);
    expect(keys[2]).toBe('getting-started');
    const article = res.body.find((h: any) => h.slug === 'webhooks');
    expect(article).toMatchObject({
      type: 'article',
      title: 'Webhooks',
      url: `/api/v1/workspaces/${t.workspace.id}/articles/webhooks`,
      id: null,
    });
    expect(res.body[2].snippet).toContain('<mark>webhooks</mark>');
    expect(article.score).toBeGreaterThan(res.body[2].score);
    expect(res.body.find((h: any) => h.type === 'changelog')).toMatchObject({
      slug: null,
      id: expect.any(Number),
      url: expect.stringMatching(/changelog#entry-\d+$/),
    });
    expect((await search(t, 'q=invoices')).body.map((h: any) => h.slug)).toEqual(['billing']);
  });

  it('paginates with a cursor and answers 400 for a missing or blank q', async () => {
    const t = await tenant(app);
    await docs(t, [
      ['Alpha one', 'alpha'],
      ['Alpha two', 'alpha'],
      ['Alpha three', 'alpha'],
    ]);
    const first = await search(t, 'q=alpha&limit=2');
    expect(first.body).toHaveLength(2);
    const next = /<([^>]+)>; rel="next"/.exec(first.headers.get('link')!)![1];
    const second = await app.api('GET', next, { key: t.key });
    expect([...first.body, ...second.body].map((h: any) => h.slug).sort()).toEqual(['alpha-one', 'alpha-three', 'alpha-two']);
    expect((await app.api('GET', `${W}/search`, { key: t.key })).status).toBe(400);
    const blank = await search(t, 'q=%20');
    expect(blank.status).toBe(400);
    expect(blank.body.error.details[0].field).toBe('q');
    expect((await search(t, 'q=x&limit=51')).status).toBe(400);
  });

  it('pages through exactly the full ranking, whatever the page size', async () => {
    const t = await tenant(app);
    // 9 titles and 14 bodies mention "zebrafish" (some bodies many times); 3 documents do not.
    const pages: [string, string][] = [];
    for (let i = 0; i < 9; i++) pages.push([`Zebrafish note ${i}${i % 3 ? ' zebrafish' : ''}`, `tank ${'zebrafish '.repeat(i % 4)}water`]);
    for (let i = 0; i < 14; i++) pages.push([`Aquarium ${i}`, `The zebrafish ${'zebrafish '.repeat(i % 6)}swims.`]);
    for (let i = 0; i < 3; i++) pages.push([`Other ${i}`, 'goldfish']);
    await docs(t, pages);
    await app.api('POST', `${W}/changelog`, {
      key: t.key,
      body: { title: 'Zebrafish support', markdown: 'zebrafish zebrafish', status: 'published', tags: [], published_at: null },
    });
    // The order BM25F gives over every match, computed from the database's search columns.
    const reference = await bm25Reference(app, t.workspace.id, 'zebrafish');
    const expected = reference.map((r) => (r.key.startsWith('changelog:') ? 'changelog:Zebrafish support' : r.key));
    expect(expected).toHaveLength(24);
    const keys = (body: any[]) => body.map((h) => h.slug ?? `changelog:${h.title}`);
    for (const limit of [3, 5, 24, 50]) {
      const seen: string[] = [];
      let url: string | null = `${W}/search?q=zebrafish&limit=${limit}`;
      while (url) {
        const res: { status: number; headers: Headers; body: any[] } = await app.api('GET', url, { key: t.key });
        expect(res.status).toBe(200);
        seen.push(...keys(res.body));
        url = /<([^>]+)>; rel="next"/.exec(res.headers.get('link') ?? '')?.[1] ?? null;
      }
      expect(seen, `limit=${limit}`).toEqual(expected);
    }
  });

  it('hides restricted articles from viewer-role keys, and archived ones from everyone', async () => {
    const t = await tenant(app, { plan: 'pro' });
    await docs(t, [
      ['Public rollout', 'rollout steps'],
      ['Internal rollout', 'rollout secrets', { visibility: 'restricted' }],
      ['Old rollout', 'rollout legacy'],
    ]);
    await app.api('PATCH', `${W}/articles/old-rollout`, { key: t.key, body: { status: 'ARCHIVED' } });
    const viewer = await createMember(app, t.org.id, { role: 'viewer' });
    const viewerKey = await createKey(app, viewer.id, { permissions: ['search.read'], workspaceId: t.workspace.id });
    expect((await search(t, 'q=rollout')).body.map((h: any) => h.slug).sort()).toEqual(['internal-rollout', 'public-rollout']);
    expect((await search(t, 'q=rollout', viewerKey.key)).body.map((h: any) => h.slug)).toEqual(['public-rollout']);
  });

  it('needs search.read and never shows another workspace', async () => {
    const t = await tenant(app, { permissions: ['article.read'] });
    expect((await search(t, 'q=x')).status).toBe(403);
    const a = await tenant(app);
    const b = await tenant(app);
    await docs(b, [['Only in b', 'zebra']]);
    expect((await search(a, 'q=zebra')).body).toEqual([]);
  });
});

describe('semantic search', () => {
  it('finds a paraphrase sharing no words with the article, on pgvector where the database has it, else the portable path', async () => {
    // The expectation comes from the database itself: a PostgreSQL server with pgvector must use it.
    const installed = await app.server.orm.em.fork().getConnection().execute(`select 1 from pg_extension where extname = 'vector'`);
    expect(app.server.vectorStore).toBe(installed.length ? 'pgvector' : 'portable');
    console.log(`semantic search runs on the ${app.server.vectorStore} vector path`);
    const t = await tenant(app);
    await docs(t, [
      ['Recovering account credentials', 'If you forgot your login secret, request a reset link from the sign-in page.'],
      ['Deploying to Kubernetes', 'Build the container image and apply the manifests.'],
      ['Invoices', 'Download monthly statements for accounting.'],
    ]);
    const pending = await search(t, 'q=how%20do%20I%20change%20my%20password&semantic=true');
    expect(pending.headers.get('x-search-ranking')).toBe('fulltext');
    expect(pending.headers.get('x-search-fallback')).toBe('embeddings_pending');
    expect(await app.server.drainEmbeddings(t.workspace.id)).toBeGreaterThan(0);
    const res = await search(t, 'q=how%20do%20I%20change%20my%20password&semantic=true');
    expect(res.status).toBe(200);
    expect(res.headers.get('x-search-ranking')).toBe('semantic');
    expect(res.headers.get('x-search-fallback')).toBeNull();
    console.log('paraphrase "how do I change my password" →', res.body.map((h: any) => `${h.slug} (${h.score})`).join(', '));
    expect(res.body[0].slug).toBe('recovering-account-credentials');
    const ft = await search(t, 'q=how%20do%20I%20change%20my%20password');
    expect(ft.body).toEqual([]);
    // Semantic pages walk the similarity order, one item per page, and end with no next link.
    const all = await search(t, 'q=deploying%20containers%20and%20invoices&semantic=true');
    expect(all.headers.get('x-search-ranking')).toBe('semantic');
    const walked: any[] = [];
    for (let path: string | null = `${W}/search?q=deploying%20containers%20and%20invoices&semantic=true&limit=1`; path;) {
      const res: { body: any; headers: Headers } = await app.api('GET', path, { key: t.key });
      expect(res.headers.get('x-search-ranking')).toBe('semantic');
      expect(res.body.length).toBeLessThanOrEqual(1);
      walked.push(...res.body);
      path = /<([^>]+)>; rel="next"/.exec(res.headers.get('link') ?? '')?.[1] ?? null;
    }
    expect(walked).toEqual(all.body);
    expect(walked.length).toBeGreaterThan(1);
  });

  it('falls back to full text when nothing clears the similarity floor', async () => {
    const t = await tenant(app);
    await docs(t, [['Kubernetes', 'Manifests and pods.']]);
    await app.server.drainEmbeddings(t.workspace.id);
    const res = await search(t, 'q=zxqv%20plorb&semantic=true');
    expect(res.headers.get('x-search-ranking')).toBe('fulltext');
    expect(res.headers.get('x-search-fallback')).toBe('below_similarity_floor');
  });

  it('falls back to full text when the embedder is switched off', async () => {
    const off = await startTestApp({ embedder: new DisabledEmbedder() });
    try {
      const t = await tenant(off);
      await off.api('POST', `${W}/sections`, { key: t.key, body: { label: 'Docs' } });
      await off.api('POST', `${W}/articles`, { key: t.key, body: { title: 'Password reset', section: 'docs', markdown: 'Reset it.' } });
      // Only this workspace's queue: other files on a shared database have items waiting too.
      await off.server.orm.em.fork().getConnection().execute('delete from embedding_queue where workspace_id = ?', [t.workspace.id]);
      const res = await off.api('GET', `${W}/search?q=password&semantic=true`, { key: t.key });
      expect(res.status).toBe(200);
      expect(res.headers.get('x-search-ranking')).toBe('fulltext');
      expect(res.headers.get('x-search-fallback')).toBe('embedder_unavailable');
      expect(res.body.map((h: any) => h.slug)).toEqual(['password-reset']);
    } finally {
      await off.close();
    }
  });
});

describe('embedding worker with an HTTP embedder', () => {
  it('keeps an item that failed to embed under its lease, retries it once the lease expired, and falls back while the endpoint is down', async () => {
    const endpoint = await startEmbeddingsEndpoint();
    const remote = await startTestApp({ embedder: embedderFromEnv({ EMBEDDINGS_URL: endpoint.url, EMBEDDINGS_API_KEY: 'emb-test-key' }) });
    try {
      const t = await tenant(remote);
      expect((await remote.api('POST', `${W}/sections`, { key: t.key, body: { label: 'Docs' } })).status).toBe(201);
      const body = {
        title: 'Password reset',
        section: 'docs',
        markdown: '## Steps\n\nRequest a **reset** [link](https://example.com/r) in `Settings`.',
      };
      expect((await remote.api('POST', `${W}/articles`, { key: t.key, body })).status).toBe(201);
      const db = remote.server.orm.em.fork().getConnection();
      const queue = () =>
        db.execute('select attempts, claimed_until > clock_timestamp() as leased from embedding_queue where workspace_id = ?', [
          t.workspace.id,
        ]);
      const ask = (q: string) => remote.api('GET', `${W}/search?q=${q}&semantic=true`, { key: t.key });
      endpoint.state.healthy = false;
      await expect(remote.server.drainEmbeddings(t.workspace.id)).rejects.toThrow(/answered 503/);
      expect(await queue()).toEqual([{ attempts: 1, leased: true }]);
      expect((await ask('password')).headers.get('x-search-fallback')).toBe('embeddings_pending');
      endpoint.state.healthy = true;
      // Under its lease nobody takes the item again (a worker that died holding it only delays it) ...
      expect(await remote.server.drainEmbeddings(t.workspace.id)).toBe(0);
      expect(await queue()).toEqual([{ attempts: 1, leased: true }]);
      // ... and once the lease has run out (aged here, only this workspace's row), the next pass retries it.
      await db.execute(`update embedding_queue set claimed_until = clock_timestamp() - interval '1 second' where workspace_id = ?`, [
        t.workspace.id,
      ]);
      expect(await remote.server.drainEmbeddings(t.workspace.id)).toBe(1);
      expect(await queue()).toEqual([]);
      const found = await ask('password');
      expect(found.headers.get('x-search-ranking')).toBe('semantic');
      expect(found.body.map((h: { slug: string }) => h.slug)).toEqual(['password-reset']);
      expect(new Set(endpoint.state.authorizations)).toEqual(new Set(['Bearer emb-test-key']));
      // The encoder reads each passage as a reader would, without Markdown's marks, under the title and its heading.
      expect(endpoint.state.inputs).toContain('Password reset: Steps. Request a reset link in Settings.');
      // With nothing pending, an endpoint that fails a (new) query is "unavailable", never a 500.
      endpoint.state.healthy = false;
      const down = await ask('reset');
      expect(down.status).toBe(200);
      expect(down.headers.get('x-search-fallback')).toBe('embedder_unavailable');
      expect(down.body.map((h: { slug: string }) => h.slug)).toEqual(['password-reset']);
    } finally {
      await remote.close();
      await endpoint.close();
    }
  });

  it('treats an endpoint that cannot be reached as unavailable', async () => {
    const endpoint = await startEmbeddingsEndpoint();
    await endpoint.close(); // its port now refuses connections
    const remote = await startTestApp({ embedder: embedderFromEnv({ EMBEDDINGS_URL: endpoint.url }) });
    try {
      const t = await tenant(remote);
      const res = await remote.api('GET', `${W}/search?q=anything&semantic=true`, { key: t.key });
      expect(res.status).toBe(200);
      expect(res.headers.get('x-search-fallback')).toBe('embedder_unavailable');
    } finally {
      await remote.close();
    }
  });
});

describe('phrases', () => {
  it('finds exactly the documents a phrase matches, whatever the pairs index narrows', async () => {
    const t = await tenant(app);
    await docs(t, [
      ['Domain events', 'How a domain event is stored.'],
      ['Events', 'The domain of every event.'],
      ['Title ends with domain', 'Event sourcing explained.'],
      ['Hyphens', 'A domain-event bus.'],
      ['Reversed', 'Event domain, reversed.'],
      ['Three words', 'Read the domain event log daily.'],
      ['Repeated', 'domain domain event event'],
    ]);
    const truth = async (q: string) =>
      (
        await app.server.orm.em
          .fork()
          .getConnection()
          .execute(`select slug from articles where workspace_id = ? and search @@ websearch_to_tsquery('english', ?) order by slug`, [
            t.workspace.id,
            q,
          ])
      ).map((r) => (r as { slug: string }).slug);
    const phrases = [
      '"domain event"',
      '"domain event log"',
      '"domain of every event"',
      '"event domain"',
      '"domain-event"',
      '"domain event" -hyphens',
      '"domain event" or reversed',
      '-"domain event"',
      '"domain event" "event log"',
    ];
    for (const q of phrases) {
      const res = await search(t, `q=${encodeURIComponent(q)}&limit=50`);
      expect(res.status, q).toBe(200);
      expect(res.body.map((h: { slug: string }) => h.slug).sort(), q).toEqual(await truth(q));
    }
    // Plain words are ranked retrieval: any of them finds (PostgreSQL's `or`).
    const words = await search(t, `q=${encodeURIComponent('domain event')}&limit=50`);
    expect(words.body.map((h: { slug: string }) => h.slug).sort()).toEqual(await truth('domain or event'));
    // The title's last word and the body's first are adjacent in the search vector, as PostgreSQL's phrase match has them.
    expect(await truth('"domain event"')).toEqual(['domain-events', 'hyphens', 'repeated', 'three-words', 'title-ends-with-domain']);
  });
});

describe('portable vector index (ranking in process, one cache per process)', () => {
  it('ranks as exact cosine does within the rounding of its bytes, and a second process sees added, rewritten and removed vectors and model changes', async () => {
    const t = await tenant(app);
    const em = freshEm(app.server.orm);
    // Two indexes stand for two processes: one writes, the other's cache must follow.
    const [writer, reader] = [await VectorIndex.open(em, { portable: true }), await VectorIndex.open(em, { portable: true })];
    const mirror = new Map<number, { vec: number[]; model: string }>();
    const vector = () => Array.from({ length: 16 }, () => Math.random() - 0.5);
    const store = async (id: number, vec: number[], model = 'm1') => {
      await em.transactional((tx) => writer.store(tx, t.workspace.id, 'article', id, model, [{ vector: vec, text: null }]));
      mirror.set(id, { vec, model });
    };
    const cos = (a: number[], b: number[]) => a.reduce((sum, x, i) => sum + x * b[i], 0) / Math.hypot(...a) / Math.hypot(...b);
    /** nearest() must equal a brute-force sort of what was stored. */
    const check = async (q: number[], limit: number, model = 'm1'): Promise<Neighbour[]> => {
      await compare(vector(), 20, model); // a random query too: every row must map to its item
      return compare(q, limit, model);
    };
    const compare = async (q: number[], limit: number, model: string) => {
      const expected = [...mirror]
        .filter(([, v]) => v.model === model)
        .map(([id, v]) => ({ id, s: cos(v.vec, q) }))
        .sort((a, b) => b.s - a.s)
        .slice(0, limit);
      const got = await reader.nearest(em, t.workspace.id, ['article'], q, model, limit);
      // The rows are kept as bytes (search/dots.ts): each hit's similarity is its own item's cosine, and
      // each rank holds an item as near as the exact ranking's, within that rounding (16 dimensions: 0.02).
      expect(got.length).toBe(expected.length);
      got.forEach((n, i) => {
        const own = cos(mirror.get(n.itemId)!.vec, q);
        expect(mirror.get(n.itemId)!.model).toBe(model);
        expect(Math.abs(n.similarity - own)).toBeLessThan(0.02);
        expect(own).toBeGreaterThan(expected[i].s - 0.02);
      });
      return got;
    };
    // Ids far from the tests' serial ids (and from an earlier run's on the same database), in this tenant's workspace only.
    const base = 1_000_000 + 1000 * Math.floor(Math.random() * 1_000_000);
    for (let i = 0; i < 200; i++) await store(base + i, vector());
    await check(vector(), 10);
    const probe = mirror.get(base + 17)!.vec.map((x) => x + 0.01);
    expect((await check(probe, 1))[0].itemId).toBe(base + 17);
    // The reader's cache is warm; the writer adds, rewrites and removes.
    await store(base + 500, probe);
    // Both at a cosine of ~1 to the probe (closer than the bytes tell apart), so in either order.
    expect((await check(probe, 2)).map((n) => n.itemId).sort((a, b) => a - b)).toEqual([base + 17, base + 500]);
    await store(base + 17, vector());
    await check(probe, 5);
    await em.transactional((tx) => removeEmbeddings(tx, 'article', [base + 500]));
    mirror.delete(base + 500);
    expect((await check(probe, 5)).map((n) => n.itemId)).not.toContain(base + 500);
    // Re-embedded with another model: it leaves the old model's set and joins the new one's.
    const moved = (await check(probe, 1))[0].itemId;
    await store(moved, probe, 'm2');
    expect((await check(probe, 5)).map((n) => n.itemId)).not.toContain(moved);
    expect((await check(probe, 1, 'm2'))[0].itemId).toBe(moved);
  });

  it('ranks an item by its best passages, and a re-embedded item by its new passages only', async () => {
    const t = await tenant(app);
    const em = freshEm(app.server.orm);
    const [writer, reader] = [await VectorIndex.open(em, { portable: true }), await VectorIndex.open(em, { portable: true })];
    const axis = (i: number) => Array.from({ length: 8 }, (_, j) => (j === i ? 1 : 0));
    const store = (id: number, vectors: number[][]) =>
      em.transactional((tx) =>
        writer.store(
          tx,
          t.workspace.id,
          'article',
          id,
          'mp',
          vectors.map((vector, i) => ({ vector, text: `passage ${i}` })),
        ),
      );
    const base = 2_000_000 + 1000 * Math.floor(Math.random() * 1_000_000);
    await store(base, [axis(0), axis(1), axis(2)]); // its third passage points along axis 2
    await store(base + 1, [axis(3)]);
    const near = (q: number[]) => reader.nearest(em, t.workspace.id, ['article'], q, 'mp', 2);
    // Its score is the mean of its best passages (all three here): the floor is checked on the best one.
    expect((await near(axis(2)))[0]).toEqual({
      itemType: 'article',
      itemId: base,
      passage: 2,
      similarity: expect.closeTo(1, 5),
      score: expect.closeTo(1 / 3, 5),
    });
    // Re-embedded with one passage (the text changed): the old third passage no longer ranks, in the other process's cache too.
    await store(base, [axis(4)]);
    const after = await near(axis(2));
    expect(after.find((n) => n.itemId === base)?.similarity ?? 0).toBeCloseTo(0, 5);
    expect((await near(axis(4)))[0]).toEqual({
      itemType: 'article',
      itemId: base,
      passage: 0,
      similarity: expect.closeTo(1, 5),
      score: expect.closeTo(1, 5),
    });
    expect((await near(axis(3)))[0].itemId).toBe(base + 1);
    // Two passages that both answer outrank one passage closer still among many that do not.
    const tilted = (i: number, toward: number, amount: number) => axis(i).map((x, j) => (j === toward ? amount : x));
    await store(base + 2, [tilted(5, 6, 1), tilted(5, 6, 1)]); // each at cos 0.71 to axis 6
    await store(base + 3, [tilted(7, 6, 4), axis(0), axis(1), axis(2), axis(3), axis(4), axis(5), axis(7)]); // one at 0.97, the rest 0
    const ranked = await reader.nearest(em, t.workspace.id, ['article'], axis(6), 'mp', 2);
    expect(ranked.map((n) => n.itemId)).toEqual([base + 2, base + 3]);
    expect(ranked[1].similarity).toBeGreaterThan(ranked[0].similarity);
  });
});

describe('content gaps (21)', () => {
  const report = (t: Tenant, body: Record<string, unknown>, key = t.key) => app.api('POST', `${W}/content-gaps`, { key, body });
  const reports = async (t: Tenant) =>
    (await app.gql('query($w: ID!) { contentGapReports(workspaceId: $w) { id question slug slugKnown redacted } }', { w: t.workspace.id }))
      .data.contentGapReports;

  it('answers 202 and keeps exactly the first 256 characters, never splitting a surrogate pair', async () => {
    const t = await tenant(app);
    const res = await report(t, { question: 'q'.repeat(300) });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ message: expect.stringContaining('256'), reported: true });
    expect((await reports(t))[0].question).toHaveLength(256);
    await report(t, { question: `${'a'.repeat(255)}😀😀` });
    const kept = (await reports(t))[0].question;
    expect(Array.from(kept)).toHaveLength(256);
    expect(kept.endsWith('😀')).toBe(true);
  });

  it('redacts e-mail addresses, agent keys, other secrets and phone numbers, and says so', async () => {
    const t = await tenant(app);
    const res = await report(t, {
      question:
        `Why does ana.lopez@example.com get 401 with ${t.key} and sk-abcdefghijklmnop1234 or token Zk3x9QpL2mN8vR4tY7wB1cD5fG6hJ0 — call +1 ` +
        `(415) 555-0134?`,
    });
    expect(res.status).toBe(202);
    expect(res.body.message).toMatch(/removed e-mail addresses, secrets, phone numbers/);
    const [stored] = await reports(t);
    expect(stored.redacted).toBe(true);
    expect(stored.question).toBe('Why does [email] get 401 with [secret] and [secret] or token [secret] — call [phone]?');
    const plain = await report(t, { question: 'How do I rotate keys in version 2.10?' });
    expect(plain.body.message).not.toMatch(/removed/);
    expect((await reports(t))[0]).toMatchObject({ question: 'How do I rotate keys in version 2.10?', redacted: false });
  });

  it('keeps an unknown slug flagged, accepts an empty report, each call adds one report; 403 without permission', async () => {
    const t = await tenant(app);
    await docs(t, [['Keys', 'About keys.']]);
    expect((await report(t, { question: 'where?', slug: 'no-such-page' })).body.message).toMatch(/no article has the slug/);
    await report(t, { question: 'keys?', slug: 'keys' });
    await report(t, {});
    const list = await reports(t);
    expect(list).toHaveLength(3);
    expect(list[1]).toMatchObject({ slug: 'keys', slugKnown: true });
    expect(list[2]).toMatchObject({ slug: 'no-such-page', slugKnown: false });
    expect((await report(t, { question: 5 })).status).toBe(400);
    expect((await report(t, { extra: 1 })).status).toBe(400);
    const denied = await tenant(app, { permissions: ['search.read'] });
    const res = await report(denied, { question: 'x' });
    expect(res.status).toBe(403);
    expect(res.body.error.details).toEqual({ missing: ['content_gap.report'] });
  });

  it('groups similar reports and zero-result searches for dashboards, with counts and the nearest article', async () => {
    const t = await tenant(app);
    await docs(t, [['Recovering account credentials', 'If you forgot your login secret, request a reset link.']]);
    await report(t, { question: 'How do I reset my password?' });
    await report(t, { question: 'How can I reset my password' });
    await search(t, 'q=reset%20my%20password%20please%20now');
    await report(t, { question: 'What is the refund policy for annual plans?' });
    await app.server.drainEmbeddings(t.workspace.id);
    const groups = (
      await app.gql(
        'query($w: ID!) { contentGapGroups(workspaceId: $w) { id label reportCount searchCount firstSeen lastSeen nearestArticleSlug resolvedAt } }',
        { w: t.workspace.id },
      )
    ).data.contentGapGroups;
    console.log(
      'content-gap groups:',
      JSON.stringify(groups.map((g: any) => [g.label, g.reportCount, g.searchCount, g.nearestArticleSlug])),
    );
    const password = groups.find((g: any) => /password/.test(g.label));
    expect(password).toMatchObject({ reportCount: 2, nearestArticleSlug: 'recovering-account-credentials' });
    expect(groups.find((g: any) => /refund/.test(g.label))).toMatchObject({ reportCount: 1, searchCount: 0 });
    expect(groups.reduce((n: number, g: any) => n + g.reportCount, 0)).toBe(3);
    expect(groups.reduce((n: number, g: any) => n + g.searchCount, 0)).toBe(1);
    const resolved = await app.gql('mutation($id: Int!) { resolveContentGapGroup(id: $id) { id resolvedAt } }', { id: password.id });
    expect(resolved.data.resolveContentGapGroup.resolvedAt).toBeTruthy();
    const open = (await app.gql('query($w: ID!) { contentGapGroups(workspaceId: $w) { id } }', { w: t.workspace.id })).data
      .contentGapGroups;
    expect(open.map((g: any) => g.id)).not.toContain(password.id);
  });
});
