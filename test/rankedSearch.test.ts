import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { bm25Reference } from './support/bm25Reference.js';
import { serviceClient, type ServiceClient } from './support/app.js';
import { createKey, createMember, tenant, type Tenant } from './support/factories.js';
import { spawnService, type ServiceProcess } from './support/processes.js';
import { freshEm } from '../src/db/orm.js';
import { FullTextIndexes, rankFullText } from '../src/search/fullText.js';

// Ranked retrieval (BM25F) through every door: questions in plain words, web-search syntax, pages
// as slices of one ranking, explain, long questions, the content-gap rule, and two service
// instances that each hold the workspace's terms in process and see each other's writes at once.
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ embeddingWorker: false });
});
afterAll(async () => app?.close());

const W = '/api/v1/workspaces/-';

async function docs(client: ServiceClient, t: Tenant, pages: [string, string, Record<string, unknown>?][]) {
  await client.api('POST', `${W}/sections`, { key: t.key, body: { label: 'Docs' } });
  for (const [title, markdown, extra] of pages) {
    const res = await client.api('POST', `${W}/articles`, { key: t.key, body: { title, section: 'docs', markdown, ...extra } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  }
}

const search = (t: Tenant, query: string, key = t.key) => app.api('GET', `${W}/search?${query}`, { key });
const slugs = (body: { slug: string | null; id: number | null }[]) => body.map((h) => h.slug ?? `changelog:${h.id}`);

/** Every page of a search, followed through its `Link: rel="next"` headers. */
async function allPages(client: ServiceClient, t: Tenant, path: string): Promise<any[]> {
  const seen: any[] = [];
  for (let url: string | null = path; url;) {
    const res: { status: number; headers: Headers; body: any[] } = await client.api('GET', url, { key: t.key });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    seen.push(...res.body);
    url = /<([^>]+)>; rel="next"/.exec(res.headers.get('link') ?? '')?.[1] ?? null;
  }
  return seen;
}

/** A small documentation set where questions are asked in plain words. */
const MANUAL: [string, string][] = [
  ['Rotating API keys', '# Rotation\n\nCreate a new key, deploy it, then revoke the old key. Keys expire after a year.'],
  ['Webhooks', '# Delivery\n\nEvents are delivered over HTTPS with retries.\n\n## Signatures\n\nEach delivery is signed with the secret.'],
  ['Rate limits', 'Each key may send 600 requests a minute; past it the API answers 429 with Retry-After.'],
  ['Roll back a release', '# Roll back\n\nRedeploy the previous release from the releases page.'],
  ['Billing', 'Invoices are sent monthly. Plans can be changed at any time.'],
  ['Exporting data', 'Export a workspace as an archive of its articles, notes and changelog.'],
  ['Team members', 'Invite members by e-mail and give each a role: viewer, editor, admin or owner.'],
];

describe('ranked retrieval over articles and the changelog', () => {
  it('finds the page for a question whose words are not all in it, ranked by BM25F exactly as computed from the search columns', async () => {
    const t = await tenant(app);
    await docs(app, t, MANUAL);
    const question = 'how do I rotate an expired api key without downtime';
    const res = await search(t, `q=${encodeURIComponent(question)}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-search-ranking')).toBe('fulltext');
    expect(res.body[0].slug).toBe('rotating-api-keys');
    expect(res.body[0].snippet).toMatch(/<mark>/);
    // The whole ranking equals the reference BM25F computed in SQL over the same tsvectors.
    const reference = await bm25Reference(app, t.workspace.id, question);
    const got = await allPages(app, t, `${W}/search?q=${encodeURIComponent(question)}&limit=2`);
    expect(got.map((h) => [h.slug, h.score])).toEqual(reference.map((r) => [r.key, expect.closeTo(r.score, 5)]));
    // A heading's words weigh above the body's alone.
    expect(slugs((await search(t, 'q=signatures')).body)).toEqual(['webhooks']);
    // A word written as one where the docs write two is read as the two: "rollback" finds "Roll back".
    const rollback = await search(t, 'q=rollback');
    expect(slugs(rollback.body)).toEqual(['roll-back-a-release']);
    expect(rollback.body[0].snippet).toMatch(/<mark>Roll<\/mark> <mark>back<\/mark>/);
  });

  it('keeps web-search syntax: a quoted phrase must appear, -word must not, `or` joins a phrase to an alternative', async () => {
    const t = await tenant(app);
    await docs(app, t, [
      ['Domain events', 'How a domain event is stored.'],
      ['Events', 'The domain of every event.'],
      ['Hyphens', 'A domain-event bus.'],
      ['Reversed', 'Event domain, reversed.'],
      ['Logs', 'Read the domain event log daily.'],
    ]);
    const found = async (q: string) => {
      const res = await search(t, `q=${encodeURIComponent(q)}&limit=50`);
      expect(res.status, `${q}: ${JSON.stringify(res.body)}`).toBe(200);
      return res.body.map((h: any) => h.slug).sort();
    };
    expect(await found('domain event')).toEqual(['domain-events', 'events', 'hyphens', 'logs', 'reversed']);
    expect(await found('"domain event"')).toEqual(['domain-events', 'hyphens', 'logs']);
    expect(await found('"domain event" -hyphens')).toEqual(['domain-events', 'logs']);
    expect(await found('"domain event" or reversed')).toEqual(['domain-events', 'hyphens', 'logs', 'reversed']);
    expect(await found('"domain event" "event log"')).toEqual(['logs']);
    expect(await found('-"domain event"')).toEqual(['events', 'reversed']);
    expect(await found('event -reversed -hyphens')).toEqual(['domain-events', 'events', 'logs']);
    // Quoted text nothing holds (a citation in a question) narrows to nothing: the words rank instead.
    expect(await found('domain events, as in "the event sourcing handbook"')).toEqual([
      'domain-events',
      'events',
      'hyphens',
      'logs',
      'reversed',
    ]);
  });

  it('ranks by the words when quoted text is held only by what the caller may not read, as when nothing holds it', async () => {
    const t = await tenant(app, { plan: 'pro' });
    await docs(app, t, [['Domain events', 'How a domain event is stored.']]);
    await app.api('POST', `${W}/sections`, { key: t.key, body: { label: 'Internal', visibility: 'restricted' } });
    const secret = await app.api('POST', `${W}/articles`, {
      key: t.key,
      body: { title: 'Escrow', section: 'internal', markdown: 'The vault phrase is kept here. Domain event notes.' },
    });
    expect(secret.status).toBe(201);
    const member = await createMember(app, t.org.id, { role: 'viewer' });
    const viewer = (await createKey(app, member.id, { permissions: ['search.read'], workspaceId: t.workspace.id })).key;
    const asViewer = async (q: string) => slugs((await search(t, `q=${encodeURIComponent(q)}`, viewer)).body);
    expect(await asViewer('domain event "vault phrase"')).toEqual(await asViewer('domain event "phrase held nowhere"'));
    expect(await asViewer('domain event "vault phrase"')).toEqual(['domain-events']);
    // The owner's key reads the restricted article: the phrase narrows to it.
    expect(slugs((await search(t, `q=${encodeURIComponent('domain event "vault phrase"')}`)).body)).toEqual(['escrow']);
  });

  it('answers operator storms, stop words and NUL-free oddities as text, never a 5xx (REST, memory, GraphQL, MCP)', async () => {
    const t = await tenant(app);
    await docs(app, t, MANUAL);
    const storms = [
      '-'.repeat(50),
      '- '.repeat(200),
      '!-'.repeat(250),
      '"'.repeat(99),
      '(((( ))))',
      '<-> <-> :* & | !',
      'or or or',
      'the of and',
    ];
    for (const q of storms) {
      for (const path of ['search', 'memory/search']) {
        const res = await app.api('GET', `${W}/${path}?q=${encodeURIComponent(q)}`, { key: t.key });
        expect(res.status, `${path} ${q.slice(0, 20)}`).toBe(200);
        expect(res.body).toEqual([]);
      }
      const gql = await app.gql('query($q: String!) { search(workspace: "-", q: $q) { items { slug } } }', { q }, t.key);
      expect(gql.errors, q.slice(0, 20)).toBeUndefined();
    }
    for (const [tool, q] of [
      ['search', '-'.repeat(50)],
      ['memory_search', '!-'.repeat(250)],
    ]) {
      const res = await fetch(`${app.url}/mcp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: tool, arguments: { q } } }),
      });
      expect(res.status).toBe(200);
      const answer = await res.json();
      expect(answer.result.isError ?? false, JSON.stringify(answer)).toBe(false);
    }
  });

  it('takes a question of 2,000 characters (ranked by its rarest words) and refuses 2,001 naming q', async () => {
    const t = await tenant(app);
    await docs(app, t, MANUAL);
    const filler = 'please tell me about the thing that I need to know regarding this service and its many features ';
    let long = `${filler.repeat(30)} invoices monthly`;
    long = long.slice(long.length - 2000);
    expect(long).toHaveLength(2000);
    const res = await search(t, `q=${encodeURIComponent(long)}`);
    expect(res.status).toBe(200);
    expect(res.body[0].slug).toBe('billing');
    const refused = await search(t, `q=${encodeURIComponent(`${long}x`)}`);
    expect(refused.status).toBe(400);
    expect(refused.body.error.details[0].field).toBe('q');
  });

  it('explains each hit on request: its rank and BM25F score per field and term; nothing extra without it', async () => {
    const t = await tenant(app);
    await docs(app, t, MANUAL);
    const plain = await search(t, 'q=delivery%20signatures');
    expect(plain.body[0]).not.toHaveProperty('explain');
    const res = await search(t, 'q=delivery%20signatures&explain=true');
    expect(res.status).toBe(200);
    const [top] = res.body;
    expect(top.slug).toBe('webhooks');
    const { fullText } = top.explain;
    expect(fullText.rank).toBe(1);
    expect(fullText.score).toBeCloseTo(top.score, 5);
    expect(fullText.title + fullText.headings + fullText.body).toBeCloseTo(fullText.score, 5);
    // "Delivery" and "Signatures" are headings of the page: they score there and in the body.
    expect(fullText.headings).toBeGreaterThan(0);
    expect(fullText.terms.map((p: { term: string }) => p.term).sort()).toEqual(['deliveri', 'signatur']);
    for (const term of fullText.terms) expect(term.idf).toBeGreaterThan(0);
    expect(top.explain.semantic).toBeNull();
    expect(top.explain.fusedRank).toBeNull();
    const gql = await app.gql(
      'query { search(workspace: "-", q: "delivery", explain: true) { items { slug explain { fullText { rank terms { term } } } } } }',
      {},
      t.key,
    );
    expect(gql.data.search.items[0].explain.fullText.terms).toEqual([{ term: 'deliveri' }]);
    expect((await search(t, 'q=x&explain=maybe')).status).toBe(400);
  });

  it('pages every ranking as slices of one: no repeats, no skips, the same first ten for any limit (full text, semantic, hybrid)', async () => {
    const t = await tenant(app);
    const pages: [string, string][] = [];
    for (let i = 0; i < 26; i++)
      pages.push([`Release notes ${i}`, `${'release '.repeat(1 + (i % 5))}deploy ${i % 3 ? 'rollback' : 'canary'} steps ${i}`]);
    await docs(app, t, pages);
    await app.server.drainEmbeddings(t.workspace.id);
    for (const mode of ['fulltext', 'semantic', 'hybrid']) {
      const q = encodeURIComponent('how to release and roll back a deploy');
      const lists: string[][] = [];
      for (const limit of [1, 3, 10, 50])
        lists.push((await allPages(app, t, `${W}/search?q=${q}&mode=${mode}&limit=${limit}`)).map((h) => h.slug));
      for (const list of lists) {
        expect(new Set(list).size, `${mode}: repeats`).toBe(list.length);
        expect(list, `${mode}: pages of every size walk one ranking`).toEqual(lists[0]);
      }
      expect(lists[0].length, mode).toBeGreaterThan(10);
    }
  });

  it("scores a viewer's search from the public articles alone: restricted ones neither show nor weigh", async () => {
    const t = await tenant(app, { plan: 'pro' });
    await docs(app, t, [
      ['Public rollout', 'rollout steps for canary'],
      ['Public guide', 'canary canary basics'],
      ['Internal rollout', 'rollout rollout rollout secrets', { visibility: 'restricted' }],
      ['Internal plan', 'rollout plan', { visibility: 'restricted' }],
    ]);
    const viewer = await createMember(app, t.org.id, { role: 'viewer' });
    const viewerKey = (await createKey(app, viewer.id, { permissions: ['search.read'], workspaceId: t.workspace.id })).key;
    const asViewer = (await search(t, 'q=rollout%20canary', viewerKey)).body;
    const asEditor = (await search(t, 'q=rollout%20canary')).body;
    expect(slugs(asViewer).sort()).toEqual(['public-guide', 'public-rollout']);
    expect(slugs(asEditor)).toHaveLength(4);
    const scores = (body: any[]) => body.map((h) => [h.slug, h.score]);
    const expected = async (all: boolean) =>
      (await bm25Reference(app, t.workspace.id, 'rollout canary', all)).map((r) => [r.key, expect.closeTo(r.score, 5)]);
    expect(scores(asViewer)).toEqual(await expected(false));
    expect(scores(asEditor)).toEqual(await expected(true));
    // The same page scores differently for the two: the editor's statistics count the restricted articles too.
    const publicRollout = (body: any[]) => body.find((h) => h.slug === 'public-rollout').score;
    expect(Math.abs(publicRollout(asViewer) - publicRollout(asEditor))).toBeGreaterThan(0.01);
  });
});

describe('the content-gap rule', () => {
  it('counts a question the docs answer in part as answered, and one about what the workspace lacks as a gap', async () => {
    const t = await tenant(app);
    await docs(app, t, MANUAL);
    const logged = async () =>
      (
        await app.server.orm.em
          .fork()
          .getConnection()
          .execute(
            `select l.query from search_log l join embedding_queue q on q.item_type = 'search' and q.item_id = l.id where l.workspace_id = ?`,
            [t.workspace.id],
          )
      ).map((r) => (r as { query: string }).query);
    // Most of its weight is in an article: answered, though "safely" is in none.
    await search(t, `q=${encodeURIComponent('how do I rotate api keys safely')}`);
    // Said in other words: the docs write "roll back".
    await search(t, `q=${encodeURIComponent('rollback a release')}`);
    // Found something ("configure" is nowhere, "invoices" is), but the rare words are missing: a gap.
    await search(t, `q=${encodeURIComponent('configure SMTP relay for invoices')}`);
    // Nothing at all: a gap, as before.
    await search(t, `q=${encodeURIComponent('kubernetes helm chart')}`);
    // A later page never counts.
    await search(t, `q=${encodeURIComponent('kubernetes helm chart')}&cursor=WzEwXQ`);
    expect((await logged()).sort()).toEqual(['configure SMTP relay for invoices', 'kubernetes helm chart']);
  });
});

/** The writes another process makes, and what a search must see of each. */
async function writesSeenAcross(
  writer: ServiceClient,
  t: Tenant,
  searchAs: (q: string, corpus: 'content' | 'notes', viewer?: boolean) => Promise<string[]>,
) {
  expect(await searchAs('quasar', 'content')).toEqual([]);
  const write = await writer.api('POST', `${W}/articles`, {
    key: t.key,
    body: { title: 'Quasar setup', section: 'docs', markdown: 'Install quasar.' },
  });
  expect(write.status, JSON.stringify(write.body)).toBe(201);
  expect(await searchAs('quasar', 'content')).toEqual(['quasar-setup']);
  await writer.api('PATCH', `${W}/articles/quasar-setup`, { key: t.key, body: { markdown: 'Install pulsar instead.' } });
  expect(await searchAs('pulsar', 'content')).toEqual(['quasar-setup']);
  expect(await searchAs('quasar', 'content')).toEqual(['quasar-setup']); // still in the title
  expect(await searchAs('install', 'content')).toEqual(['quasar-setup']);
  expect(await searchAs('pulsar', 'content', true)).toEqual(['quasar-setup']);
  await writer.api('PATCH', `${W}/articles/quasar-setup`, { key: t.key, body: { visibility: 'restricted' } });
  expect(await searchAs('pulsar', 'content', true)).toEqual([]);
  expect(await searchAs('pulsar', 'content')).toEqual(['quasar-setup']);
  await writer.api('PATCH', `${W}/articles/quasar-setup`, { key: t.key, body: { status: 'ARCHIVED' } });
  expect(await searchAs('pulsar', 'content')).toEqual([]);
  const entry = await writer.api('POST', `${W}/changelog`, {
    key: t.key,
    body: { title: 'Pulsar support', markdown: 'Now with pulsar.', status: 'published', tags: [], published_at: null },
  });
  expect(await searchAs('pulsar', 'content')).toEqual([`changelog:${entry.body.id}`]);
  await writer.api('DELETE', `${W}/changelog/${entry.body.id}`, { key: t.key });
  expect(await searchAs('pulsar', 'content')).toEqual([]);
  const note = (body: string) =>
    writer.api('PUT', `${W}/memory/note`, { key: t.key, body: { path: 'ops/comet', body, kind: 'note', links: [], tags: [] } });
  expect(await searchAs('runbook', 'notes')).toEqual([]);
  await note('The comet runbook.');
  expect(await searchAs('runbook', 'notes')).toEqual(['ops/comet']);
  await note('Only meteors now.');
  expect(await searchAs('runbook', 'notes')).toEqual([]);
  expect(await searchAs('meteors', 'notes')).toEqual(['ops/comet']);
  await writer.api('DELETE', `${W}/memory/note?path=ops/comet`, { key: t.key });
  expect(await searchAs('meteors', 'notes')).toEqual([]);
}

describe('indexes held apart from the writer', () => {
  it('an index of its own (as another process holds) finds at once what was written, changed, restricted, archived or deleted', async () => {
    const t = await tenant(app, { plan: 'pro' });
    await docs(app, t, [['Kept page', 'nothing special']]);
    // This index learns of writes only from the database, as another process's would.
    const db = freshEm(app.server.orm);
    const apart = new FullTextIndexes(db, 64 * 1024 * 1024);
    await writesSeenAcross(app, t, async (q, corpus, viewer = false) => {
      const { ranking } = await rankFullText(db, apart, { workspace: t.workspace.id, corpus, q, seesRestricted: !viewer, depth: 10 });
      if (corpus === 'content') {
        const slugOf = async (id: number) =>
          ((await db.getConnection().execute('select slug from articles where id = ?', [id])) as { slug: string }[])[0].slug;
        return Promise.all(ranking.hits.map(async (h) => (h.type === 'article' ? slugOf(h.id) : `changelog:${h.id}`)));
      }
      const pathOf = async (id: number) =>
        ((await db.getConnection().execute('select path from memory_notes where id = ?', [id])) as { path: string }[])[0].path;
      return Promise.all(ranking.hits.map((h) => pathOf(h.id)));
    });
    expect(apart.usage().indexes).toBe(2);
    // Past its memory bound the least recently searched index is dropped, and loaded again when next searched.
    const small = new FullTextIndexes(db, 1);
    const rank = async (corpus: 'content' | 'notes', q: string) =>
      (await rankFullText(db, small, { workspace: t.workspace.id, corpus, q, seesRestricted: true, depth: 10 })).ranking.hits.length;
    expect(await rank('content', 'special')).toBe(1);
    expect(await rank('notes', 'special')).toBe(0);
    expect(small.usage().indexes).toBe(1);
    expect(await rank('content', 'special')).toBe(1);
    expect(small.usage()).toMatchObject({ indexes: 1, items: 1 });
  });
});

describe.skipIf(!process.env.DATABASE_URL)('two service processes on one PostgreSQL', () => {
  let other: ServiceProcess;
  beforeAll(async () => {
    other = await spawnService({ DATABASE_URL: process.env.DATABASE_URL!, ADMIN_TOKEN: app.adminToken });
  }, 120_000);
  afterAll(async () => other?.stop());

  it('each finds at once what the other wrote (articles, the changelog, notes; visibility and removals too)', async () => {
    const t = await tenant(app, { plan: 'pro' });
    await docs(app, t, [['Kept page', 'nothing special']]);
    const writer = await serviceClient(other.url, app.adminToken);
    const viewer = await createMember(app, t.org.id, { role: 'viewer' });
    const viewerKey = (await createKey(app, viewer.id, { permissions: ['search.read', 'memory.read'], workspaceId: t.workspace.id })).key;
    await writesSeenAcross(writer, t, async (q, corpus, asViewer = false) => {
      const path = corpus === 'content' ? 'search' : 'memory/search';
      const res = await app.api('GET', `${W}/${path}?q=${encodeURIComponent(q)}`, { key: asViewer ? viewerKey : t.key });
      expect(res.status).toBe(200);
      return corpus === 'content' ? slugs(res.body) : res.body.map((h: { path: string }) => h.path);
    });
  });
});
