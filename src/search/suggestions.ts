import type { SqlTarget } from '../db/sql.js';
import { contentRevision, fullTextFinds, visibleTitles, type SearchScope } from '../store/search.js';
import { similarity, trigrams } from './trigrams.js';

/**
 * "Did you mean": for a full-text query with no hits, the same query with each word the
 * workspace does not use replaced by the closest word it does, kept only if it finds something.
 *
 * The vocabulary is the words of the titles of the articles (not archived) and published
 * changelog entries the caller may see — restricted titles only for keys that may see restricted
 * content, so a suggestion never reveals them. It is built once per content revision and
 * visibility (one query over titles, not bodies, so it stays cheap at 10,000 articles) and kept in
 * the process. A word full text finds on its own (in a body, say) is kept as it is. Closeness: trigram similarity of the two words (pg_trgm's), at least
 * WORD_SIMILARITY, then fewer edits, then the more frequent word.
 */
const WORD_SIMILARITY = 0.3;
export const MAX_SUGGESTIONS = 3;
const VOCABULARIES_KEPT = 16;

interface Vocabulary {
  words: Map<string, number>;
  grams: Map<string, Set<number>>;
}
const vocabularies = new Map<string, Vocabulary>();

/** The query's words, lower-cased, without web-search operators (or, a leading -, quotes). */
function queryWords(q: string): string[] {
  return (q.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => w !== 'or');
}

async function vocabulary(db: SqlTarget, who: SearchScope): Promise<Vocabulary> {
  const revision = await contentRevision(db, who.workspaceId);
  const key = `${who.workspaceId} ${revision} ${who.seeRestricted ? 'all' : 'public'}`;
  const kept = vocabularies.get(key);
  if (kept) return kept;
  const rows = await visibleTitles(db, who);
  const words = new Map<string, number>();
  for (const { title } of rows) for (const word of queryWords(title)) if (word.length > 1) words.set(word, (words.get(word) ?? 0) + 1);
  const grams = new Map([...words.keys()].map((w) => [w, trigrams(w)]));
  const built = { words, grams };
  vocabularies.set(key, built);
  if (vocabularies.size > VOCABULARIES_KEPT) vocabularies.delete(vocabularies.keys().next().value!);
  return built;
}

/**
 * Queries like `q` with unknown words replaced by close known ones: at most MAX_SUGGESTIONS, in
 * order of preference, each of which full text finds something for.
 */
export async function suggestQueries(db: SqlTarget, who: SearchScope, q: string): Promise<string[]> {
  const words = queryWords(q);
  if (!words.length || words.length > 8) return [];
  // A word the titles lack may still be in a body: one full text finds is kept as it is. Only the
  // words the titles lack are asked about (a title's word is known anyway): those are the rarer
  // ones, and a common word's lookup costs tens of milliseconds at 100,000 articles.
  const vocab = await vocabulary(db, who);
  const untitled = [...new Set(words)].filter((w) => !vocab.words.has(w));
  const found = await fullTextFinds(db, who, untitled, 'plainto_tsquery', true);
  const used = new Set(untitled.filter((_, i) => found[i]));
  const options = words.map((word) => (vocab.words.has(word) || used.has(word) ? [word] : closest(vocab, word)));
  if (options.every((o, i) => o.length === 1 && o[0] === words[i])) return [];
  if (options.some((o) => !o.length)) return [];
  // Combinations in order of preference: each word's best first, then its next ones.
  const candidates: string[] = [];
  const seen = new Set<string>();
  for (let choice = 0; choice < MAX_SUGGESTIONS; choice++) {
    for (let i = 0; i < options.length && candidates.length < MAX_SUGGESTIONS * 2; i++) {
      const pick = options.map((o, j) => (j === i ? (o[choice] ?? o[0]) : o[0])).join(' ');
      if (!seen.has(pick)) {
        seen.add(pick);
        candidates.push(pick);
      }
    }
  }
  const finding = await fullTextFinds(db, who, candidates, 'websearch_to_tsquery');
  return candidates.filter((_, i) => finding[i]).slice(0, MAX_SUGGESTIONS);
}

/** The known words closest to `word`, best first (at most MAX_SUGGESTIONS). */
function closest(vocab: Vocabulary, word: string): string[] {
  const grams = trigrams(word);
  const scored: { word: string; similarity: number; edits: number; count: number }[] = [];
  for (const [known, knownGrams] of vocab.grams) {
    const s = similarity(grams, knownGrams);
    if (s >= WORD_SIMILARITY) scored.push({ word: known, similarity: s, edits: editDistance(word, known), count: vocab.words.get(known)! });
  }
  return scored
    .sort((a, b) => b.similarity - a.similarity || a.edits - b.edits || b.count - a.count || (a.word < b.word ? -1 : 1))
    .slice(0, MAX_SUGGESTIONS)
    .map((s) => s.word);
}

/** Levenshtein distance (two rows). */
function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row.push(Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1)));
    prev = row;
  }
  return prev[b.length];
}
