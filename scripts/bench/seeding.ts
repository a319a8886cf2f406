/** Seeds the bench's data through the service's public API (and, for the large search corpus, bulk SQL). */
import type pg from 'pg';
import { noisy, noteBody, random, sentence, WORDS } from './corpus.js';
import { log } from './options.js';

/** A REST call on the workspace of `auth` (`/api/v1/workspaces/-…`) that must succeed. */
async function call(url: string, auth: Record<string, string>, method: string, path: string, body: unknown): Promise<void> {
  const res = await fetch(`${url}/api/v1/workspaces/-${path}`, {
    method,
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  await res.arrayBuffer();
  if (res.status >= 300) throw new Error(`${method} ${path} → ${res.status}`);
}

/** Runs `make(0 … n-1)` 100 at a time, with progress. */
async function batch(label: string, n: number, make: (i: number) => Promise<void>): Promise<void> {
  const started = Date.now();
  for (let i = 0; i < n; i += 100) {
    await Promise.all(Array.from({ length: Math.min(100, n - i) }, (_, j) => make(i + j)));
    if ((i / 100) % 20 === 0) log(`seeding ${label}: ${Math.min(i + 100, n)}/${n}`);
  }
  log(`seeded ${n} ${label} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

/** The seeded note paths: `team/<i % 50>/note-<i>`, i < NOTES. */
export const NOTES = 10_000;
/** The path of seeded note `i` (taken modulo NOTES). */
export const notePath = (i: number): string => `team/${(i % NOTES) % 50}/note-${i % NOTES}`;

/** 10,000 memory notes of 1–4 KB (or only those numbered in `only`), each linking to the next and tagged with a common word. */
export async function seedNotes(url: string, auth: Record<string, string>, only?: number[]): Promise<void> {
  await batch('memory notes', only?.length ?? NOTES, (n) => {
    const i = only ? only[n] : n;
    return call(url, auth, 'PUT', '/memory/note', {
      path: notePath(i),
      body: noteBody(i),
      kind: 'note',
      links: [notePath(i + 1)],
      tags: [WORDS[i % WORDS.length]],
    });
  });
}

/** 20 sections, 2,000 articles (the sidebar tree) and 1,000 published changelog entries. */
export async function seedArticles(url: string, auth: Record<string, string>): Promise<void> {
  await batch('sections', 20, (i) => call(url, auth, 'POST', '/sections', { label: `Section ${i}`, key: `section-${i}` }));
  await batch('articles', 2_000, (i) =>
    call(url, auth, 'POST', '/articles', {
      title: `Article ${i} ${sentence(4)}`,
      section: `section-${i % 20}`,
      markdown: `# Article ${i}\n\n${sentence(200)}`,
    }),
  );
  await batch('changelog entries', 1_000, (i) =>
    call(url, auth, 'POST', '/changelog', {
      title: `Release ${i}`,
      markdown: sentence(80),
      status: 'published',
      tags: ['release'],
      published_at: new Date(Date.now() - i * 60_000).toISOString(),
    }),
  );
}

/**
 * Waits until the service's worker has embedded what was seeded in the key's workspace (the 2,000
 * articles and 1,000 changelog entries: about 3,000 items at ~150 ms each, several minutes), or `maxSeconds`.
 */
export async function waitForEmbeddings(url: string, auth: Record<string, string>, maxSeconds = Infinity): Promise<void> {
  log(
    `waiting for the embedding worker to embed what was seeded in the workspace${maxSeconds < Infinity ? ` (at most ${maxSeconds} s)` : ''} …`,
  );
  const started = Date.now();
  const seconds = () => Math.round((Date.now() - started) / 1000);
  for (let polls = 1; ; polls++) {
    const res = await fetch(`${url}/api/v1/workspaces/-/search?q=deploy&semantic=true`, { headers: auth });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`semantic search answered ${res.status} while waiting for embeddings`);
    if (res.headers.get('x-search-fallback') !== 'embeddings_pending') break;
    if (seconds() >= maxSeconds) {
      log(`stopped waiting after ${seconds()} s: semantic rows partly measure the full-text fallback (the note column counts them)`);
      return;
    }
    if (polls % 15 === 0) log(`  still embedding after ${seconds()} s …`);
    await new Promise((r) => setTimeout(r, 2000));
  }
  log(`embedded in ${seconds()} s`);
}

/**
 * Search corpus (PostgreSQL): 200 articles through the API (embedded by the service's worker with
 * the real model), the rest by bulk SQL with distinct generated texts; a bulk row's vector is a real
 * article's vector plus noise (cosine ~0.75–0.95 to it), so similarities are spread as in real
 * data while seeding 10k articles takes seconds, not the model's hour.
 */
export async function seedSearchCorpus(url: string, auth: Record<string, string>, workspaceId: string, pool: pg.Pool, articles: number) {
  await call(url, auth, 'POST', '/sections', { label: 'Corpus', key: 'corpus' });
  await batch('search articles through the API', 200, (i) =>
    call(url, auth, 'POST', '/articles', { title: `Guide ${i}: ${sentence(4)}`, section: 'corpus', markdown: sentence(150) }),
  );
  // Other workspaces' embedding work is irrelevant here and would compete with the measurements.
  await pool.query('delete from embedding_queue where workspace_id <> $1', [workspaceId]);
  for (let waited = 0; ; waited += 2) {
    const { rows } = await pool.query<{ n: number }>('select count(*)::int as n from embedding_queue where workspace_id = $1', [
      workspaceId,
    ]);
    if (rows[0].n === 0) break;
    if (waited % 10 === 0) log(`waiting for the embedding worker: ${rows[0].n} of 200 articles left`);
    await new Promise((r) => setTimeout(r, 2000));
  }
  await bulkArticles(pool, workspaceId, articles - 200);
  // What autovacuum does after a bulk load on a server that runs it (hint bits, visibility map,
  // statistics), so the measured searches do not pay for the first reading of 100k fresh rows.
  await pool.query('vacuum (analyze) articles, embeddings');
  log(`search corpus ready: ${articles} articles`);
}

/** Passages per bulk article: its text (≈900 characters) cut as the worker cuts it (600-character windows, 150 of overlap). */
const BULK_PASSAGES = 2;

/** Inserts `extra` articles, each with BULK_PASSAGES passages that are noisy copies of the API articles' passage vectors, 1,000 articles per statement. */
async function bulkArticles(pool: pg.Pool, workspaceId: string, extra: number): Promise<void> {
  const { rows: vecs } = await pool.query<{ vec: Buffer }>(`select vec from embeddings where workspace_id = $1 and item_type = 'article'`, [
    workspaceId,
  ]);
  const sources = vecs.map((r) => new Float32Array(new Uint8Array(r.vec).buffer));
  const { rows: sections } = await pool.query<{ id: number }>('select id from sections where workspace_id = $1 and key = $2', [
    workspaceId,
    'corpus',
  ]);
  log(`seeding ${extra} more articles with vectors for search (bulk SQL) …`);
  for (let i = 0; i < extra; i += 1000) {
    const n = Math.min(1000, extra - i);
    const titles = Array.from({ length: n }, () => sentence(5));
    const bodies = Array.from({ length: n }, () => `${sentence(60)}\n\n${sentence(90)}`);
    const { rows: inserted } = await pool.query<{ id: number }>(
      `insert into articles (workspace_id, section_id, slug, title, markdown, status, visibility, position, version, created_at, updated_at)
       select $1, $2, 'bulk-' || ($3::int + o - 1), t, b, 'STABLE', 'public', 10000 + $3::int + o, 1, now(), now()
         from unnest($4::text[], $5::text[]) with ordinality as x(t, b, o) returning id`,
      [workspaceId, sections[0].id, i, titles, bodies],
    );
    const ids = inserted.flatMap((r) => Array.from({ length: BULK_PASSAGES }, () => r.id));
    const passages = inserted.flatMap(() => Array.from({ length: BULK_PASSAGES }, (_, p) => p));
    const vectors = ids.map(() => noisy(sources[Math.floor(random() * sources.length)]));
    const texts = ids.map((_, i) => bodies[Math.floor(i / BULK_PASSAGES)].slice(passages[i] * 450, passages[i] * 450 + 600));
    // Written as the service writes them: under a bumped workspace stamp (caches see the rows).
    await pool.query(
      `with s as (update embedding_stamps set revision = revision + 1 where workspace_id = $1 returning revision)
       insert into embeddings (item_type, item_id, passage, workspace_id, model, vec, passage_text, revision, updated_at)
       select 'article', x, p, $1, 'use-lite-512', v, t, (select revision from s), now()
         from unnest($2::int[], $3::int[], $4::bytea[], $5::text[]) as u(x, p, v, t)`,
      [workspaceId, ids, passages, vectors, texts],
    );
    await pool.query('delete from embedding_queue where workspace_id = $1', [workspaceId]);
    if ((i / 1000) % 10 === 0) log(`  ${i + n}/${extra}`);
  }
}
