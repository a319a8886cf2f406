/** The request loads the scenario table's variants send (autocannon options and request generators). */
import { randomBytes } from 'node:crypto';
import type autocannon from 'autocannon';
import { png as makePng } from '../../test/support/images.js';
import { FTS_QUERIES, FTS_QUESTIONS, FTS_WARM_QUERIES, FTS_WARM_QUESTIONS, noteBody, SEMANTIC_QUERIES, sentence, WORDS } from './corpus.js';
import { statusCount } from './measure.js';
import { notePath, NOTES } from './seeding.js';
import type { AutocannonLoad, Bench } from './types.js';

const NOTE_API = '/api/v1/workspaces/-/memory/note';
/** Seeded notes in a scattered order (7919 is prime): one hot row would measure its lock, not the server. */
const scattered = (n: number) => (n * 7919) % NOTES;

/** GET requests to `route` + `?path=` of every seeded note in turn, scattered. */
export function spreadGets(b: Bench, route: string, headers: Record<string, string>): AutocannonLoad {
  let n = 0;
  return {
    options: {
      url: b.base,
      headers,
      requests: [{ setupRequest: (req) => ({ ...req, path: `${route}?path=${notePath(scattered(n++))}` }) }],
    },
  };
}

/**
 * The seeded notes in turn, scattered, each with a new body of 1–4 KB (64 drawn once, each sent
 * with its request number) or, `small`, of a few bytes (the database's share shrinks, the server's
 * shows): what every PUT load of the bench sends, whichever server it goes to.
 */
function noteUpdateStream(small = false): () => { path: string; body: string } {
  let u = 0;
  const bodies = Array.from({ length: 64 }, (_, i) => (small ? '' : noteBody(i)));
  return () => {
    const path = notePath(scattered(u++));
    return { path, body: `${bodies[u % 64]}\nupdated ${u}` };
  };
}

/** PUT requests to `url` updating the seeded notes (see noteUpdateStream). */
export function noteUpdates(url: string, headers: Record<string, string>, small = false): AutocannonLoad {
  const next = noteUpdateStream(small);
  return {
    options: {
      url,
      method: 'PUT',
      headers: { ...headers, 'content-type': 'application/json' },
      requests: [{ setupRequest: (req) => ({ ...req, body: JSON.stringify({ ...next(), kind: 'note', links: [], tags: [] }) }) }],
    },
  };
}

/** PUT requests to `url` creating a new path each, with bodies of 1–4 KB. */
export function noteCreates(url: string, headers: Record<string, string>): AutocannonLoad {
  let n = 0;
  // Paths new to every load; bodies of 1–4 KB drawn from 64, so most creates have near-duplicates to find and score.
  const prefix = `bench/${randomBytes(4).toString('hex')}`;
  const bodies = Array.from({ length: 64 }, (_, i) => noteBody(i));
  const body = () =>
    JSON.stringify({ path: `${prefix}/${n}`, body: `${bodies[n % 64]}\ncreated ${n++}`, kind: 'note', links: [], tags: [] });
  return {
    options: {
      url,
      method: 'PUT',
      headers: { ...headers, 'content-type': 'application/json' },
      requests: [{ setupRequest: (req) => ({ ...req, body: body() }) }],
    },
  };
}

/** The note's path under the service's API. */
export const serviceNote = (b: Bench, path: string): string => `${b.base}${NOTE_API}?path=${path}`;
/** The service's note route (without query). */
export const SERVICE_NOTE_ROUTE = NOTE_API;

/** A header of an autocannon answer, whatever the case of its name. */
function header(headers: Record<string, unknown> | undefined, name: string): string | undefined {
  const key = Object.keys(headers ?? {}).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : headers?.[key];
  return typeof value === 'string' ? value : undefined;
}

/**
 * The sidebar tree, each request sending `If-None-Match` with the ETag of the previous answer
 * (any connection's: all see the same tree); the note counts 304s against 200s.
 */
export function conditionalTree(b: Bench): AutocannonLoad {
  let etag: string | undefined;
  let tagged = 0;
  return {
    options: {
      url: `${b.base}/api/v1/workspaces/-/articles`,
      headers: b.auth,
      requests: [
        {
          setupRequest: (req) => (etag ? { ...req, headers: { ...req.headers, 'if-none-match': etag } } : req),
          onResponse: (_status, _body, _context, headers) => {
            const found = header(headers, 'etag');
            if (found) [etag, tagged] = [found, tagged + 1];
          },
        },
      ],
    },
    okStatuses: [304],
    note: (results: autocannon.Result[]) => {
      const count = (s: number) => results.reduce((n, r) => n + statusCount(r, [s]), 0);
      return `${count(304)} × 304, ${count(200)} × 200${tagged ? '' : ' (no ETag in the answers)'}`;
    },
  };
}

/** POST of a ~1 MiB PNG (multipart), 16 fresh random bytes per request so every upload is stored (no deduplication). */
export function pngUploads(b: Bench): AutocannonLoad {
  const png = makePng(1024, 1023, false, true); // ~1 MiB of incompressible pixels
  const boundary = 'benchboundary';
  const multipart = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n`),
    png,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  const head = multipart.subarray(0, 300);
  const tail = multipart.subarray(316);
  return {
    options: {
      url: `${b.base}/api/v1/workspaces/-/uploads`,
      method: 'POST',
      headers: { ...b.auth, 'content-type': `multipart/form-data; boundary=${boundary}` },
      requests: [{ setupRequest: (req) => ({ ...req, body: Buffer.concat([head, randomBytes(16), tail]) }) }],
    },
  };
}

/** An agent's mix: 70 % reads (a note or the changelog), 20 % note writes, 10 % full-text search. */
export function mixedWorkload(b: Bench): AutocannonLoad {
  let m = 0;
  const next = (req: autocannon.Request): autocannon.Request => {
    const r = Math.random();
    m++;
    if (r < 0.7) {
      const path = m % 2 ? `${NOTE_API}?path=${notePath(m)}` : '/api/v1/workspaces/-/changelog?limit=20';
      return { ...req, method: 'GET', path };
    }
    if (r < 0.9) {
      const body = JSON.stringify({ path: `mixed/${m % 500}`, body: sentence(20), kind: 'note', links: [], tags: [] });
      return { ...req, method: 'PUT', path: NOTE_API, headers: { ...b.auth, 'content-type': 'application/json' }, body };
    }
    return { ...req, method: 'GET', path: `/api/v1/workspaces/-/search?q=${WORDS[m % WORDS.length]}` };
  };
  return { options: { url: b.base, headers: b.auth, requests: [{ setupRequest: next }] } };
}

/** A search request's path: full text, semantic (the `semantic=true` agents send), or hybrid. */
export const searchPath = (q: string, ranking: 'fulltext' | 'semantic' | 'hybrid' = 'fulltext'): string =>
  `/api/v1/workspaces/-/search?q=${encodeURIComponent(q)}${ranking === 'semantic' ? '&semantic=true' : ranking === 'hybrid' ? '&mode=hybrid' : ''}`;
/** Full-text searches as agents send them. */
export const FTS_PATHS = FTS_QUERIES.map((q) => searchPath(q));
/** Full-text searches of the same shapes, asked only to warm the service up. */
export const FTS_WARM_PATHS = FTS_WARM_QUERIES.map((q) => searchPath(q));
/** Twenty-word questions by full text, and others to warm up with. */
export const FTS_QUESTION_PATHS = FTS_QUESTIONS.map((q) => searchPath(q));
export const FTS_WARM_QUESTION_PATHS = FTS_WARM_QUESTIONS.map((q) => searchPath(q));
/** Distinct natural-language questions, ranked semantically. */
export const SEMANTIC_PATHS = SEMANTIC_QUERIES.map((q) => searchPath(q, 'semantic'));
/** The same questions, ranked by both rankings fused. */
export const HYBRID_PATHS = SEMANTIC_QUERIES.map((q) => searchPath(q, 'hybrid'));
/** Questions that differ from SEMANTIC_PATHS, to warm the model up without filling the query-vector cache. */
export const SEMANTIC_WARM_PATHS = SEMANTIC_QUERIES.map((q) => searchPath(`what about the ${q.slice(9)}`, 'semantic'));
/** Hybrid questions asked nowhere else in the bench, so every one is embedded (no query-vector cache hit). */
export const HYBRID_NEW_PATHS = SEMANTIC_QUERIES.map((q) => searchPath(`tell me about the ${q.slice(9)}`, 'hybrid'));

/** GET requests cycling through `paths` on the service. */
export function cycling(b: Bench, paths: string[], headers: Record<string, string>): AutocannonLoad {
  let n = 0;
  return {
    options: { url: b.base, headers, requests: [{ setupRequest: (req) => ({ ...req, path: paths[n++ % paths.length] }) }] },
  };
}

/**
 * Waits (up to a minute) for the embedding queue to empty: zero-result searches queue their question
 * for embedding (content gaps), and that background work must not overlap a measurement. PostgreSQL only.
 */
export async function embeddingIdle(b: Bench): Promise<void> {
  for (let waited = 0; b.pool && waited < 240; waited++) {
    const { rows } = await b.pool.query<{ n: number }>('select count(*)::int as n from embedding_queue');
    if (rows[0].n === 0) return;
    await new Promise((r) => setTimeout(r, 250));
  }
}

/**
 * Waits until the service has run 20 s (its start-up work is done: the model loaded, the first
 * housekeeping pass run) and, on PostgreSQL, its embedding queue is empty: measured requests then
 * compete only with the load the scenario makes.
 */
export async function settledService(b: Bench): Promise<void> {
  for (;;) {
    const { uptimeSeconds } = (await (await fetch(`${b.service}/healthz`)).json()) as { uptimeSeconds: number };
    if (uptimeSeconds >= 20) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  await embeddingIdle(b);
}

/** The note's fields as PostGraphile names them (the plain table's columns; `id` is `rowId` there). */
const POSTGRAPHILE_NOTE_FIELDS = 'rowId workspaceId path kind body links tags createdAt updatedAt accessedAt';

/** PostGraphile's read of a note by its unique (workspace, path) key (variables `w`, `p`). */
export const POSTGRAPHILE_NOTE_QUERY = `query($w: UUID!, $p: String!) { noteByWorkspaceIdAndPath(workspaceId: $w, path: $p) { ${POSTGRAPHILE_NOTE_FIELDS} } }`;

/** POSTs to PostGraphile's /graphql, each request's operation and variables from `next`. */
function postgraphilePosts(b: Bench, next: () => { query: string; variables: Record<string, unknown> }): AutocannonLoad {
  return {
    options: {
      url: `${b.base}/graphql`,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      requests: [{ setupRequest: (req) => ({ ...req, body: JSON.stringify(next()) }) }],
    },
  };
}

/** PostGraphile's GET: every seeded note in turn, scattered. */
export function postgraphileGets(b: Bench): AutocannonLoad {
  let n = 0;
  return postgraphilePosts(b, () => ({ query: POSTGRAPHILE_NOTE_QUERY, variables: { w: b.workspaceId, p: notePath(scattered(n++)) } }));
}

/** PostGraphile's PUT: its generated update by (workspace, path), with the service's updates (noteUpdateStream). */
export function postgraphileUpdates(b: Bench): AutocannonLoad {
  const next = noteUpdateStream();
  const query = `mutation($w: UUID!, $p: String!, $patch: NotePatch!) {
    updateNoteByWorkspaceIdAndPath(input: { workspaceId: $w, path: $p, notePatch: $patch }) { note { ${POSTGRAPHILE_NOTE_FIELDS} } } }`;
  return postgraphilePosts(b, () => {
    const { path, body } = next();
    const patch = { body, kind: 'note', links: [], tags: [], updatedAt: new Date().toISOString() };
    return { query, variables: { w: b.workspaceId, p: path, patch } };
  });
}
