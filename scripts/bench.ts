/**
 * `npm run bench`: starts the service (a child process, on DATABASE_URL or the embedded database),
 * seeds realistic data, and measures scenarios side by side in one run, so the figures that matter
 * are ratios that hold on a noisy machine. Prints a table and writes bench-results/latest.json.
 *
 *   BENCH_DURATION=10  seconds per measurement (after a warm-up)   BENCH_ROUNDS=3  rounds (median kept)
 *   --large            search at 100k articles instead of 10k      --quick          3 s × 1 round
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { availableParallelism, cpus } from 'node:os';
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
const ADMIN = `adm_bench_${randomBytes(8).toString('hex')}`;
const log = (msg: string) => console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}`);

interface Row { scenario: string; variant: string; connections: number; rps: number; p50: number; p95: number; p99: number; errors: number }
const rows: Row[] = [];

async function gql(url: string, query: string, variables: Record<string, unknown> = {}, token = ADMIN) {
  const res = await fetch(`${url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify({ query, variables }) });
  const json = (await res.json()) as { data: any; errors?: unknown[] };
  if (json.errors) throw new Error(JSON.stringify(json.errors));
  return json.data;
}

/** One autocannon run; the median of ROUNDS runs is kept. */
async function measure(scenario: string, variant: string, opts: autocannon.Options): Promise<Row> {
  const runs: autocannon.Result[] = [];
  await autocannon({ ...opts, duration: Math.min(2, DURATION) }); // warm-up
  for (let i = 0; i < ROUNDS; i++) runs.push(await autocannon({ ...opts, duration: DURATION }));
  runs.sort((a, b) => a.requests.average - b.requests.average);
  const r = runs[Math.floor(runs.length / 2)];
  const row = { scenario, variant, connections: opts.connections ?? 10, rps: Math.round(r.requests.average), p50: r.latency.p50, p95: (r.latency as unknown as Record<string, number>).p97_5 ?? r.latency.p90, p99: r.latency.p99, errors: r.errors + r.non2xx };
  rows.push(row);
  log(`${scenario} / ${variant}: ${row.rps} req/s, p50 ${row.p50} ms, p99 ${row.p99} ms, errors ${row.errors}`);
  return row;
}

/** The plain-pg baseline: one route that reads the same row and writes JSON (bench only, not shipped). */
async function startBaseline(pool: pg.Pool, workspaceId: string) {
  const server = createServer(async (req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').searchParams.get('path');
    const { rows: found } = await pool.query('select id, workspace_id, path, kind, body, links, tags, created_at, updated_at, accessed_at from memory_notes where workspace_id = $1 and path = $2', [workspaceId, path]);
    const n = found[0];
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: n.id, workspaceId: n.workspace_id, path: n.path, kind: n.kind, body: n.body, links: n.links, tags: n.tags, createdAt: n.created_at, updatedAt: n.updated_at, accessedAt: n.accessed_at }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() };
}

function unitVector(dim = 512): Buffer {
  const v = Array.from({ length: dim }, () => Math.random() - 0.5);
  const n = Math.hypot(...v);
  return Buffer.from(Float32Array.from(v.map((x) => x / n)).buffer);
}

const WORDS = 'deploy rollback kubernetes webhook search index token billing invoice password reset agent memory note article section changelog release upload image api spec schema cluster database cache queue retry latency quota plan workspace'.split(' ');
const sentence = (n: number) => Array.from({ length: n }, () => WORDS[Math.floor(Math.random() * WORDS.length)]).join(' ');

async function main() {
  const databaseUrl = process.env.DATABASE_URL;
  log(`${cpus().length} cores (${availableParallelism()} available), database: ${databaseUrl ? 'PostgreSQL (DATABASE_URL)' : 'embedded PGlite'}, ${DURATION} s × ${ROUNDS} rounds per scenario`);
  if (!databaseUrl) log('note: on the embedded database the plain-pg baseline and multi-process figures are skipped (PGlite belongs to one process)');
  const dataDir = databaseUrl ? undefined : `./bench-results/data-${Date.now()}`;
  const { url, stop } = await spawnService({ OUTBOUND_ALLOW_LOOPBACK: 'false', ADMIN_TOKEN: ADMIN, RATE_LIMIT_MAX: '100000000', EMBEDDINGS: 'local', ...(databaseUrl ? { DATABASE_URL: databaseUrl } : { DATA_DIR: dataDir! }) });
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
    await batch('memory notes', 10_000, (i) => post('PUT', '/memory/note', { path: `team/${i % 50}/note-${i}`, body: `# Note ${i}\n${sentence(60)}`, kind: 'note', links: [`team/${(i + 1) % 50}/note-${i + 1}`], tags: [WORDS[i % WORDS.length]] }));
    await batch('sections', 20, (i) => post('POST', '/sections', { label: `Section ${i}`, key: `section-${i}` }));
    await batch('articles', 2_000, (i) => post('POST', '/articles', { title: `Article ${i} ${sentence(4)}`, section: `section-${i % 20}`, markdown: `# Article ${i}\n\n${sentence(200)}` }));
    await batch('changelog entries', 1_000, (i) => post('POST', '/changelog', { title: `Release ${i}`, markdown: sentence(80), status: 'published', tags: ['release'], published_at: new Date(Date.now() - i * 60_000).toISOString() }));

    // Search corpus: bulk SQL for speed (plus unit vectors standing in for embeddings of the bulk rows;
    // query vectors are real). Only possible with direct access, i.e. on DATABASE_URL.
    let pool: pg.Pool | null = null;
    if (databaseUrl) {
      pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
      await post('POST', '/sections', { label: 'Corpus', key: 'corpus' }, searchAuth);
      await batch('search articles through the API', 200, (i) => post('POST', '/articles', { title: `Guide ${i}: ${sentence(4)}`, section: 'corpus', markdown: sentence(150) }, searchAuth));
      const extra = SEARCH_ARTICLES - 200;
      const [{ id: sectionId }] = (await pool.query('select id from sections where workspace_id = $1 and key = $2', [searchWs.id, 'corpus'])).rows;
      log(`seeding ${extra} more articles with vectors for search (bulk SQL) …`);
      for (let i = 0; i < extra; i += 1000) {
        const n = Math.min(1000, extra - i);
        await pool.query(
          `insert into articles (workspace_id, section_id, slug, title, markdown, status, visibility, position, version, created_at, updated_at)
           select $1, $2, 'bulk-' || g, 'Bulk ' || g || ' ' || $4, $5 || ' ' || g, 'STABLE', 'public', 10000 + g, 1, now(), now() from generate_series($3::int, $3::int + $6 - 1) g`,
          [searchWs.id, sectionId, i, sentence(3), sentence(150), n],
        );
        if ((i / 1000) % 10 === 0) log(`  ${i + n}/${extra}`);
      }
      // Bulk rows get unit vectors (standing in for embeddings; the query vector is real); the
      // embedding worker is left nothing to do during the measurements.
      await pool.query(`delete from embedding_queue`);
      const ids = (await pool.query('select id from articles where workspace_id = $1 and id not in (select item_id from embeddings where item_type = $2)', [searchWs.id, 'article'])).rows.map((r) => r.id);
      for (let i = 0; i < ids.length; i += 500) {
        const part = ids.slice(i, i + 500);
        await pool.query(`insert into embeddings (item_type, item_id, workspace_id, model, vec, updated_at) select 'article', x, $1, 'use-lite-512', $2, now() from unnest($3::int[]) x on conflict do nothing`, [searchWs.id, unitVector(), part]);
      }
      log(`search corpus ready: ${SEARCH_ARTICLES} articles`);
    } else {
      log('waiting for the embedding worker to embed the seeded articles and changelog …');
      for (;;) {
        await post('POST', '/sections', { label: 'Corpus', key: 'corpus' }, searchAuth).catch(() => undefined);
        const res = await fetch(`${url}/api/v1/workspaces/-/search?q=deploy&semantic=true`, { headers: auth });
        if (res.headers.get('x-search-fallback') !== 'embeddings_pending') break;
        await new Promise((r) => setTimeout(r, 2000));
      }
    }

    const H = { authorization: `Bearer ${key}` };
    const notePath = 'team/7/note-7';
    // 1. GET a note: REST vs the same query over POST /graphql vs plain pg.
    const rest = await measure('1 GET note', 'REST', { url: `${url}/api/v1/workspaces/-/memory/note?path=${notePath}`, connections: 10, headers: H });
    const graphql = await measure('1 GET note', 'POST /graphql', {
      url: `${url}/graphql`, connections: 10, method: 'POST', headers: { ...H, 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'query($p: String!) { memoryNote(workspace: "-", path: $p) { id workspaceId path kind body links tags createdAt updatedAt accessedAt } }', variables: { p: notePath } }),
    });
    let baseline: Row | null = null;
    if (pool) {
      const b = await startBaseline(pool, ws.id);
      baseline = await measure('1 GET note', 'plain pg baseline', { url: `${b.url}/?path=${notePath}`, connections: 10 });
      b.close();
    }
    // 2. PUT note: update and create at 50 connections.
    let u = 0;
    await measure('2 PUT note', 'update (50 conn)', {
      url: `${url}/api/v1/workspaces/-/memory/note`, connections: 50, method: 'PUT', headers: { ...H, 'content-type': 'application/json' },
      // Existing notes spread over the 10k seeded paths (one hot row would measure its lock, not the service).
      requests: [{ setupRequest: (req: any) => { const i = (u++ * 7919) % 10_000; return { ...req, body: JSON.stringify({ path: `team/${i % 50}/note-${i}`, body: `updated ${u}`, kind: 'note', links: [], tags: [] }) }; } }],
    });
    let n = 0;
    await measure('2 PUT note', 'create (50 conn)', {
      url: `${url}/api/v1/workspaces/-/memory/note`, connections: 50, method: 'PUT', headers: { ...H, 'content-type': 'application/json' },
      requests: [{ setupRequest: (req: any) => ({ ...req, body: JSON.stringify({ path: `bench/${process.pid}/${n++}`, body: 'new', kind: 'note', links: [], tags: [] }) }) }],
    });
    // 3. Lists.
    await measure('3 lists', 'changelog limit=50', { url: `${url}/api/v1/workspaces/-/changelog?limit=50`, connections: 10, headers: H });
    await measure('3 lists', 'article tree', { url: `${url}/api/v1/workspaces/-/articles`, connections: 10, headers: H });
    // 4. Search.
    const searchH = databaseUrl ? { authorization: `Bearer ${searchKey}` } : H;
    const corpus = databaseUrl ? SEARCH_ARTICLES : 2_000;
    await measure('4 search', `full text (${corpus} articles)`, { url: `${url}/api/v1/workspaces/-/search?q=deploy%20rollback`, connections: 10, headers: searchH });
    await measure('4 search', `semantic (${corpus} articles)`, { url: `${url}/api/v1/workspaces/-/search?q=how%20do%20I%20ship%20a%20release&semantic=true`, connections: 10, headers: searchH });
    // 5. Uploads: 1 MiB PNG at 10 connections (multipart).
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
    // 6. Mixed agent workload: 70 % reads, 20 % memory writes, 10 % search.
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

    // Query counts per request (scenario 3), on an in-process server whose connection counts queries.
    const counts = databaseUrl ? await countQueries(databaseUrl) : null;

    const ratios = {
      restOverGraphql: +(rest.rps / graphql.rps).toFixed(2),
      restOverPlainPg: baseline ? +(rest.rps / baseline.rps).toFixed(2) : null,
    };
    printTable();
    console.log(`\nREST / POST /graphql: ${ratios.restOverGraphql}×   REST / plain pg: ${ratios.restOverPlainPg ?? 'n/a (embedded)'}×`);
    if (counts) console.log(`queries per request: ${JSON.stringify(counts)}`);
    mkdirSync('bench-results', { recursive: true });
    writeFileSync('bench-results/latest.json', JSON.stringify({ at: new Date().toISOString(), cores: cpus().length, database: databaseUrl ? 'postgresql' : 'embedded', durationSeconds: DURATION, rounds: ROUNDS, searchArticles: SEARCH_ARTICLES, rows, ratios, queryCounts: counts }, null, 2));
    log('wrote bench-results/latest.json');
    await pool?.end();
  } finally {
    await stop();
  }
}

/** Counts SQL statements per request for the changelog list and the article tree at two data sizes. */
async function countQueries(databaseUrl: string) {
  const server = await startServer({ port: 0, host: '127.0.0.1', databaseUrl, adminToken: ADMIN, logger: pino({ level: 'silent' }), embeddingWorker: false, webhookDispatcher: false, rateLimit: { max: 1e9, windowSeconds: 60 } });
  let queries = 0;
  server.orm.em.getConnection().getKnex().on('query', () => queries++);
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
    await server.close();
  }
  return Object.fromEntries(Object.entries(out).map(([k, v]) => [`${k} (5 vs 50 items)`, v]));
}

function printTable() {
  const header = ['scenario', 'variant', 'conn', 'req/s', 'p50 ms', 'p97.5 ms', 'p99 ms', 'errors'];
  const data = rows.map((r) => [r.scenario, r.variant, String(r.connections), String(r.rps), String(r.p50), String(r.p95), String(r.p99), String(r.errors)]);
  const widths = header.map((h, i) => Math.max(h.length, ...data.map((d) => d[i].length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  console.log(`\n${line(header)}\n|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const d of data) console.log(line(d));
}

await main();
process.exit(0);
