/**
 * Ranked retrieval: BM25F over each workspace's terms, held in process (TermIndex) and caught up
 * with the database before every search, so a write committed by any process is found by the next
 * search in every other (docs/architecture.md, search). Workspace search ranks articles and
 * published changelog entries; memory search ranks notes.
 */
import type { SqlTarget } from '../db/sql.js';
import {
  changesSince,
  lexemesOf,
  phraseHolders,
  searchHorizon,
  sectionVisibility,
  termsByIds,
  termsPage,
  typesOf,
  type Corpus,
  type TermsRow,
} from '../store/searchTerms.js';
import { compoundWords, parseQuery, splitCompound } from './queryText.js';
import { TermIndex, type IndexedType, type QueryTerm, type RankParams, type Ranking } from './termIndex.js';
import { anyLexemeQuery, FIELD_OF_WEIGHT, readTsvector } from './tsvectorText.js';

export type { Corpus } from '../store/searchTerms.js';

/**
 * BM25F's parameters: the textbook k1 and b, a title twice a body word and a heading one and a
 * half. Checked by `npm run eval:search` on six judged collections (docs/search-quality.md);
 * chosen among the textbook values, not fitted to them.
 */
export const BM25F: RankParams = { k1: 1.2, b: 0.75, weights: [2, 1.5, 1] };
/** A word said n times in a question weighs (k3 + 1)·n / (k3 + n): more, but less than n times (BM25's query-term saturation). */
export const K3 = 4;
/** Most distinct terms a question ranks by (its rarest), and most postings one ranking reads (its commonest terms are dropped first). */
export const MAX_TERMS = 64;
export const MAX_POSTINGS = 2_000_000;
/** A process that has not caught up for this long reloads a workspace whole (removals are kept a day). */
const RELOAD_AFTER_MS = 6 * 3600_000;
/** Rows read per statement while a workspace loads: parsing a batch holds the event loop ~30 ms. */
const LOAD_BATCH = 500;

interface Held {
  index: TermIndex;
  horizon: string;
  syncedAt: number;
  usedAt: number;
  running: Promise<void> | null;
  queued: Promise<void> | null;
}

/**
 * Every workspace's index this process holds, least recently used dropped past `maxBytes`. They
 * load and catch up on `db`, the primary (never a replica: a lagging one could show an index a row
 * the primary has since removed, after the removal was read).
 */
export class FullTextIndexes {
  private readonly held = new Map<string, Held>();
  private readonly loading = new Map<string, Promise<Held>>();

  constructor(
    private readonly db: SqlTarget,
    private readonly maxBytes: number,
  ) {}

  /** The workspace's index of `corpus`, caught up with every commit made before this call. */
  async index(workspace: string, corpus: Corpus): Promise<TermIndex> {
    const { db } = this;
    const key = `${corpus}:${workspace}`;
    let held = this.held.get(key);
    if (held && Date.now() - held.syncedAt > RELOAD_AFTER_MS) {
      this.held.delete(key);
      held = undefined;
    }
    if (!held) {
      let load = this.loading.get(key);
      if (!load) {
        load = loadWorkspace(db, workspace, corpus).finally(() => this.loading.delete(key));
        this.loading.set(key, load);
        held = await load;
        this.held.set(key, held);
        this.evict(key);
      } else held = await load;
    }
    await catchUp(held, () => syncWorkspace(db, workspace, corpus, held));
    held.usedAt = Date.now();
    return held.index;
  }

  /** Indexes held, and their items, postings and bytes (for /metrics and the bench). */
  usage(): { indexes: number; items: number; postings: number; bytes: number } {
    let items = 0;
    let postings = 0;
    let bytes = 0;
    for (const h of this.held.values()) {
      const m = h.index.memory();
      items += h.index.size;
      postings += m.postings;
      bytes += m.bytes;
    }
    return { indexes: this.held.size, items, postings, bytes };
  }

  /** Drops the least recently searched indexes but `keep` while all of them hold more than `maxBytes` (after a load). */
  private evict(keep: string): void {
    const bytes = new Map([...this.held].map(([key, h]) => [key, h.index.memory().bytes]));
    let total = [...bytes.values()].reduce((a, b) => a + b, 0);
    const oldest = [...this.held.entries()].filter(([k]) => k !== keep).sort((a, b) => a[1].usedAt - b[1].usedAt);
    for (const [key] of oldest) {
      if (total <= this.maxBytes) break;
      this.held.delete(key);
      total -= bytes.get(key)!;
    }
  }
}

/**
 * Runs `sync` so that it starts after this call: a sync already running may have read before a
 * commit this caller has seen, so the caller waits for the next one, which every caller arriving
 * meanwhile shares.
 */
function catchUp(held: Held, sync: () => Promise<void>): Promise<void> {
  const run = () => {
    const running = sync().finally(() => {
      if (held.running === running) held.running = null;
    });
    held.running = running;
    return running;
  };
  if (!held.running) return run();
  held.queued ??= held.running
    .catch(() => undefined)
    .then(() => {
      held.queued = null;
      return run();
    });
  return held.queued;
}

/** Reads a workspace's corpus whole: the horizon first (what commits later is caught up after), then its rows in batches. */
async function loadWorkspace(db: SqlTarget, workspace: string, corpus: Corpus): Promise<Held> {
  const horizon = await searchHorizon(db);
  const index = new TermIndex();
  if (corpus === 'content') for (const s of await sectionVisibility(db, workspace)) if (s.restricted) index.setSection(s.id, true);
  for (const type of typesOf(corpus)) {
    for (let after = 0; ;) {
      const rows = await termsPage(db, workspace, corpus, type, after, LOAD_BATCH);
      for (const row of rows) putRow(index, row);
      if (rows.length < LOAD_BATCH) break;
      after = rows[rows.length - 1].id;
    }
  }
  return { index, horizon, syncedAt: Date.now(), usedAt: Date.now(), running: null, queued: null };
}

/** Applies what changed since the held horizon: sections' visibility, removals, and rows written again (their terms read only when not held yet). */
async function syncWorkspace(db: SqlTarget, workspace: string, corpus: Corpus, held: Held): Promise<void> {
  const { rows, horizon } = await changesSince(db, workspace, corpus, held.horizon);
  const { index } = held;
  const wanted: Record<string, number[]> = {};
  for (const row of rows) {
    if (row.type === 'section') index.setSection(row.id, row.restricted);
    else if (row.type === 'removed') index.remove(row.removed_type!, row.id, BigInt(row.xid));
    else if (!row.live) index.remove(row.type, row.id, BigInt(row.xid));
    else if (index.versionOf(row.type, row.id) !== BigInt(row.xid)) (wanted[row.type] ??= []).push(row.id);
  }
  if (Object.keys(wanted).length) for (const row of await termsByIds(db, workspace, corpus, wanted)) putRow(index, row);
  held.horizon = horizon;
  held.syncedAt = Date.now();
}

function putRow(index: TermIndex, row: TermsRow): void {
  const type = row.type as IndexedType;
  if (!row.live || row.terms === null) {
    index.remove(type, row.id, BigInt(row.xid));
    return;
  }
  index.put({
    type,
    id: row.id,
    xid: BigInt(row.xid),
    section: row.section,
    restricted: row.restricted,
    terms: readTsvector(row.terms, FIELD_OF_WEIGHT[type]),
  });
}

/** Printed tsvectors of recent texts (a question is often asked again; stemming is the same for every workspace). */
const recentLexemes = new Map<string, string>();
const RECENT_LEXEMES = 2_000;

async function lexemes(db: SqlTarget, texts: string[]): Promise<string[]> {
  const missing = texts.filter((t) => !recentLexemes.has(t));
  if (missing.length) {
    const read = await lexemesOf(db, missing);
    missing.forEach((t, i) => recentLexemes.set(t, read[i]));
    while (recentLexemes.size > RECENT_LEXEMES) recentLexemes.delete(recentLexemes.keys().next().value!);
  }
  return texts.map((t) => recentLexemes.get(t)!);
}

/** A question's terms: each lexeme weighed by how often it is said (see K3), the rarest MAX_TERMS kept by the index. */
function queryTerms(printed: string): QueryTerm[] {
  const { lexemes: found, tfs } = readTsvector(printed, FIELD_OF_WEIGHT.note);
  return found.map((lexeme, i) => {
    const n = (tfs[i] >>> 12) + ((tfs[i] >>> 8) & 15) + (tfs[i] & 255);
    return { lexeme, weight: (n * (K3 + 1)) / (n + K3) };
  });
}

/**
 * A question's terms with each word the reader's items lack that splits into two they hold (a
 * word written as one where the docs write two: `rollback`, "roll back") replaced by those two,
 * each weighing what the word weighed.
 */
function splitCompounds(
  terms: QueryTerm[],
  words: string[],
  lexemeOf: (string | undefined)[],
  holds: (lexeme: string) => boolean,
): QueryTerm[] {
  let out = terms;
  words.forEach((word, i) => {
    const lexeme = lexemeOf[i];
    const term = out.find((t) => t.lexeme === lexeme);
    if (!lexeme || !term || holds(lexeme)) return;
    const parts = splitCompound(word, holds);
    if (!parts) return;
    out = out.filter((t) => t !== term);
    for (const part of parts) if (!out.some((t) => t.lexeme === part)) out.push({ lexeme: part, weight: term.weight });
  });
  return out;
}

/** A full-text ranking of a question and what made it. */
export interface FullTextResult {
  ranking: Ranking;
  index: TermIndex;
  /** A tsquery matching any of the question's lexemes (snippets mark them), or null when it has none. */
  anyLexeme: string | null;
  seesRestricted: boolean;
  /** The question's quoted phrases narrowed to nothing the caller may read, so it was ranked by its words. */
  phrasesIgnored?: boolean;
}

/**
 * Ranks a workspace's corpus for `q` (websearch syntax, see parseQuery) by BM25F, its first
 * `depth` hits: only what the caller may read (`seesRestricted`), scored by the statistics of
 * exactly that. The database is asked at once for what changed since the index last caught up,
 * the question's lexemes and the items holding its required and excluded phrases.
 */
export async function rankFullText(
  db: SqlTarget,
  indexes: Pick<FullTextIndexes, 'index'>,
  args: { workspace: string; corpus: Corpus; q: string; seesRestricted: boolean; depth: number },
): Promise<FullTextResult> {
  const { workspace, corpus } = args;
  const parsed = parseQuery(args.q);
  const excludedPhrases = parsed.excluded.filter((e) => /\s/.test(e.trim()));
  const excludedWords = parsed.excluded.filter((e) => !/\s/.test(e.trim()));
  const compounds = compoundWords(parsed.words);
  const [index, printed, required, excluded] = await Promise.all([
    indexes.index(workspace, corpus),
    lexemes(db, [parsed.words, ...excludedWords, ...compounds]),
    parsed.required.length ? phraseHolders(db, workspace, corpus, parsed.required) : null,
    excludedPhrases.length ? phraseHolders(db, workspace, corpus, [excludedPhrases], true) : [],
  ]);
  const firstLexeme = (p: string) => readTsvector(p, FIELD_OF_WEIGHT.note).lexemes[0];
  // A word excluded is excluded as written: its first lexeme (a compound's whole form, as `e-mail`).
  const without = printed.slice(1, 1 + excludedWords.length).flatMap((p) => firstLexeme(p) ?? []);
  const terms = splitCompounds(queryTerms(printed[0]), compounds, printed.slice(1 + excludedWords.length).map(firstLexeme), (part) =>
    index.holds(part, args.seesRestricted),
  );
  const key = (r: { type: string; id: number }) => `${r.type}:${r.id}`;
  const rank = (only: Set<string> | null) =>
    index.rank(
      {
        terms,
        seesRestricted: args.seesRestricted,
        only,
        except: new Set(excluded.map(key)),
        without,
        depth: args.depth,
        maxPostings: MAX_POSTINGS,
        maxTerms: MAX_TERMS,
      },
      BM25F,
    );
  let ranking = rank(required ? new Set(required.map(key)) : null);
  // Quoted text no item the caller may read holds (a citation inside a question, more often than
  // an operator) narrows to nothing: the question is then ranked by its words, quotes and all.
  // Only what the caller may read is ranked either way, so the fallback tells it nothing of the rest.
  const phrasesIgnored = required !== null && !ranking.hits.length && terms.length > 0;
  if (phrasesIgnored) ranking = rank(null);
  return { ranking, index, anyLexeme: anyLexemeQuery(terms.map((t) => t.lexeme)), seesRestricted: args.seesRestricted, phrasesIgnored };
}
