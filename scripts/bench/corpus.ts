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

/** A seeded pseudo-random generator (mulberry32): the same corpus on every run. */
export function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The corpus's one random stream (words, note sizes, noise): drawn in seeding order. */
export const random = rng(42);

const VOCABULARY = [
  ...REAL_WORDS,
  ...Array.from({ length: 4000 }, (_, i) => {
    let w = '';
    for (let n = i + 7; w.length < 6 || n > 0; n = Math.floor(n / 80)) w += CONSONANTS[n % 16] + VOWELS[Math.floor(n / 16) % 5];
    return w;
  }),
];
const ZIPF = (() => {
  const cumulative: number[] = [];
  let total = 0;
  // Zipf–Mandelbrot (offset 20): the head of a plain Zipf law is the stop words, which full-text
  // search drops; the most common content word then appears in most articles, a rank-100 one in ~1 in 5.
  for (let r = 0; r < VOCABULARY.length; r++) cumulative.push((total += 1 / (r + 20)));
  return cumulative.map((c) => c / total);
})();

function word(): string {
  return wordBy(random());
}

/** The vocabulary's word at cumulative Zipf probability `x`. */
function wordBy(x: number): string {
  let lo = 0;
  let hi = ZIPF.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (ZIPF[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return VOCABULARY[lo];
}

/** `n` words drawn from the Zipf law, space-separated. */
export const sentence = (n: number): string => Array.from({ length: n }, word).join(' ');

/** A memory note's Markdown body of 1–4 KB (uniform), cut at a word boundary. */
export function noteBody(i: number): string {
  const size = 1024 + Math.floor(random() * 3072);
  let body = `# Note ${i}\n`;
  while (body.length < size) body += `${sentence(30)}.\n`;
  const end = body.indexOf(' ', size);
  return end < 0 ? body : body.slice(0, end);
}

/** Thirty common real words, for tags and one-word searches. */
export const WORDS = REAL_WORDS.slice(0, 30);

/**
 * Full-text queries as agents send them: content words drawn uniformly from the real vocabulary
 * (so some are among the corpus's most common words and match most articles), alone, in pairs,
 * and a few with websearch operators.
 */
export const FTS_QUERIES = ftsQueries(7, 30, 24, 2);

/**
 * Other full-text queries of the same shapes and as many, to warm a service up before its latency
 * is measured without asking the measured ones: its connections' backends and its JavaScript. At
 * 100,000 articles a fresh service's first pass of 60 queries had a p95 of 34–42 ms and its second
 * pass of the same queries 27–28 (15 warm-up queries left most of that in the measured loop).
 */
export const FTS_WARM_QUERIES = ftsQueries(8, 30, 24, 2);

function ftsQueries(seed: number, words: number, pairs: number, each: number): string[] {
  const pick = rng(seed);
  const w = () => REAL_WORDS[Math.floor(pick() * REAL_WORDS.length)];
  return [
    ...Array.from({ length: words }, w),
    ...Array.from({ length: pairs }, () => `${w()} ${w()}`),
    ...Array.from({ length: each }, () => `"${w()} ${w()}"`),
    ...Array.from({ length: each }, () => `${w()} or ${w()}`),
    ...Array.from({ length: each }, () => `${w()} -${w()}`),
  ];
}

/**
 * Twenty-word questions, as agents paste them: words drawn from the corpus's own Zipf law (so most
 * are common words matching most articles), a seeded stream of their own so the corpus stays as it is.
 */
export const FTS_QUESTIONS = questions(9, 40, 20);
/** Other questions of the same shape, to warm up with. */
export const FTS_WARM_QUESTIONS = questions(10, 20, 20);

function questions(seed: number, count: number, words: number): string[] {
  const pick = rng(seed);
  return Array.from({ length: count }, () => Array.from({ length: words }, () => wordBy(pick())).join(' '));
}

const VERBS = ['change', 'reset', 'rotate', 'configure', 'delete', 'restore', 'export', 'upgrade', 'debug', 'monitor', 'limit', 'share'];
const NOUNS = [
  'password',
  'api key',
  'webhook',
  'workspace',
  'backup',
  'release',
  'database',
  'team member',
  'invoice',
  'upload',
  'search index',
  'rate limit',
  'session',
  'certificate',
  'changelog',
  'draft article',
];
/** Natural-language questions, all distinct (so every one is embedded: no query-vector cache hits). */
export const SEMANTIC_QUERIES = VERBS.flatMap((v) => NOUNS.map((n) => `how do I ${v} the ${n}`));

/** A real vector plus Gaussian noise, renormalised (float32 bytes, the portable storage format). */
export function noisy(source: Float32Array): Buffer {
  const sigma = 0.015 + random() * 0.03;
  const v = Array.from(source, (x) => x + sigma * Math.sqrt(-2 * Math.log(random() || 1e-9)) * Math.cos(2 * Math.PI * random()));
  const n = Math.hypot(...v);
  return Buffer.from(Float32Array.from(v.map((x) => x / n)).buffer);
}
