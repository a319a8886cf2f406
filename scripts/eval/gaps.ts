/**
 * `npm run eval:search -- --gaps`: how well content-gap grouping matches questions. The labelled
 * questions of test/fixtures/gaps/questions.tsv (topic, question) are reported through
 * `POST …/content-gaps` of a service started like `npm start`, in their file's order and in
 * SHUFFLES seeded orders (each in a fresh workspace: groups form as questions arrive), grouped by
 * its embedding worker; then the groups are compared with the topics pair by pair: precision (of
 * the pairs of questions grouped together, the share of one topic), recall (of the pairs of one
 * topic, the share grouped together) and their F1. Prints them per order and their mean, and the
 * same scores of each part of the file (`# part: NAME` lines) among its own questions, and writes
 * eval-results/gaps.json. How to read it: docs/search-quality.md.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { spawnService } from '../../test/support/processes.js';
import { gql } from '../bench/tenant.js';

const FILE = 'test/fixtures/gaps/questions.tsv';
const SHUFFLES = 4;

const log = (msg: string) => console.log(`[eval ${new Date().toISOString().slice(11, 19)}] ${msg}`);

interface Labelled {
  topic: string;
  question: string;
  /** The part of the file it is in (the last `# part: NAME` line above it; '' before any). */
  part: string;
}

/** The labelled questions: `topic<TAB>question`; `#` lines are comments, `# part: NAME` starts a part. */
export function readLabelled(file = FILE): Labelled[] {
  let part = '';
  const out: Labelled[] = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const named = /^#\s*part:\s*(.+)$/.exec(line.trim());
    if (named) part = named[1].trim();
    if (!line.trim() || line.startsWith('#')) continue;
    const [topic, question] = line.split('\t');
    out.push({ topic: topic.trim(), question: question.trim(), part });
  }
  return out;
}

/** Pairwise precision, recall and F1 of a grouping (`group[i]`) against the topics (`topic[i]`). */
export function pairwise(topic: string[], group: (number | string)[]): { precision: number; recall: number; f1: number } {
  let together = 0;
  let sameTopic = 0;
  let both = 0;
  for (let i = 0; i < topic.length; i++)
    for (let j = i + 1; j < topic.length; j++) {
      const t = topic[i] === topic[j];
      const g = group[i] === group[j];
      if (t) sameTopic++;
      if (g) together++;
      if (t && g) both++;
    }
  const precision = together ? both / together : 0;
  const recall = sameTopic ? both / sameTopic : 0;
  return { precision, recall, f1: precision + recall ? (2 * precision * recall) / (precision + recall) : 0 };
}

/** A deterministic shuffle (mulberry32 with `seed`). */
function shuffled<T>(items: T[], seed: number): T[] {
  let a = seed >>> 0;
  const random = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/** A fresh workspace and a key that reports gaps; its id and Authorization header. */
async function gapWorkspace(url: string, admin: string, name: string): Promise<{ id: string; auth: Record<string, string> }> {
  const { createOrganization: org } = await gql<{ createOrganization: { id: string } }>(
    url,
    admin,
    'mutation($n: String!) { createOrganization(input: { name: $n, plan: "enterprise" }) { id } }',
    { n: `Gap eval ${name}` },
  );
  const { createMember: member } = await gql<{ createMember: { id: string } }>(
    url,
    admin,
    'mutation($o: ID!, $e: String!) { createMember(input: { organizationId: $o, email: $e, role: "owner" }) { id } }',
    { o: org.id, e: `gaps-${name}-${Date.now()}@example.com` },
  );
  const { createWorkspace: ws } = await gql<{ createWorkspace: { id: string } }>(
    url,
    admin,
    'mutation($o: ID!, $n: String!) { createWorkspace(input: { organizationId: $o, name: $n }) { id } }',
    { o: org.id, n: `gaps ${name}` },
  );
  const { createAgentKey: key } = await gql<{ createAgentKey: { key: string } }>(
    url,
    admin,
    'mutation($m: ID!, $w: ID!) { createAgentKey(input: { memberId: $m, name: "eval", ' +
      'permissions: ["content_gap.report", "article.create"], workspaceId: $w }) { key } }',
    { m: member.id, w: ws.id },
  );
  return { id: ws.id, auth: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' } };
}

interface Report {
  question: string;
  groupId: number | null;
}

/** Reports the questions in order, then waits until the worker has put every one in a group; each question's group. */
async function groupsOf(url: string, admin: string, name: string, questions: Labelled[]): Promise<(number | null)[]> {
  const ws = await gapWorkspace(url, admin, name);
  for (const q of questions) {
    const res = await fetch(`${url}/api/v1/workspaces/-/content-gaps`, {
      method: 'POST',
      headers: ws.auth,
      body: JSON.stringify({ question: q.question }),
    });
    if (res.status !== 202) throw new Error(`report: ${res.status} ${await res.text()}`);
  }
  const started = Date.now();
  for (;;) {
    const { contentGapReports: reports } = await gql<{ contentGapReports: Report[] }>(
      url,
      admin,
      'query($w: ID!) { contentGapReports(workspaceId: $w) { question groupId } }',
      { w: ws.id },
    );
    if (reports.length === questions.length && reports.every((r) => r.groupId !== null)) {
      const byQuestion = new Map(reports.map((r) => [r.question, r.groupId]));
      return questions.map((q) => byQuestion.get(q.question) ?? null);
    }
    if (Date.now() - started > 600_000) throw new Error('the questions were not grouped within 10 minutes');
    await new Promise((r) => setTimeout(r, 1000));
  }
}

export interface GapResult {
  order: string;
  groups: number;
  precision: number;
  recall: number;
  f1: number;
  /** The same scores among the questions of each part of the file only (from the same groups). */
  parts: Record<string, { precision: number; recall: number; f1: number }>;
}

/** The pairwise scores of each part's questions among themselves (`part[i]` of question i). */
export function partScores(part: string[], topic: string[], group: (number | string)[]): GapResult['parts'] {
  const out: GapResult['parts'] = {};
  for (const name of new Set(part)) {
    const mine = part.map((p, i) => (p === name ? i : -1)).filter((i) => i >= 0);
    out[name] = pairwise(
      mine.map((i) => topic[i]),
      mine.map((i) => group[i]),
    );
  }
  return out;
}

/** Runs the evaluation on a fresh service; prints and writes the results. */
export async function evalGaps(): Promise<GapResult[]> {
  const labelled = readLabelled();
  const topics = new Set(labelled.map((l) => l.topic)).size;
  const partNames = [...new Set(labelled.map((l) => l.part))];
  log(`${labelled.length} questions in ${topics} topics (${FILE})`);
  const admin = `adm_eval_${Date.now()}`;
  const service = await spawnService({
    ADMIN_TOKEN: admin,
    RATE_LIMIT_MAX: '100000000',
    EMBEDDINGS: process.env.EVAL_EMBEDDINGS ?? 'local',
    ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : { DATA_DIR: `./eval-results/data-gaps-${Date.now()}` }),
  });
  const results: GapResult[] = [];
  try {
    const orders = [{ name: 'file order', questions: labelled }];
    for (let seed = 1; seed <= SHUFFLES; seed++) orders.push({ name: `shuffle ${seed}`, questions: shuffled(labelled, seed) });
    for (const order of orders) {
      const groups = await groupsOf(service.url, admin, order.name.replace(' ', '-'), order.questions);
      const topicOf = order.questions.map((q) => q.topic);
      const groupOf = groups.map((g, i) => g ?? `none-${i}`);
      const scores = pairwise(topicOf, groupOf);
      const parts = partScores(
        order.questions.map((q) => q.part),
        topicOf,
        groupOf,
      );
      results.push({ order: order.name, groups: new Set(groups).size, ...scores, parts });
      log(
        `${order.name}: ${new Set(groups).size} groups, precision ${scores.precision.toFixed(3)}, ` +
          `recall ${scores.recall.toFixed(3)}, F1 ${scores.f1.toFixed(3)}; ` +
          partNames.map((name) => `part ${name || '-'} F1 ${parts[name].f1.toFixed(3)}`).join(', '),
      );
    }
  } finally {
    await service.stop();
  }
  const mean = (k: 'precision' | 'recall' | 'f1' | 'groups') => results.reduce((s, r) => s + r[k], 0) / results.length;
  console.log(`\n| order | groups (${topics} topics) | precision | recall | pairwise F1 |`);
  console.log('|---|---|---|---|---|');
  for (const r of results)
    console.log(`| ${r.order} | ${r.groups} | ${r.precision.toFixed(3)} | ${r.recall.toFixed(3)} | ${r.f1.toFixed(3)} |`);
  console.log(
    `| mean | ${mean('groups').toFixed(1)} | ${mean('precision').toFixed(3)} | ${mean('recall').toFixed(3)} | ${mean('f1').toFixed(3)} |`,
  );
  if (partNames.length > 1) {
    console.log(`\n| part (mean of the orders, its questions among themselves) | questions | topics | precision | recall | pairwise F1 |`);
    console.log('|---|---|---|---|---|---|');
    for (const name of partNames) {
      const mine = labelled.filter((l) => l.part === name);
      const partMean = (k: 'precision' | 'recall' | 'f1') => results.reduce((s, r) => s + r.parts[name][k], 0) / results.length;
      console.log(
        `| ${name || '-'} | ${mine.length} | ${new Set(mine.map((l) => l.topic)).size} | ${partMean('precision').toFixed(3)} | ` +
          `${partMean('recall').toFixed(3)} | ${partMean('f1').toFixed(3)} |`,
      );
    }
  }
  console.log('\nTarget: pairwise F1 ≥ 0.85.');
  mkdirSync('eval-results', { recursive: true });
  writeFileSync('eval-results/gaps.json', `${JSON.stringify(results, null, 2)}\n`);
  log('wrote eval-results/gaps.json');
  return results;
}
