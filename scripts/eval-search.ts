/**
 * `npm run eval:search`: search quality on a documentation set nobody here wrote, the PostgreSQL 15
 * manual of Debian's postgresql-doc-15 package (installed with apt-get when missing). Its HTML
 * pages become Markdown articles of a fresh workspace (one section per chapter), through the
 * public API of a service started like `npm start` (DATABASE_URL, or a fresh embedded directory);
 * once the embedding worker has embedded them, every labelled question of
 * eval/search-questions.tsv runs in each ranking. Prints recall@1, recall@5 (share of questions
 * with a labelled page in the top 1 / 5), MRR (over the top 10) and p50/p95 time per ranking, on
 * all questions and on the held-out third (every third question; nothing is tuned on any of
 * them), and writes eval-results/search.json.
 *
 * `--reuse` (with DATABASE_URL) runs the questions on the manual an earlier run loaded and embedded there.
 * `--fixtures` instead writes the small labelled subset the test suite runs (test/fixtures/pgdocs).
 * `--collection NAME` (or `all`) instead evaluates judged public collections beside two BM25 peers
 * (scripts/eval/collections.ts).
 * `--gaps` instead evaluates content-gap grouping on labelled questions (scripts/eval/gaps.ts).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import TurndownService from 'turndown';
import { embedderFromEnv } from '../src/search/embedder.js';
import { passagesOf } from '../src/search/passages.js';
import { BEST_PASSAGES } from '../src/search/vectors.js';
import { openOrm } from '../src/db/orm.js';
import { sql, type SqlTarget } from '../src/db/sql.js';
import { spawnService } from '../test/support/processes.js';
import { waitForEmbeddings } from './bench/seeding.js';
import { gql } from './bench/tenant.js';
import { evalCollections } from './eval/collections.js';
import { evalGaps } from './eval/gaps.js';

const DOCS = '/usr/share/doc/postgresql-doc-15/html';
const QUESTIONS = 'eval/search-questions.tsv';
const MODES = ['fulltext', 'semantic', 'hybrid'] as const;
const MARKDOWN_MAX = 200_000;
const TITLE_MAX = 200;

const log = (msg: string) => console.log(`[eval ${new Date().toISOString().slice(11, 19)}] ${msg}`);

export interface Question {
  q: string;
  pages: string[];
  heldOut: boolean;
}

/** The labelled questions: `question<TAB>page,page`; every third one is held out. */
export function loadQuestions(file = QUESTIONS): Question[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() && !line.startsWith('#'))
    .map((line, i) => {
      const [q, pages] = line.split('\t');
      return { q: q.trim(), pages: pages.split(',').map((p) => p.trim()), heldOut: i % 3 === 2 };
    });
}

export interface DocPage {
  file: string;
  title: string;
  section: string;
  markdown: string;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", nbsp: ' ' };
const decode = (text: string) =>
  text.replace(/&(#?\w+);/g, (m, e: string) => ENTITIES[e] ?? (e.startsWith('#') ? String.fromCodePoint(Number(e.slice(1))) : m)).trim();

/** One page of the manual: its title, its chapter (the navigation header's "up" title) and its body as Markdown. */
export function readPage(file: string, dir = DOCS): DocPage {
  const html = readFileSync(`${dir}/${file}.html`, 'utf8');
  const title = decode(/<title>([^<]*)<\/title>/.exec(html)?.[1] ?? file).slice(0, TITLE_MAX);
  const section = decode(/<th width="60%" align="center">([^<]*)<\/th>/.exec(html)?.[1] ?? '') || 'PostgreSQL 15 Documentation';
  const body = html
    .replace(/^[\s\S]*?<body[^>]*>/, '')
    .replace(/<div class="navheader">[\s\S]*?<\/div>/, '')
    .replace(/<div class="navfooter">[\s\S]*$/, '');
  const markdown = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced' }).turndown(body).slice(0, MARKDOWN_MAX);
  return { file, title, section: section.slice(0, 100), markdown };
}

function ensureDocs(): void {
  if (existsSync(DOCS)) return;
  log('installing postgresql-doc-15 with apt-get …');
  execFileSync('apt-get', ['install', '-y', '--no-install-recommends', 'postgresql-doc-15'], { stdio: 'inherit' });
}

/** Loads `pages` into a new workspace through the API; returns the article slug of each page file. */
export async function loadPages(
  url: string,
  auth: Record<string, string>,
  pages: DocPage[],
  progress: (done: number) => void = () => {},
): Promise<Map<string, string>> {
  const headers = { ...auth, 'content-type': 'application/json' };
  const sections = new Map<string, string>();
  const slugs = new Map<string, string>();
  for (const [i, page] of pages.entries()) {
    let key = sections.get(page.section);
    if (!key) {
      const res = await fetch(`${url}/api/v1/workspaces/-/sections`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ label: page.section }),
      });
      const body = (await res.json()) as { key: string };
      if (res.status !== 201) throw new Error(`section "${page.section}": ${res.status} ${JSON.stringify(body)}`);
      key = body.key;
      sections.set(page.section, key);
    }
    const res = await fetch(`${url}/api/v1/workspaces/-/articles`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ title: page.title, section: key, markdown: page.markdown }),
    });
    const body = (await res.json()) as { slug: string };
    if (res.status !== 201) throw new Error(`article ${page.file}: ${res.status} ${JSON.stringify(body)}`);
    slugs.set(page.file, body.slug);
    progress(i + 1);
  }
  return slugs;
}

export interface Scores {
  recallAt1: number;
  recallAt5: number;
  mrr: number;
  p50Ms: number;
  p95Ms: number;
  ran: Record<string, number>;
}

/** Runs every question in `mode`; the rank of the first labelled page among the top 10 decides. */
export async function evaluate(url: string, auth: Record<string, string>, questions: Question[], slugs: Map<string, string>, mode: string) {
  const ranks: (number | null)[] = [];
  const times: number[] = [];
  const ran: string[] = [];
  for (const question of questions) {
    const started = performance.now();
    const res = await fetch(`${url}/api/v1/workspaces/-/search?q=${encodeURIComponent(question.q)}&mode=${mode}&limit=10`, {
      headers: auth,
    });
    const hits = (await res.json()) as { slug: string | null }[];
    times.push(performance.now() - started);
    if (res.status !== 200) throw new Error(`search "${question.q}" (${mode}): ${res.status} ${JSON.stringify(hits)}`);
    ran.push(res.headers.get('x-search-ranking') ?? '?');
    const wanted = new Set(question.pages.map((p) => slugs.get(p)));
    const at = hits.findIndex((h) => h.slug !== null && wanted.has(h.slug));
    ranks.push(at < 0 ? null : at + 1);
  }
  return { ranks, times, ran };
}

export function score(run: { ranks: (number | null)[]; times: number[]; ran: string[] }, pick: (i: number) => boolean): Scores {
  const ranks = run.ranks.filter((_, i) => pick(i));
  const times = run.times.filter((_, i) => pick(i)).sort((a, b) => a - b);
  const share = (ok: (r: number | null) => boolean) => Math.round((ranks.filter(ok).length / ranks.length) * 1000) / 1000;
  const at = (p: number) => Math.round(times[Math.min(times.length - 1, Math.floor(times.length * p))] * 10) / 10;
  return {
    recallAt1: share((r) => r === 1),
    recallAt5: share((r) => r !== null && r <= 5),
    mrr: Math.round((ranks.reduce<number>((sum, r) => sum + (r ? 1 / r : 0), 0) / ranks.length) * 1000) / 1000,
    p50Ms: at(0.5),
    p95Ms: at(0.95),
    ran: run.ran.filter((_, i) => pick(i)).reduce<Record<string, number>>((counts, r) => ({ ...counts, [r]: (counts[r] ?? 0) + 1 }), {}),
  };
}

/** The pages the first `count` questions name, plus neighbours up to `pages` in all, for the suite's fixtures. */
function writeFixtures(count = 20, pages = 50): void {
  const questions = loadQuestions().slice(0, count);
  const files = new Set(questions.flatMap((q) => q.pages));
  for (const file of readdirSync(DOCS)
    .filter((f) => f.endsWith('.html'))
    .sort()) {
    if (files.size >= pages) break;
    if (/^(sql-|runtime-config-|functions-)/.test(file)) files.add(file.replace(/\.html$/, ''));
  }
  const dir = 'test/fixtures/pgdocs';
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  // Kept short: the suite embeds every page; the opening of a page is what names its subject.
  const fixtures = [...files].map((f) => {
    const page = readPage(f);
    return { ...page, markdown: page.markdown.slice(0, 4000) };
  });
  writeFileSync(`${dir}/pages.json`, `${JSON.stringify(fixtures, null, 1)}\n`);
  writeFileSync(`${dir}/questions.json`, `${JSON.stringify(questions, null, 1)}\n`);
  log(`wrote ${fixtures.length} pages and ${questions.length} questions to ${dir}`);
}

/** An organization, an owner, the workspace of the manual and a key on it; the key's Authorization header. */
async function evalKey(url: string, admin: string): Promise<Record<string, string>> {
  const { createOrganization: org } = await gql<{ createOrganization: { id: string } }>(
    url,
    admin,
    'mutation { createOrganization(input: { name: "Search eval", plan: "enterprise" }) { id } }',
  );
  const { createMember: member } = await gql<{ createMember: { id: string } }>(
    url,
    admin,
    'mutation($o: ID!) { createMember(input: { organizationId: $o, email: "eval@example.com", role: "owner" }) { id } }',
    { o: org.id },
  );
  const { createWorkspace: ws } = await gql<{ createWorkspace: { id: string } }>(
    url,
    admin,
    'mutation($o: ID!) { createWorkspace(input: { organizationId: $o, name: "PostgreSQL 15 manual" }) { id } }',
    { o: org.id },
  );
  const { createAgentKey: key } = await gql<{ createAgentKey: { key: string } }>(
    url,
    admin,
    'mutation($m: ID!, $w: ID!) { createAgentKey(input: { memberId: $m, name: "eval", permissions: ["article.read", "article.create", ' +
      '"section.create", "search.read"], workspaceId: $w }) { key } }',
    { m: member.id, w: ws.id },
  );
  return { authorization: `Bearer ${key.key}` };
}

/**
 * The manual's workspace on DATABASE_URL: the newest workspace of its name holding every page
 * (and, with `model`, vectors of that model: runs with another embedder load a workspace of their
 * own), with its organization and each page's slug in file order (pages are created in file order).
 */
async function manualWorkspace(db: SqlTarget, files: string[], model: string | null) {
  const [found] = await sql<{ id: string; organization_id: string; slugs: string[] }>(
    db,
    `select w.id, w.organization_id, array_agg(a.slug order by a.id) as slugs from workspaces w join articles a on a.workspace_id = w.id
      where w.name = 'PostgreSQL 15 manual'
        and (?::text is null or exists (select 1 from embeddings e where e.workspace_id = w.id and e.item_type = 'article' and e.model = ?::text))
      group by w.id, w.organization_id having count(*) = ? order by max(a.id) desc limit 1`,
    [model, model, files.length],
  );
  if (!found)
    throw new Error(
      `no workspace "PostgreSQL 15 manual" with ${files.length} pages${model ? ` embedded by ${model}` : ''} in DATABASE_URL`,
    );
  return { workspaceId: found.id, organizationId: found.organization_id, slugs: new Map(files.map((f, i) => [f, found.slugs[i]])) };
}

/**
 * `--reuse`: the manual a previous run loaded (and embedded) into DATABASE_URL, instead of loading
 * it again (the local model takes ~25 minutes over its passages): a new key on its workspace, and
 * each page's slug.
 */
async function reuseManual(url: string, admin: string, db: SqlTarget, files: string[], model: string | null) {
  const { workspaceId, organizationId, slugs } = await manualWorkspace(db, files, model);
  const { createMember: member } = await gql<{ createMember: { id: string } }>(
    url,
    admin,
    'mutation($o: ID!, $e: String!) { createMember(input: { organizationId: $o, email: $e, role: "owner" }) { id } }',
    { o: organizationId, e: `eval-${Date.now()}@example.com` },
  );
  const { createAgentKey: key } = await gql<{ createAgentKey: { key: string } }>(
    url,
    admin,
    'mutation($m: ID!, $w: ID!) { createAgentKey(input: { memberId: $m, name: "eval", permissions: ["search.read"], workspaceId: $w }) { key } }',
    { m: member.id, w: workspaceId },
  );
  log('reusing the manual a previous run loaded');
  return { auth: { authorization: `Bearer ${key.key}` }, slugs };
}

/** The manual loaded into a fresh workspace through the API: a key on it, and each page's slug. */
async function loadManual(url: string, admin: string, pages: DocPage[]) {
  const auth = await evalKey(url, admin);
  log('loading the manual through the API …');
  const slugs = await loadPages(url, auth, pages, (n) => n % 200 === 0 && log(`  ${n}/${pages.length} pages`));
  return { auth, slugs };
}

/**
 * How many best passages a document's score averages (BEST_PASSAGES), studied offline on
 * DATABASE_URL: the passage vectors the service stored for the manual, the questions embedded here
 * by the same embedder, each document scored by the mean similarity of its best 1–10 passages (of
 * all it has, when fewer; documents whose best passage is below the 0.3 floor left out), the best
 * on the tuning questions (recall@5, then MRR) marked, held-out scores beside it.
 */
async function passageStudy(manual: { db: SqlTarget; workspaceId: string }, questions: Question[], slugs: Map<string, string>) {
  const embedder = embedderFromEnv({ EMBEDDINGS: process.env.EVAL_EMBEDDINGS ?? 'local' });
  try {
    const rows = await sql<{ slug: string; vec: Buffer }>(
      manual.db,
      `select a.slug, e.vec from embeddings e join articles a on a.id = e.item_id
        where e.item_type = 'article' and e.workspace_id = ? and e.model = ? order by a.id, e.passage`,
      [manual.workspaceId, embedder.model],
    );
    const unit = (v: ArrayLike<number>) => {
      const n = Math.hypot(...Array.from(v)) || 1;
      return Float32Array.from(v, (x) => x / n);
    };
    const docs = new Map<string, Float32Array[]>();
    for (const r of rows) docs.set(r.slug, [...(docs.get(r.slug) ?? []), unit(new Float32Array(new Uint8Array(r.vec).buffer))]);
    const asked = (await embedder.embed(questions.map((q) => q.q))).map(unit);
    // Every question's similarity to every passage, best first per document.
    const sims = asked.map((q) =>
      [...docs].map(([slug, vs]) => ({ slug, s: vs.map((v) => v.reduce((sum, x, i) => sum + x * q[i], 0)).sort((a, b) => b - a) })),
    );
    const table = [];
    for (let k = 1; k <= 10; k++) {
      const ranks = sims.map((perDoc, i) => {
        const ranked = perDoc
          .filter((d) => d.s[0] >= 0.3)
          .map((d) => ({ slug: d.slug, score: d.s.slice(0, k).reduce((a, b) => a + b, 0) / Math.min(k, d.s.length) }))
          .sort((a, b) => b.score - a.score);
        const wanted = new Set(questions[i].pages.map((p) => slugs.get(p)));
        const at = ranked.slice(0, 10).findIndex((d) => wanted.has(d.slug));
        return at < 0 ? null : at + 1;
      });
      const run = { ranks, times: ranks.map(() => 0), ran: ranks.map(() => 'offline') };
      table.push({ k, tuning: score(run, (i) => !questions[i].heldOut), heldOut: score(run, (i) => questions[i].heldOut), chosen: false });
    }
    [...table].sort((a, b) => b.tuning.recallAt5 - a.tuning.recallAt5 || b.tuning.mrr - a.tuning.mrr)[0].chosen = true;
    console.log(
      '\nA document scored by the mean of its best k passages (offline, over the stored vectors), chosen on the tuning questions:',
    );
    console.log('| k | tuning recall@5 | tuning MRR | held-out recall@1 | held-out recall@5 | held-out MRR | |');
    console.log('|---|---|---|---|---|---|---|');
    for (const r of table)
      console.log(
        `| ${r.k} | ${r.tuning.recallAt5} | ${r.tuning.mrr} | ${r.heldOut.recallAt1} | ${r.heldOut.recallAt5} | ${r.heldOut.mrr} | ` +
          `${[r.chosen ? 'chosen' : '', r.k === BEST_PASSAGES ? 'the service' : ''].filter(Boolean).join(', ')} |`,
      );
    return table;
  } finally {
    await embedder.close?.();
  }
}

/** The ranking table (all and held-out questions), as Markdown. */
function printTables(questions: Question[], results: Record<string, { all: Scores; heldOut: Scores }>) {
  console.log(`\n| ranking | questions | recall@1 | recall@5 | MRR | p50 ms | p95 ms | ran as |`);
  console.log('|---|---|---|---|---|---|---|---|');
  for (const mode of Object.keys(results))
    for (const part of ['all', 'heldOut'] as const) {
      const s = results[mode][part];
      const n = part === 'all' ? questions.length : questions.filter((q) => q.heldOut).length;
      const ran = Object.entries(s.ran)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ');
      console.log(
        `| ${mode} | ${part === 'all' ? `all ${n}` : `held-out ${n}`} | ${s.recallAt1} | ${s.recallAt5} | ${s.mrr} | ${s.p50Ms} | ${s.p95Ms} | ${ran} |`,
      );
    }
}

/** The manual's page files, checked against the questions' labels. */
function manualFiles(questions: Question[]): string[] {
  const files = readdirSync(DOCS)
    .filter((f) => f.endsWith('.html'))
    .map((f) => f.replace(/\.html$/, ''))
    .sort();
  for (const q of questions)
    for (const p of q.pages) if (!files.includes(p)) throw new Error(`question "${q.q}" names ${p}, not a page of the manual`);
  return files;
}

/**
 * Runs the eval; `--fulltext-only` skips embeddings (the full-text table, in minutes instead of
 * the hour the local model takes over the manual's passages).
 */
async function main(): Promise<void> {
  const collection = process.argv.indexOf('--collection');
  if (collection >= 0) {
    const names = process.argv.slice(collection + 1).filter((a) => !a.startsWith('--'));
    if (!names.length) throw new Error('--collection needs a name: med, cacm, npl, time, lisa, adi, or all');
    await evalCollections(names);
    return;
  }
  if (process.argv.includes('--gaps')) {
    await evalGaps();
    return;
  }
  ensureDocs();
  if (process.argv.includes('--fixtures')) return writeFixtures();
  const fullTextOnly = process.argv.includes('--fulltext-only');
  const questions = loadQuestions();
  const files = manualFiles(questions);
  log(`${files.length} pages, ${questions.length} questions (${questions.filter((q) => q.heldOut).length} held out)`);
  const pages = files.map((f) => readPage(f));
  const admin = `adm_eval_${Date.now()}`;
  const env = {
    ADMIN_TOKEN: admin,
    RATE_LIMIT_MAX: '100000000',
    OUTBOUND_ALLOW_LOOPBACK: 'false',
    ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : { DATA_DIR: `./eval-results/data-${Date.now()}` }),
  };
  // EVAL_EMBEDDINGS: another embedder to compare (e.g. `glove`), as EMBEDDINGS names it.
  const embeddings = fullTextOnly ? 'off' : (process.env.EVAL_EMBEDDINGS ?? 'local');
  const service = await spawnService({ ...env, EMBEDDINGS: embeddings });
  // The model whose vectors the manual's workspace must hold (none when only full text is asked).
  const model = fullTextOnly ? null : embedderFromEnv({ EMBEDDINGS: embeddings }).model;
  // On DATABASE_URL the eval also reads the database itself (--reuse, and the studies), through one ORM.
  const db = process.env.DATABASE_URL ? await openOrm({ clientUrl: process.env.DATABASE_URL }, 2) : null;
  let stopped = false;
  try {
    const reuse = process.argv.includes('--reuse');
    if (reuse && !db) throw new Error('--reuse needs DATABASE_URL (the database a previous run loaded)');
    const loadStarted = performance.now();
    const { auth, slugs } = reuse
      ? await reuseManual(service.url, admin, db!.em, files, model)
      : await loadManual(service.url, admin, pages);
    if (!fullTextOnly) await waitForEmbeddings(service.url, auth);
    // The worker embeds while pages load: from the first page sent to the last passage embedded.
    const embedSeconds = Math.round((performance.now() - loadStarted) / 1000);
    const passages = pages.reduce((n, p) => n + passagesOf(p.title, p.markdown).length, 0);
    const results: Record<string, { all: Scores; heldOut: Scores }> = {};
    for (const mode of fullTextOnly ? ['fulltext'] : MODES) {
      await evaluate(service.url, auth, questions.slice(0, 10), slugs, mode); // warm-up (model, caches)
      const run = await evaluate(service.url, auth, questions, slugs, mode);
      results[mode] = { all: score(run, () => true), heldOut: score(run, (i) => questions[i].heldOut) };
      log(`${mode}: ${JSON.stringify(results[mode].all)}`);
    }
    // Read directly on DATABASE_URL by the study below: the manual's workspace, just loaded or reused.
    const manual = db && !fullTextOnly ? { db: db.em, workspaceId: (await manualWorkspace(db.em, files, model)).workspaceId } : null;
    printTables(questions, results);
    const passageTable = manual ? await passageStudy(manual, questions, slugs) : null;
    if (!fullTextOnly)
      console.log(
        reuse
          ? `\nEmbedding: ${pages.length} pages as ${passages} passages (loaded and embedded by an earlier run: --reuse).`
          : `\nEmbedding: ${pages.length} pages as ${passages} passages, embedded in ${embedSeconds} s (load and embedding, overlapped).`,
      );
    await service.stop();
    stopped = true;
    mkdirSync('eval-results', { recursive: true });
    const out = {
      pages: pages.length,
      passages,
      embedSeconds: reuse ? null : embedSeconds,
      questions: questions.length,
      results,
      passageStudy: passageTable,
    };
    writeFileSync(`eval-results/search${fullTextOnly ? '-fulltext' : ''}.json`, `${JSON.stringify(out, null, 2)}\n`);
    log('wrote eval-results/');
  } finally {
    if (!stopped) await service.stop();
    await db?.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
