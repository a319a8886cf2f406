/**
 * `npm run bench`: starts the service (a child process, on DATABASE_URL or the embedded database),
 * seeds realistic data, and measures scenarios side by side in one run, so the figures that matter
 * are ratios that hold on a noisy machine. Prints a table and writes bench-results/latest.json.
 *
 *   BENCH_DURATION=10  seconds per measurement (after a warm-up)   BENCH_ROUNDS=3  rounds (median kept)
 *   --large            search at 100k articles instead of 10k      --quick          3 s × 1 round
 *   --only=1,4         run only these scenarios (seeding is trimmed to what they need)
 *   BENCH_PROFILE=dir  the service writes a V8 CPU profile (--cpu-prof) into dir when it stops
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import autocannon from 'autocannon';
import pg from 'pg';
import pino from 'pino';
import { startServer } from '../src/server.js';
import { png as makePng } from '../test/support/images.js';
import { spawnService } from '../test/support/processes.js';

const quick = process.argv.includes('--quick');
const large = process.argv.includes('--large');
const DURATION = Number(process.env.BENCH_DURATION ?? (quick ? 3 : 10));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? (quick ? 1 : 3));
const SEARCH_ARTICLES = large ? 100_000 : 10_000;
const only = process.argv.find((a) => a.startsWith('--only='))?.slice(7).split(',').map(Number) ?? null;
const runs = (n: number) => !only || only.includes(n);
const ADMIN = `adm_bench_${randomBytes(8).toString('hex')}`;
const log = (msg: string) => console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}`);

/** p95 is exact for sequential latency runs; autocannon reports p97.5 instead (its fixed percentiles). */
interface Row { scenario: string; variant: string; connections: number; rps: number; p50: number; p95: number | null; p97_5: number | null; p99: number; errors: number; note?: string; perRound?: number[] }
const rows: Row[] = [];

async function gql(url: string, query: string, variables: Record<string, unknown> = {}, token = ADMIN) {
  const res = await fetch(`${url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify({ query, variables }) });
  const json = (await res.json()) as { data: any; errors?: unknown[] };
  if (json.errors) throw new Error(JSON.stringify(json.errors));
  return json.data;
}

/**
 * Variants of one scenario measured side by side: a warm-up each, then ROUNDS rounds in which
 * every variant runs once in turn, so slow and fast phases of a noisy machine hit all variants
 * alike. Each row keeps the median round; `perRound` keeps every round's req/s (for ratios).
 */
async function sideBySide(scenario: string, variants: { variant: string; opts: autocannon.Options }[]): Promise<Row[]> {
  for (const v of variants) await autocannon({ ...v.opts, duration: Math.min(2, DURATION) });
  const results = variants.map(() => [] as autocannon.Result[]);
  for (let round = 0; round < ROUNDS; round++) {
    for (const [i, v] of variants.entries()) results[i].push(await autocannon({ ...v.opts, duration: DURATION }));
  }
  return variants.map((v, i) => {
    const perRound = results[i].map((r) => Math.round(r.requests.average));
    const r = [...results[i]].sort((a, b) => a.requests.average - b.requests.average)[Math.floor(ROUNDS / 2)];
    const row: Row = { scenario, variant: v.variant, connections: v.opts.connections ?? 10, rps: Math.round(r.requests.average), p50: r.latency.p50, p95: null, p97_5: (r.latency as unknown as Record<string, number>).p97_5 ?? null, p99: r.latency.p99, errors: results[i].reduce((n, x) => n + x.errors + x.non2xx, 0), perRound };
    rows.push(row);
    log(`${scenario} / ${v.variant}: ${row.rps} req/s (rounds ${perRound.join(', ')}), p50 ${row.p50} ms, p99 ${row.p99} ms, errors ${row.errors}`);
    return row;
  });
}

/** One variant alone (see sideBySide). */
async function measure(scenario: string, variant: string, opts: autocannon.Options): Promise<Row> {
  return (await sideBySide(scenario, [{ variant, opts }]))[0];
}

/** The median over rounds of a / b, from side-by-side rows. */
function ratio(a: Row | null, b: Row | null): number | null {
  if (!a?.perRound || !b?.perRound) return null;
  const ratios = a.perRound.map((x, i) => x / b.perRound![i]).sort((x, y) => x - y);
  return +ratios[Math.floor(ratios.length / 2)].toFixed(2);
}

/**
 * Latency of one request at a time (no queueing behind other requests): `count` requests cycling
 * through `paths` after `warmPaths` (default: the first 20 paths) and `settle` (background work
 * the warm-up started), exact percentiles. With
 * `ranking`, counts how many answers used it (X-Search-Ranking) and says so.
 */
async function latency(scenario: string, variant: string, base: string, paths: string[], headers: Record<string, string>, count: number, ranking?: string, warmPaths = paths.slice(0, 20), settle = async () => {}): Promise<Row> {
  for (const path of warmPaths) await (await fetch(base + path, { headers })).arrayBuffer();
  await settle();
  const times: number[] = [];
  let errors = 0;
  let ranked = 0;
  const started = performance.now();
  for (let i = 0; i < count; i++) {
    const t = performance.now();
    const res = await fetch(base + paths[i % paths.length], { headers });
    await res.arrayBuffer();
    times.push(performance.now() - t);
    if (res.status !== 200) errors++;
    if (res.headers.get('x-search-ranking') === ranking) ranked++;
  }
  const seconds = (performance.now() - started) / 1000;
  times.sort((a, b) => a - b);
  const at = (p: number) => +times[Math.min(times.length - 1, Math.ceil(p * times.length) - 1)].toFixed(1);
  const row: Row = { scenario, variant, connections: 1, rps: Math.round(count / seconds), p50: at(0.5), p95: at(0.95), p97_5: at(0.975), p99: at(0.99), errors, note: ranking ? `${ranked}/${count} ranked ${ranking}` : undefined };
  rows.push(row);
  log(`${scenario} / ${variant}: sequential ${count} requests, p50 ${row.p50} ms, p95 ${row.p95} ms, p99 ${row.p99} ms, errors ${errors}${row.note ? `, ${row.note}` : ''}`);
  return row;
}

/** A real vector plus Gaussian noise, renormalised (float32 bytes, the portable storage format). */
function noisy(source: Float32Array): Buffer {
  const sigma = 0.015 + random() * 0.03;
  const v = Array.from(source, (x) => x + sigma * Math.sqrt(-2 * Math.log(random() || 1e-9)) * Math.cos(2 * Math.PI * random()));
  const n = Math.hypot(...v);
  return Buffer.from(Float32Array.from(v.map((x) => x / n)).buffer);
}

/**
 * A repeatable synthetic corpus shaped like documentation: words drawn with a Zipf distribution
 * (a few very common words, a long tail) from ~200 real technical words followed by 4,000
 * generated ones, so a query word matches a realistic share of the articles (a common word a few
 * tens of percent, a two-word query a few percent) instead of all of them.
 */
const REAL_WORDS = `deploy release rollback service cluster node database index query cache queue worker token key secret password
account user team member role permission workspace project article section page draft review proposal approve reject
publish archive version history changelog entry note memory path tag search result snippet rank score semantic vector
embedding model upload image file size limit quota plan billing invoice payment webhook event delivery retry signature
endpoint request response header status error timeout latency throughput metric alert log trace monitor dashboard
config setting environment variable schema migration backup restore replica shard partition lock transaction commit
network proxy certificate domain redirect origin cors session cookie login logout reset recover rotate revoke expire
agent tool prompt context window batch stream cursor pagination filter sort order group count average report gap
install upgrade downgrade build test lint format bundle package dependency registry mirror artifact pipeline stage job
schedule cron trigger hook plugin extension theme layout sidebar navigation link anchor heading table list code block
diagram chart export import sync detach attach spec operation parameter payload field type format validation rule
storage bucket object region zone latency availability outage incident postmortem runbook oncall escalation support`.split(/\s+/);
const CONSONANTS = 'bcdfghklmnprstvz';
const VOWELS = 'aeiou';
function rng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const random = rng(42);
const VOCABULARY = [...REAL_WORDS, ...Array.from({ length: 4000 }, (_, i) => {
  let w = '';
  for (let n = i + 7; w.length < 6 || n > 0; n = Math.floor(n / 80)) w += CONSONANTS[n % 16] + VOWELS[Math.floor(n / 16) % 5];
  return w;
})];
const ZIPF = (() => {
  const cumulative: number[] = [];
  let total = 0;
  // Zipf–Mandelbrot (offset 20): the head of a plain Zipf law is the stop words, which full-text
  // search drops; the most common content word then appears in most articles, a rank-100 one in ~1 in 5.
  for (let r = 0; r < VOCABULARY.length; r++) cumulative.push((total += 1 / (r + 20)));
  return cumulative.map((c) => c / total);
})();
function word(): string {
  const x = random();
  let lo = 0;
  let hi = ZIPF.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (ZIPF[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return VOCABULARY[lo];
}
const sentence = (n: number) => Array.from({ length: n }, word).join(' ');
const WORDS = REAL_WORDS.slice(0, 30);
/**
 * Full-text queries as agents send them: content words drawn uniformly from the real vocabulary
 * (so some are among the corpus's most common words and match most articles), alone, in pairs,
 * and a few with websearch operators.
 */
const FTS_QUERIES = (() => {
  const pick = rng(7);
  const w = () => REAL_WORDS[Math.floor(pick() * REAL_WORDS.length)];
  return [
    ...Array.from({ length: 30 }, w),
    ...Array.from({ length: 24 }, () => `${w()} ${w()}`),
    ...Array.from({ length: 2 }, () => `"${w()} ${w()}"`),
    ...Array.from({ length: 2 }, () => `${w()} or ${w()}`),
    ...Array.from({ length: 2 }, () => `${w()} -${w()}`),
  ];
})();
/** Natural-language questions, all distinct (so every one is embedded: no query-vector cache hits). */
const VERBS = ['change', 'reset', 'rotate', 'configure', 'delete', 'restore', 'export', 'upgrade', 'debug', 'monitor', 'limit', 'share'];
const NOUNS = ['password', 'api key', 'webhook', 'workspace', 'backup', 'release', 'database', 'team member', 'invoice', 'upload', 'search index', 'rate limit', 'session', 'certificate', 'changelog', 'draft article'];
const SEMANTIC_QUERIES = VERBS.flatMap((v) => NOUNS.map((n) => `how do I ${v} the ${n}`));

async function main() {
  const databaseUrl = process.env.DATABASE_URL;
  log(`${cpus().length} cores (${availableParallelism()} available), database: ${databaseUrl ? 'PostgreSQL (DATABASE_URL)' : 'embedded PGlite'}, ${DURATION} s × ${ROUNDS} rounds per scenario`);
  if (!databaseUrl) log('note: on the embedded database the plain-pg baseline and multi-process figures are skipped (PGlite belongs to one process)');
  const dataDir = databaseUrl ? undefined : `./bench-results/data-${Date.now()}`;
  // BENCH_PROFILE=<dir>: the service writes a V8 CPU profile there when the bench ends.
  const profile = process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : [];
  const { url, stop } = await spawnService({ OUTBOUND_ALLOW_LOOPBACK: 'false', ADMIN_TOKEN: ADMIN, RATE_LIMIT_MAX: '100000000', EMBEDDINGS: 'local', ...(databaseUrl ? { DATABASE_URL: databaseUrl } : { DATA_DIR: dataDir! }) }, profile);
  log(`service at ${url}`);
  try {
    // Tenant and key.
    const org = (await gql(url, 'mutation { createOrganization(input: { name: "Bench", plan: "enterprise" }) { id } }')).createOrganization;
    const ws = (await gql(url, 'mutation($o: ID!) { createWorkspace(input: { organizationId: $o, name: "Bench" }) { id } }', { o: org.id })).createWorkspace;
    const member = (await gql(url, 'mutation($o: ID!) { createMember(input: { organizationId: $o, email: "bench@example.com", role: "owner" }) { id } }', { o: org.id })).createMember;
    const perms = ['article.read', 'article.create', 'changelog.read', 'changelog.update', 'changelog.publish', 'memory.read', 'memory.write', 'search.read', 'upload.image', 'section.create'];
    const key = (await gql(url, 'mutation($m: ID!, $w: ID!, $p: [String!]!) { createAgentKey(input: { memberId: $m, name: "bench", permissions: $p, workspaceId: $w }) { key } }', { m: member.id, w: ws.id, p: perms })).createAgentKey.key;
    const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    // The search corpus lives in its own workspace, so the tree and list scenarios see 2k articles.
    const searchWs = (await gql(url, 'mutation($o: ID!) { createWorkspace(input: { organizationId: $o, name: "Search" }) { id } }', { o: org.id })).createWorkspace;
    const searchKey = (await gql(url, 'mutation($m: ID!, $w: ID!, $p: [String!]!) { createAgentKey(input: { memberId: $m, name: "bench-search", permissions: $p, workspaceId: $w }) { key } }', { m: member.id, w: searchWs.id, p: perms })).createAgentKey.key;
    const searchAuth = { authorization: `Bearer ${searchKey}`, 'content-type': 'application/json' };

    // Seed through the public API (notes, sections, articles, changelog), in parallel batches.
    const post = (method: string, path: string, body: unknown, headers = auth) => fetch(`${url}/api/v1/workspaces/-${path}`, { method, headers, body: JSON.stringify(body) }).then((r) => { if (r.status >= 300) throw new Error(`${method} ${path} → ${r.status}`); });
    const batch = async (label: string, n: number, make: (i: number) => Promise<void>) => {
      const started = Date.now();
      for (let i = 0; i < n; i += 100) {
        await Promise.all(Array.from({ length: Math.min(100, n - i) }, (_, j) => make(i + j)));
        if ((i / 100) % 20 === 0) log(`seeding ${label}: ${Math.min(i + 100, n)}/${n}`);
      }
      log(`seeded ${n} ${label} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    };
    if (runs(1) || runs(2) || runs(6)) await batch('memory notes', 10_000, (i) => post('PUT', '/memory/note', { path: `team/${i % 50}/note-${i}`, body: `# Note ${i}\n${sentence(60)}`, kind: 'note', links: [`team/${(i + 1) % 50}/note-${i + 1}`], tags: [WORDS[i % WORDS.length]] }));
    // The embedded database has no bulk-SQL search corpus: scenario 4 searches these articles there.
    if (runs(3) || runs(6) || (runs(4) && !databaseUrl)) {
      await batch('sections', 20, (i) => post('POST', '/sections', { label: `Section ${i}`, key: `section-${i}` }));
      await batch('articles', 2_000, (i) => post('POST', '/articles', { title: `Article ${i} ${sentence(4)}`, section: `section-${i % 20}`, markdown: `# Article ${i}\n\n${sentence(200)}` }));
      await batch('changelog entries', 1_000, (i) => post('POST', '/changelog', { title: `Release ${i}`, markdown: sentence(80), status: 'published', tags: ['release'], published_at: new Date(Date.now() - i * 60_000).toISOString() }));
    }

    // Search corpus: 200 articles through the API (embedded by the service's worker with the real
    // model), the rest by bulk SQL with distinct generated texts; a bulk row's vector is a real
    // article's vector plus noise (cosine ~0.75–0.95 to it), so similarities are spread as in real
    // data while seeding 10k articles takes seconds, not the model's hour. Needs DATABASE_URL.
    let pool: pg.Pool | null = null;
    if (databaseUrl) pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
    if (pool && runs(4)) {
      await post('POST', '/sections', { label: 'Corpus', key: 'corpus' }, searchAuth);
      await batch('search articles through the API', 200, (i) => post('POST', '/articles', { title: `Guide ${i}: ${sentence(4)}`, section: 'corpus', markdown: sentence(150) }, searchAuth));
      // Other workspaces' embedding work is irrelevant here and would compete with the measurements.
      await pool.query('delete from embedding_queue where workspace_id <> $1', [searchWs.id]);
      for (let waited = 0; ; waited += 2) {
        const [{ n }] = (await pool.query('select count(*)::int as n from embedding_queue where workspace_id = $1', [searchWs.id])).rows;
        if (n === 0) break;
        if (waited % 10 === 0) log(`waiting for the embedding worker: ${n} of 200 articles left`);
        await new Promise((r) => setTimeout(r, 2000));
      }
      const sources = (await pool.query('select vec from embeddings where workspace_id = $1', [searchWs.id])).rows.map((r) => new Float32Array(new Uint8Array(r.vec).buffer));
      const extra = SEARCH_ARTICLES - 200;
      const [{ id: sectionId }] = (await pool.query('select id from sections where workspace_id = $1 and key = $2', [searchWs.id, 'corpus'])).rows;
      log(`seeding ${extra} more articles with vectors for search (bulk SQL) …`);
      for (let i = 0; i < extra; i += 1000) {
        const n = Math.min(1000, extra - i);
        const titles = Array.from({ length: n }, () => sentence(5));
        const bodies = Array.from({ length: n }, () => `${sentence(60)}\n\n${sentence(90)}`);
        const { rows: inserted } = await pool.query(
          `insert into articles (workspace_id, section_id, slug, title, markdown, status, visibility, position, version, created_at, updated_at)
           select $1, $2, 'bulk-' || ($3::int + o - 1), t, b, 'STABLE', 'public', 10000 + $3::int + o, 1, now(), now()
             from unnest($4::text[], $5::text[]) with ordinality as x(t, b, o) returning id`,
          [searchWs.id, sectionId, i, titles, bodies],
        );
        const vectors = inserted.map(() => noisy(sources[Math.floor(random() * sources.length)]));
        // Written as the service writes them: under a bumped workspace stamp (caches see the rows).
        await pool.query(
          `with s as (update embedding_stamps set revision = revision + 1 where workspace_id = $1 returning revision)
           insert into embeddings (item_type, item_id, workspace_id, model, vec, revision, updated_at)
           select 'article', x, $1, 'use-lite-512', v, (select revision from s), now() from unnest($2::int[], $3::bytea[]) as u(x, v)`,
          [searchWs.id, inserted.map((r) => r.id), vectors],
        );
        await pool.query('delete from embedding_queue where workspace_id = $1', [searchWs.id]);
        if ((i / 1000) % 10 === 0) log(`  ${i + n}/${extra}`);
      }
      await pool.query('analyze articles; analyze embeddings');
      log(`search corpus ready: ${SEARCH_ARTICLES} articles`);
    } else if (runs(4)) {
      // About 3,000 items at ~150 ms each on the model's thread: several minutes.
      log('waiting for the embedding worker to embed the seeded articles and changelog (3,000 items) …');
      const started = Date.now();
      for (let polls = 1; ; polls++) {
        const res = await fetch(`${url}/api/v1/workspaces/-/search?q=deploy&semantic=true`, { headers: auth });
        if (res.headers.get('x-search-fallback') !== 'embeddings_pending') break;
        if (polls % 15 === 0) log(`  still embedding after ${Math.round((Date.now() - started) / 1000)} s …`);
        await new Promise((r) => setTimeout(r, 2000));
      }
      log(`embedded in ${((Date.now() - started) / 1000).toFixed(0)} s`);
    }

    const H = { authorization: `Bearer ${key}` };
    const notePath = 'team/7/note-7';
    // 1. GET a note: REST vs the same query over POST /graphql vs the plain-pg baseline, side by side.
    let rest: Row | null = null;
    let graphql: Row | null = null;
    let baseline: Row | null = null;
    // The plain-pg baselines run in a process of their own, as the service does (PostgreSQL only).
    const baselines = databaseUrl && (runs(1) || runs(2)) ? await spawnService({ DATABASE_URL: databaseUrl, WORKSPACE_ID: ws.id, POOL: '20' }, [], 'scripts/bench-baselines.ts') : null;
    if (runs(1)) {
      [rest, graphql, baseline = null] = await sideBySide('1 GET note', [
        { variant: 'REST', opts: { url: `${url}/api/v1/workspaces/-/memory/note?path=${notePath}`, connections: 10, headers: H } },
        {
          variant: 'POST /graphql',
          opts: {
            url: `${url}/graphql`, connections: 10, method: 'POST', headers: { ...H, 'content-type': 'application/json' },
            body: JSON.stringify({ query: 'query($p: String!) { memoryNote(workspace: "-", path: $p) { id workspaceId path kind body links tags createdAt updatedAt accessedAt } }', variables: { p: notePath } }),
          },
        },
        ...(baselines ? [{ variant: 'plain pg baseline', opts: { url: `${baselines.url}/note?path=${notePath}`, connections: 10 } }] : []),
      ]);
    }
    // 2. PUT note at 50 connections: updates spread over the 10k seeded paths (one hot row would
    //    measure its lock, not the service), side by side with the same statement sent by the
    //    plain-pg baseline; then creates of new paths; then the database alone (pgbench).
    if (runs(2)) {
      const updates = (target: string, headers: Record<string, string>) => {
        let u = 0;
        return { url: target, connections: 50, method: 'PUT' as const, headers: { ...headers, 'content-type': 'application/json' }, requests: [{ setupRequest: (req: any) => { const i = (u++ * 7919) % 10_000; return { ...req, body: JSON.stringify({ path: `team/${i % 50}/note-${i}`, body: `updated ${u}`, kind: 'note', links: [], tags: [] }) }; } }] };
      };
      await sideBySide('2 PUT note', [
        { variant: 'update', opts: updates(`${url}/api/v1/workspaces/-/memory/note`, H) },
        ...(baselines ? [{ variant: 'update, plain pg baseline (note + audit + outbox, one statement)', opts: updates(`${baselines.url}/note`, {}) }] : []),
      ]);
      let n = 0;
      await measure('2 PUT note', 'create', {
        url: `${url}/api/v1/workspaces/-/memory/note`, connections: 50, method: 'PUT', headers: { ...H, 'content-type': 'application/json' },
        requests: [{ setupRequest: (req: any) => ({ ...req, body: JSON.stringify({ path: `bench/${process.pid}/${n++}`, body: 'new', kind: 'note', links: [], tags: [] }) }) }],
      });
      if (databaseUrl) await pgbenchUpdate(databaseUrl, ws.id);
    }
    await baselines?.stop();
    // 3. Lists.
    if (runs(3)) {
      await measure('3 lists', 'changelog limit=50', { url: `${url}/api/v1/workspaces/-/changelog?limit=50`, connections: 10, headers: H });
      await measure('3 lists', 'article tree', { url: `${url}/api/v1/workspaces/-/articles`, connections: 10, headers: H });
    }
    // 4. Search: latency from sequential requests (exact percentiles; every semantic query distinct,
    //    so each is embedded, then the same queries again, answered from the query-vector cache),
    //    and throughput at 10 connections.
    if (runs(4)) {
      const searchH = databaseUrl ? { authorization: `Bearer ${searchKey}` } : H;
      const corpus = databaseUrl ? SEARCH_ARTICLES : 2_000;
      const searchPath = (q: string, semantic = false) => `/api/v1/workspaces/-/search?q=${encodeURIComponent(q)}${semantic ? '&semantic=true' : ''}`;
      const fts = FTS_QUERIES.map((q) => searchPath(q));
      const semantic = SEMANTIC_QUERIES.map((q) => searchPath(q, true));
      // One request at a time on an otherwise idle service: zero-result searches queue their
      // question for embedding (content gaps); that background work finishes before measuring.
      const idle = async () => {
        for (let waited = 0; pool && waited < 240; waited++) {
          if ((await pool.query('select count(*)::int as n from embedding_queue')).rows[0].n === 0) return;
          await new Promise((r) => setTimeout(r, 250));
        }
      };
      await latency('4 search', `full text (${corpus} articles)`, url, fts, searchH, 600, 'fulltext', undefined, idle);
      await latency('4 search', `semantic, new queries (${corpus})`, url, semantic, searchH, semantic.length, 'semantic', SEMANTIC_QUERIES.map((q) => searchPath(`what about the ${q.slice(9)}`, true)), idle);
      await latency('4 search', `semantic, repeated queries (${corpus})`, url, semantic, searchH, 600, 'semantic', undefined, idle);
      await idle();
      let f = 0;
      await measure('4 search', `full text (${corpus} articles)`, { url, connections: 10, headers: searchH, requests: [{ setupRequest: (req: any) => ({ ...req, path: fts[f++ % fts.length] }) }] });
      let v = 0;
      await measure('4 search', `semantic (${corpus}, query vectors cached)`, { url, connections: 10, headers: searchH, requests: [{ setupRequest: (req: any) => ({ ...req, path: semantic[v++ % semantic.length] }) }] });
    }
    // 5. Uploads: 1 MiB PNG at 10 connections (multipart).
    if (runs(5)) {
      const png = makePng(1024, 1023, false, true); // ~1 MiB of incompressible pixels
      const boundary = 'benchboundary';
      const multipart = Buffer.concat([Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n`), png, Buffer.from(`\r\n--${boundary}--\r\n`)]);
      // 16 fresh random bytes per request, so every upload is stored (no deduplication shortcut).
      const head = multipart.subarray(0, 300);
      const tail = multipart.subarray(316);
      await measure('5 uploads', '1 MiB PNG', {
        url: `${url}/api/v1/workspaces/-/uploads`, connections: 10, method: 'POST', headers: { ...H, 'content-type': `multipart/form-data; boundary=${boundary}` },
        requests: [{ setupRequest: (req: any) => ({ ...req, body: Buffer.concat([head, randomBytes(16), tail]) }) }],
      });
    }
    // 6. Mixed agent workload: 70 % reads, 20 % memory writes, 10 % search.
    if (runs(6)) {
      let m = 0;
      await measure('6 mixed', '70/20/10', {
        url, connections: 20, headers: H,
        requests: [{
          setupRequest: (req: any) => {
            const r = Math.random();
            m++;
            if (r < 0.7) {
              const i = m % 10_000;
              return { ...req, method: 'GET', path: m % 2 ? `/api/v1/workspaces/-/memory/note?path=team/${i % 50}/note-${i}` : '/api/v1/workspaces/-/changelog?limit=20' };
            }
            if (r < 0.9) return { ...req, method: 'PUT', path: '/api/v1/workspaces/-/memory/note', headers: { ...H, 'content-type': 'application/json' }, body: JSON.stringify({ path: `mixed/${m % 500}`, body: sentence(20), kind: 'note', links: [], tags: [] }) };
            return { ...req, method: 'GET', path: `/api/v1/workspaces/-/search?q=${WORDS[m % WORDS.length]}` };
          },
        }],
      });

    }

    // Query counts per request (scenario 3), on an in-process server whose connection counts queries.
    const counts = runs(3) ? await countQueries(databaseUrl) : null;

    // Ratios of requests per second, round by round (the median round's ratio).
    const ratios = { restOverGraphql: ratio(rest, graphql), restOverPlainPg: ratio(rest, baseline) };
    printTable();
    if (rest) console.log(`\nREST / POST /graphql: ${ratios.restOverGraphql}×   REST / plain pg: ${ratios.restOverPlainPg === null ? 'n/a (no baseline on the embedded database)' : `${ratios.restOverPlainPg}×`}`);
    if (counts) console.log(`queries per request: ${JSON.stringify(counts)}`);
    mkdirSync('bench-results', { recursive: true });
    writeFileSync('bench-results/latest.json', JSON.stringify({ at: new Date().toISOString(), cores: cpus().length, database: databaseUrl ? 'postgresql' : 'embedded', durationSeconds: DURATION, rounds: ROUNDS, searchArticles: SEARCH_ARTICLES, rows, ratios, queryCounts: counts }, null, 2));
    log('wrote bench-results/latest.json');
    await pool?.end();
  } finally {
    await stop();
  }
}

/**
 * Counts SQL statements per request for the changelog list and the article tree at two data sizes,
 * on an in-process server: every statement any node-postgres client of this process sends (the
 * ORM's and the service's raw ones alike), except the rate limiter's leases, which come and go
 * with traffic rather than with the request.
 */
async function countQueries(databaseUrl: string | undefined) {
  // Embedded: a fresh data directory of its own (the ORM and the statement pool reach PGlite through node-postgres too).
  const dataDir = databaseUrl ? undefined : mkdtempSync(join(tmpdir(), 'wks-count-'));
  const server = await startServer({ port: 0, host: '127.0.0.1', databaseUrl, dataDir, adminToken: ADMIN, logger: pino({ level: 'silent' }), embeddingWorker: false, webhookDispatcher: false, rateLimit: { max: 1e9, windowSeconds: 60 } });
  let queries = 0;
  const send = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string } | undefined)?.text ?? '';
    if (!text.includes('rate_limit_counters')) queries++;
    return (send as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof send;
  const out: Record<string, number[]> = {};
  try {
    for (const size of [5, 50]) {
      const org = (await gql(server.url, 'mutation { createOrganization(input: { name: "Count", plan: "pro" }) { id } }')).createOrganization;
      const ws = (await gql(server.url, 'mutation($o: ID!) { createWorkspace(input: { organizationId: $o, name: "C" }) { id } }', { o: org.id })).createWorkspace;
      const member = (await gql(server.url, 'mutation($o: ID!) { createMember(input: { organizationId: $o, email: "c@example.com", role: "owner" }) { id } }', { o: org.id })).createMember;
      const key = (await gql(server.url, 'mutation($m: ID!, $w: ID!) { createAgentKey(input: { memberId: $m, name: "c", permissions: ["article.read", "article.create", "section.create", "changelog.read", "changelog.update", "changelog.publish"], workspaceId: $w }) { key } }', { m: member.id, w: ws.id })).createAgentKey.key;
      const h = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
      for (let s = 0; s < 5; s++) await fetch(`${server.url}/api/v1/workspaces/-/sections`, { method: 'POST', headers: h, body: JSON.stringify({ label: `S${s}`, key: `s${s}` }) });
      for (let i = 0; i < size; i++) {
        await fetch(`${server.url}/api/v1/workspaces/-/articles`, { method: 'POST', headers: h, body: JSON.stringify({ title: `A${i}`, section: `s${i % 5}`, markdown: 'x' }) });
        await fetch(`${server.url}/api/v1/workspaces/-/changelog`, { method: 'POST', headers: h, body: JSON.stringify({ title: `C${i}`, markdown: 'x', status: 'published', tags: [], published_at: null }) });
      }
      for (const [name, path] of [['article tree', '/articles'], ['changelog list', '/changelog?limit=50']]) {
        await fetch(`${server.url}/api/v1/workspaces/-${path}`, { headers: h }); // warm (key lookup's lastUsedAt write)
        const before = queries;
        await fetch(`${server.url}/api/v1/workspaces/-${path}`, { headers: h });
        (out[`${name}`] ??= []).push(queries - before);
      }
    }
  } finally {
    pg.Client.prototype.query = send;
    await server.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }
  return Object.fromEntries(Object.entries(out).map(([k, v]) => [`${k} (5 vs 50 items)`, v]));
}

/**
 * The database alone: pgbench sends the service's update statement (note, audit event, outbox
 * event) from 50 clients, with no HTTP or JavaScript at all — the floor under PUT's latency on this
 * machine. Skipped when pgbench is not installed.
 */
async function pgbenchUpdate(databaseUrl: string, workspaceId: string) {
  const candidates = ['/usr/bin/pgbench', ...(existsSync('/usr/lib/postgresql') ? readdirSync('/usr/lib/postgresql').map((v) => `/usr/lib/postgresql/${v}/bin/pgbench`) : [])];
  const pgbench = candidates.find((c) => existsSync(c));
  if (!pgbench) return log('pgbench not found: the database-alone row is skipped');
  const dir = mkdtempSync(join(tmpdir(), 'wks-pgbench-'));
  try {
    writeFileSync(join(dir, 'update.sql'), `\\set i random(0, 9999)
with written as (update memory_notes set body = 'pgbench ' || :i, updated_at = now() where workspace_id = '${workspaceId}' and path = 'team/' || (:i % 50) || '/note-' || :i returning id, path),
audit as (insert into audit_events (workspace_id, actor, action, target_type, target_id, created_at) select '${workspaceId}', 'agent', 'memory.note.updated', 'memory_note', path, now() from written),
outbox as (insert into webhook_events (id, workspace_id, type, payload, fanned_out, created_at) select 'msg_' || md5(random()::text), '${workspaceId}', 'memory.note.updated', '{}'::jsonb, false, now() from written)
select * from written;
`);
    const { stdout } = await promisify(execFile)(pgbench, ['-n', '-c', '50', '-j', '2', '-T', String(DURATION), '-f', join(dir, 'update.sql'), '-l', `--log-prefix=${join(dir, 'log')}`, databaseUrl], { cwd: dir });
    const tps = Number(/tps = ([\d.]+)/.exec(stdout)?.[1] ?? 0);
    const latencies = readdirSync(dir).filter((f) => f.startsWith('log')).flatMap((f) => readFileSync(join(dir, f), 'utf8').trim().split('\n').map((line) => Number(line.split(' ')[2]) / 1000)).sort((a, b) => a - b);
    const at = (p: number) => +latencies[Math.min(latencies.length - 1, Math.ceil(p * latencies.length) - 1)].toFixed(1);
    const row: Row = { scenario: '2 PUT note', variant: 'update statement, database alone (pgbench)', connections: 50, rps: Math.round(tps), p50: at(0.5), p95: at(0.95), p97_5: at(0.975), p99: at(0.99), errors: 0 };
    rows.push(row);
    log(`2 PUT note / database alone (pgbench, 50 clients, ${DURATION} s): ${row.rps} tps, p50 ${row.p50} ms, p95 ${row.p95} ms, p99 ${row.p99} ms`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function printTable() {
  const header = ['scenario', 'variant', 'conn', 'req/s', 'p50 ms', 'p95 ms', 'p97.5 ms', 'p99 ms', 'errors', 'note'];
  const dash = (v: number | null) => (v === null ? '—' : String(v));
  const data = rows.map((r) => [r.scenario, r.variant, String(r.connections), String(r.rps), String(r.p50), dash(r.p95), dash(r.p97_5), String(r.p99), String(r.errors), r.note ?? '']);
  const widths = header.map((h, i) => Math.max(h.length, ...data.map((d) => d[i].length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  console.log(`\n${line(header)}\n|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const d of data) console.log(line(d));
}

await main();
process.exit(0);
