import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SEMANTIC_SHARE } from '../src/search/fusion.js';
import { startTestApp, type TestApp } from './support/app.js';
import { tenant, type Tenant } from './support/factories.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ embeddingWorker: false });
});
afterAll(async () => app?.close());

const W = '/api/v1/workspaces/-';
const search = (t: Tenant, query: string) => app.api('GET', `${W}/memory/search?${query}`, { key: t.key });
const put = (t: Tenant, path: string, body: string, tags: string[] = []) =>
  app.api('PUT', `${W}/memory/note`, { key: t.key, body: { path, body, kind: 'note', links: [], tags } });
const paths = (res: { body: any[] }) => res.body.map((h) => h.path);

/** Notes where the words of a question and its meaning point at different notes. */
const NOTES: [string, string][] = [
  ['ops/credentials', 'If you forgot your login secret, request a reset link from the sign-in page.'],
  ['ops/password-rules', 'A password needs twelve characters. Reset intervals are set by your administrator.'],
  ['billing/invoices', 'Invoices are sent monthly; plans can be changed at any time.'],
  ['integrations/webhooks', 'Receive events over HTTP with signed requests.'],
  ['team/members', 'Invite people to the workspace and give them roles.'],
];

async function notes(t: Tenant, list = NOTES) {
  for (const [path, body] of list) expect((await put(t, path, body)).status).toBe(200);
}

/** The number of rows of a count query (`?` parameters) on the app's database. */
async function count(on: TestApp, query: string, params: unknown[]): Promise<number> {
  const [row] = await on.server.orm.em.fork().getConnection().execute(`select count(*)::int as n from ${query}`, params);
  return row.n as number;
}
const queued = (workspaceId: string) => count(app, `embedding_queue where item_type = 'note' and workspace_id = ?`, [workspaceId]);

/** The workspace's first semantic memory search turns note embeddings on; then the worker embeds them. */
async function embedNotes(t: Tenant) {
  expect((await search(t, 'q=anything&mode=semantic')).status).toBe(200);
  await app.server.drainEmbeddings(t.workspace.id);
}

describe('semantic and hybrid memory search (mode=semantic|hybrid)', () => {
  it("embeds a workspace's notes from its first search by meaning, then ranks by meaning; full text stays the default", async () => {
    const t = await tenant(app);
    await notes(t);
    // Nothing is embedded in a workspace that never searched its notes by meaning.
    expect(await queued(t.workspace.id)).toBe(0);
    const q = 'q=' + encodeURIComponent('reset my password');
    // The first one queues every note and falls back to full text, saying why.
    const pending = await search(t, `${q}&mode=semantic`);
    expect(pending.status).toBe(200);
    expect(pending.headers.get('x-search-ranking')).toBe('fulltext');
    expect(pending.headers.get('x-search-fallback')).toBe('embeddings_pending');
    expect(paths(pending)).toEqual(['ops/password-rules', 'ops/credentials']);
    expect(await queued(t.workspace.id)).toBe(NOTES.length);

    await app.server.drainEmbeddings(t.workspace.id);
    expect(await queued(t.workspace.id)).toBe(0);
    const fullText = await search(t, q);
    expect(fullText.headers.get('x-search-ranking')).toBe('fulltext');
    expect(fullText.headers.get('x-search-fallback')).toBeNull();
    expect(paths(fullText)).toEqual(['ops/password-rules', 'ops/credentials']);

    const semantic = await search(t, `${q}&mode=semantic`);
    expect(semantic.status).toBe(200);
    expect(semantic.headers.get('x-search-ranking')).toBe('semantic');
    expect(paths(semantic)).toContain('ops/credentials');
    const similarities = semantic.body.map((h: any) => h.score);
    expect([...similarities].sort((a, b) => b - a)).toEqual(similarities);
    expect(similarities.every((s: number) => s >= 0.3 && s <= 1)).toBe(true);
    expect(Object.keys(semantic.body[0]).sort()).toEqual(['kind', 'path', 'score', 'snippet', 'tags', 'updatedAt']);

    const hybrid = await search(t, `${q}&mode=hybrid&explain=true`);
    expect(hybrid.headers.get('x-search-ranking')).toBe('hybrid');
    expect(new Set(paths(hybrid))).toEqual(
      new Set([...paths(fullText), ...hybrid.body.filter((h: any) => h.explain.semantic).map((h: any) => h.path)]),
    );
    // The note full text ranks first and the embeddings find too comes first: all of full text's share and some of theirs.
    expect(hybrid.body[0].path).toBe('ops/password-rules');
    expect(hybrid.body[0].explain).toMatchObject({ fullText: { rank: 1 }, semantic: { rank: expect.any(Number) }, fusedRank: 1 });
    expect(hybrid.body[0].score).toBeGreaterThan(1 - SEMANTIC_SHARE);
    expect(hybrid.body[0].snippet).toContain('<mark>');
  });

  it('re-embeds a note whose body or tags change, not one whose kind or links change; a deleted note leaves the ranking', async () => {
    const t = await tenant(app);
    await notes(t, NOTES.slice(0, 2));
    await embedNotes(t);
    expect(await count(app, `embeddings where item_type = 'note' and workspace_id = ?`, [t.workspace.id])).toBe(2);
    const changeKind = await app.api('PUT', `${W}/memory/note`, {
      key: t.key,
      body: { path: 'ops/credentials', body: NOTES[0][1], kind: 'runbook', links: ['ops/password-rules'], tags: [] },
    });
    expect(changeKind.status).toBe(200);
    expect(await queued(t.workspace.id)).toBe(0);
    expect((await put(t, 'ops/credentials', NOTES[0][1], ['login'])).status).toBe(200);
    expect(await queued(t.workspace.id)).toBe(1);
    await app.server.drainEmbeddings(t.workspace.id);

    const before = await search(t, `q=${encodeURIComponent('forgot my login secret')}&mode=semantic`);
    expect(paths(before)[0]).toBe('ops/credentials');
    expect((await app.api('DELETE', `${W}/memory/note?path=ops/credentials`, { key: t.key })).status).toBe(200);
    expect(await count(app, `embeddings where item_type = 'note' and workspace_id = ?`, [t.workspace.id])).toBe(1);
    const after = await search(t, `q=${encodeURIComponent('forgot my login secret')}&mode=semantic`);
    expect(paths(after)).not.toContain('ops/credentials');
  });

  it("never ranks another workspace's notes, and pages semantic results with a cursor that keeps the ranking", async () => {
    const a = await tenant(app);
    const b = await tenant(app);
    await notes(b);
    await notes(
      a,
      Array.from({ length: 7 }, (_, i) => [`runbooks/password-${i}`, `How to reset a password, step ${i}.`] as [string, string]),
    );
    await embedNotes(a);
    await embedNotes(b);
    for (const mode of ['semantic', 'hybrid']) {
      const first = await search(a, `q=password&mode=${mode}&limit=3`);
      expect(first.status).toBe(200);
      expect(first.headers.get('x-search-ranking')).toBe(mode);
      expect(first.body).toHaveLength(3);
      const next = /<([^>]+)>; rel="next"/.exec(first.headers.get('link') ?? '')?.[1];
      expect(next).toBeDefined();
      const url = new URL(next!, 'http://x');
      const second = await app.api('GET', `${url.pathname}${url.search}`, { key: a.key });
      expect(second.headers.get('x-search-ranking')).toBe(mode);
      const all = await search(a, `q=password&mode=${mode}&limit=7`);
      expect([...paths(first), ...paths(second)]).toEqual(paths(all).slice(0, 6));
      // The cursor, not the query's mode, decides the ranking of a later page.
      const cursor = url.searchParams.get('cursor')!;
      for (const other of ['', '&mode=fulltext', `&mode=${mode === 'semantic' ? 'hybrid' : 'semantic'}`]) {
        const again = await search(a, `q=password&limit=3&cursor=${cursor}${other}`);
        expect(again.headers.get('x-search-ranking'), other).toBe(mode);
        expect(paths(again), other).toEqual(paths(second));
      }
      expect(paths(all).every((p: string) => p.startsWith('runbooks/'))).toBe(true);
    }
    // B's credentials note is the closest by meaning, but only B sees it.
    const forB = await search(b, `q=${encodeURIComponent('forgot my login secret')}&mode=semantic`);
    expect(paths(forB)[0]).toBe('ops/credentials');
    const forA = await search(a, `q=${encodeURIComponent('forgot my login secret')}&mode=semantic`);
    expect(paths(forA)).not.toContain('ops/credentials');
  });

  it('answers 400 for an unknown mode and a foreign cursor; a full-text cursor keeps its old shape', async () => {
    const t = await tenant(app);
    await notes(
      t,
      Array.from({ length: 3 }, (_, i) => [`n/${i}`, `password note ${i}`] as [string, string]),
    );
    for (const bad of ['q=password&mode=best', 'q=password&mode=semantic&cursor=bm90LWEtY3Vyc29y', 'q=%20&mode=hybrid']) {
      const res = await search(t, bad);
      expect(res.status, bad).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
    }
    const first = await search(t, 'q=password&limit=1');
    expect(first.headers.get('x-search-ranking')).toBe('fulltext');
    const cursor = new URL(/<([^>]+)>; rel="next"/.exec(first.headers.get('link') ?? '')![1], 'http://x').searchParams.get('cursor')!;
    expect(JSON.parse(Buffer.from(cursor, 'base64url').toString())).toEqual([1]);
  });
});

describe('with MEMORY_EMBEDDINGS=off', () => {
  let off: TestApp;
  beforeAll(async () => {
    off = await startTestApp({ embeddingWorker: false, memoryEmbeddings: false });
  });
  afterAll(async () => off?.close());

  it('queues no note for embedding, and semantic memory search falls back to full text', async () => {
    const t = await tenant(off);
    const res = await off.api('PUT', `${W}/memory/note`, {
      key: t.key,
      body: { path: 'a/b', body: 'password reset steps', kind: 'note', links: [], tags: [] },
    });
    expect(res.status).toBe(200);
    const found = await off.api('GET', `${W}/memory/search?q=password&mode=semantic`, { key: t.key });
    expect(await count(off, 'embedding_queue where workspace_id = ?', [t.workspace.id])).toBe(0);
    expect(found.status).toBe(200);
    expect(found.headers.get('x-search-ranking')).toBe('fulltext');
    expect(found.headers.get('x-search-fallback')).toBe('embedder_unavailable');
    expect(found.body.map((h: any) => h.path)).toEqual(['a/b']);
  });
});
