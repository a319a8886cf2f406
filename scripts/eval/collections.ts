/**
 * `npm run eval:search -- --collection NAME` (or `--collection all`): search quality on judged
 * public test collections (MED, CACM, NPL, TIME, LISA, ADI: documents, natural-language questions
 * and human relevance judgments; IR_DIR, default ../shared/ir, holds one directory per collection).
 * Each collection is loaded as articles of a fresh workspace through the REST API of a service
 * started like `npm start`, embedded by its worker, then every question is asked through
 * `GET …/search` in each mode (its first 100 hits, two pages). Two BM25 peers run on the same text
 * in the same command: Xapian and SQLite FTS5 (scripts/eval/peers.py). Prints nDCG@10, Recall@100
 * and MRR@10 per mode and peer, the ratios to Xapian the targets are stated in, and writes
 * eval-results/collections.json. How to read it: docs/search-quality.md.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { spawnService } from '../../test/support/processes.js';
import { waitForEmbeddings } from '../bench/seeding.js';
import { gql } from '../bench/tenant.js';
import { metrics, type Judgments, type Metrics, type Run } from './metrics.js';

export const COLLECTIONS = ['med', 'cacm', 'npl', 'time', 'lisa', 'adi'] as const;
const MODES = ['fulltext', 'semantic', 'hybrid'] as const;
const PEERS = ['xapian', 'fts5'] as const;
/** How deep each question's ranking is read (Recall@100), in pages of the API's largest page. */
const DEPTH = 100;
const PAGE = 50;
/** Articles written at once while a collection loads. */
const WRITERS = 4;

const log = (msg: string) => console.log(`[eval ${new Date().toISOString().slice(11, 19)}] ${msg}`);

interface Doc {
  id: string;
  title: string;
  text: string;
}
interface Query {
  id: string;
  text: string;
}

/** A collection read from its directory: documents, questions and judgments. */
function readCollection(dir: string): { docs: Doc[]; queries: Query[]; judgments: Judgments } {
  const lines = (file: string) =>
    readFileSync(`${dir}/${file}`, 'utf8')
      .split('\n')
      .filter((l) => l.trim());
  const judgments: Judgments = new Map();
  for (const line of lines('qrels.tsv')) {
    const [q, doc, grade] = line.split('\t');
    if (!judgments.has(q)) judgments.set(q, new Map());
    judgments.get(q)!.set(doc, Number(grade));
  }
  return {
    docs: lines('docs.jsonl').map((l) => JSON.parse(l) as Doc),
    queries: lines('queries.jsonl').map((l) => JSON.parse(l) as Query),
    judgments,
  };
}

/** An organization, an owner, a workspace named after the collection and a key on it; its Authorization header. */
async function collectionKey(url: string, admin: string, name: string): Promise<Record<string, string>> {
  const { createOrganization: org } = await gql<{ createOrganization: { id: string } }>(
    url,
    admin,
    'mutation($n: String!) { createOrganization(input: { name: $n, plan: "enterprise" }) { id } }',
    { n: `Search eval ${name}` },
  );
  const { createMember: member } = await gql<{ createMember: { id: string } }>(
    url,
    admin,
    'mutation($o: ID!, $e: String!) { createMember(input: { organizationId: $o, email: $e, role: "owner" }) { id } }',
    { o: org.id, e: `eval-${name}-${Date.now()}@example.com` },
  );
  const { createWorkspace: ws } = await gql<{ createWorkspace: { id: string } }>(
    url,
    admin,
    'mutation($o: ID!, $n: String!) { createWorkspace(input: { organizationId: $o, name: $n }) { id } }',
    { o: org.id, n: `collection ${name}` },
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
 * Loads the documents as articles of one section, WRITERS at a time; the slug of each document.
 * A document without a title (MED, NPL, TIME) is titled by its id alone, which no question asks
 * for; one without a text (half of CACM's) is its title alone, with an empty body.
 */
async function loadDocs(url: string, auth: Record<string, string>, docs: Doc[]): Promise<Map<string, string>> {
  const headers = { ...auth, 'content-type': 'application/json' };
  const section = await fetch(`${url}/api/v1/workspaces/-/sections`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ label: 'Collection' }),
  });
  const { key } = (await section.json()) as { key: string };
  const slugOf = new Map<string, string>();
  let next = 0;
  const writer = async () => {
    while (next < docs.length) {
      const doc = docs[next++];
      const body = JSON.stringify({
        title: doc.title.trim().slice(0, 200) || doc.id,
        section: key,
        markdown: doc.text,
      });
      const res = await fetch(`${url}/api/v1/workspaces/-/articles`, { method: 'POST', headers, body });
      const created = (await res.json()) as { slug: string };
      if (res.status !== 201) throw new Error(`document ${doc.id}: ${res.status} ${JSON.stringify(created)}`);
      slugOf.set(created.slug, doc.id);
      if (slugOf.size % 1000 === 0) log(`  ${slugOf.size}/${docs.length} documents`);
    }
  };
  await Promise.all(Array.from({ length: WRITERS }, writer));
  return slugOf;
}

/** Each question's first DEPTH documents in one mode, through the API; and the rankings that answered. */
async function ask(url: string, auth: Record<string, string>, queries: Query[], mode: string, docOf: Map<string, string>) {
  const run: Run = new Map();
  const answeredBy = new Map<string, number>();
  const times: number[] = [];
  for (const q of queries) {
    const ranked: string[] = [];
    const started = performance.now();
    let path: string | null = `/api/v1/workspaces/-/search?q=${encodeURIComponent(q.text.slice(0, 2000))}&mode=${mode}&limit=${PAGE}`;
    while (path && ranked.length < DEPTH) {
      const res: Response = await fetch(`${url}${path}`, { headers: auth });
      const hits = (await res.json()) as { slug: string | null }[];
      if (res.status !== 200) throw new Error(`question ${q.id} (${mode}): ${res.status} ${JSON.stringify(hits)}`);
      if (!ranked.length)
        answeredBy.set(res.headers.get('x-search-ranking')!, (answeredBy.get(res.headers.get('x-search-ranking')!) ?? 0) + 1);
      for (const h of hits) if (h.slug && docOf.has(h.slug)) ranked.push(docOf.get(h.slug)!);
      path = /<([^>]+)>; rel="next"/.exec(res.headers.get('link') ?? '')?.[1] ?? null;
    }
    times.push(performance.now() - started);
    run.set(q.id, ranked.slice(0, DEPTH));
  }
  times.sort((a, b) => a - b);
  return { run, answeredBy: Object.fromEntries(answeredBy), p95Ms: Math.round(times[Math.floor(times.length * 0.95)] ?? 0) };
}

/** The peers' rankings of every question (scripts/eval/peers.py, with Debian's python3-xapian; installed when missing and allowed). */
function peerRuns(dir: string): Record<(typeof PEERS)[number], Run> {
  const python = '/usr/bin/python3';
  try {
    execFileSync(python, ['-c', 'import xapian'], { stdio: 'ignore' });
  } catch {
    log('installing python3-xapian with apt-get …');
    execFileSync('apt-get', ['install', '-y', '--no-install-recommends', 'python3-xapian'], { stdio: 'inherit' });
  }
  const out = JSON.parse(execFileSync(python, ['scripts/eval/peers.py', dir], { maxBuffer: 1 << 28 }).toString()) as Record<
    string,
    Record<string, string[]>
  >;
  return Object.fromEntries(PEERS.map((p) => [p, new Map(Object.entries(out[p]))])) as Record<(typeof PEERS)[number], Run>;
}

export interface CollectionResult {
  collection: string;
  docs: number;
  queries: number;
  judged: number;
  modes: Record<string, Metrics & { p95Ms: number; answeredBy: Record<string, number> }>;
  peers: Record<string, Metrics>;
}

/** Evaluates one collection on a fresh service (a fresh embedded directory, or a fresh workspace on DATABASE_URL). */
export async function evalCollection(name: string, irDir: string): Promise<CollectionResult> {
  const dir = `${irDir}/${name}`;
  if (!existsSync(`${dir}/docs.jsonl`)) throw new Error(`no collection ${name} in ${irDir} (IR_DIR): expected ${dir}/docs.jsonl`);
  const { docs, queries, judgments } = readCollection(dir);
  log(`${name}: ${docs.length} documents, ${queries.length} questions (${judgments.size} judged)`);
  const admin = `adm_eval_${Date.now()}`;
  const service = await spawnService({
    ADMIN_TOKEN: admin,
    RATE_LIMIT_MAX: '100000000',
    EMBEDDINGS: process.env.EVAL_EMBEDDINGS ?? 'local',
    ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : { DATA_DIR: `./eval-results/data-${name}-${Date.now()}` }),
  });
  try {
    const auth = await collectionKey(service.url, admin, name);
    const loading = performance.now();
    const docOf = await loadDocs(service.url, auth, docs);
    log(`${name}: loaded in ${Math.round((performance.now() - loading) / 1000)} s`);
    await waitForEmbeddings(service.url, auth);
    const peers = peerRuns(dir);
    const result: CollectionResult = {
      collection: name,
      docs: docs.length,
      queries: queries.length,
      judged: judgments.size,
      modes: {},
      peers: {},
    };
    for (const mode of MODES) {
      const asked = await ask(service.url, auth, queries, mode, docOf);
      result.modes[mode] = { ...metrics(asked.run, judgments), p95Ms: asked.p95Ms, answeredBy: asked.answeredBy };
      log(`${name} ${mode}: ${JSON.stringify(result.modes[mode])}`);
    }
    for (const peer of PEERS) result.peers[peer] = metrics(peers[peer], judgments);
    return result;
  } finally {
    await service.stop();
  }
}

const f3 = (x: number) => x.toFixed(3);

/** The results as the Markdown tables of docs/search-quality.md, with each target's verdict. */
export function printCollections(results: CollectionResult[]): void {
  console.log('\n| collection | ranking | nDCG@10 | Recall@100 | MRR@10 | nDCG@10 ÷ Xapian | p95 ms |');
  console.log('|---|---|---|---|---|---|---|');
  for (const r of results) {
    const x = r.peers.xapian;
    for (const [name, m] of [...Object.entries(r.modes), ...Object.entries(r.peers)] as [string, Metrics & { p95Ms?: number }][])
      console.log(
        `| ${r.collection} | ${name} | ${f3(m.ndcg10)} | ${f3(m.recall100)} | ${f3(m.mrr10)} | ${f3(m.ndcg10 / x.ndcg10)} | ${m.p95Ms ?? ''} |`,
      );
  }
  console.log('\nTargets (each collection): full text nDCG@10 ≥ 1.0× Xapian; hybrid nDCG@10 ≥ 1.05× Xapian; hybrid Recall@100 ≥ Xapian.');
  console.log('| collection | full text ÷ Xapian | hybrid ÷ Xapian | hybrid Recall@100 − Xapian | met |');
  console.log('|---|---|---|---|---|');
  for (const r of results) {
    const x = r.peers.xapian;
    const ft = r.modes.fulltext.ndcg10 / x.ndcg10;
    const hy = r.modes.hybrid.ndcg10 / x.ndcg10;
    const recall = r.modes.hybrid.recall100 - x.recall100;
    const met = ft >= 1 && hy >= 1.05 && recall >= 0;
    console.log(`| ${r.collection} | ${f3(ft)} | ${f3(hy)} | ${recall >= 0 ? '+' : ''}${f3(recall)} | ${met ? 'yes' : 'NO'} |`);
  }
}

/** Evaluates the named collections (`all`: the six) and writes eval-results/collections.json. */
export async function evalCollections(names: string[], irDir = process.env.IR_DIR ?? '../shared/ir'): Promise<CollectionResult[]> {
  const results: CollectionResult[] = [];
  for (const name of names.flatMap((n) => (n === 'all' ? [...COLLECTIONS] : [n]))) results.push(await evalCollection(name, irDir));
  printCollections(results);
  mkdirSync('eval-results', { recursive: true });
  writeFileSync('eval-results/collections.json', `${JSON.stringify(results, null, 2)}\n`);
  log('wrote eval-results/collections.json');
  return results;
}
