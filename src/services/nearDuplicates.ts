import type { SqlTarget } from '../db/sql.js';
import { similarity, trigramHashes, trigrams } from '../search/trigrams.js';
import { nearCandidates, noteBodies, notesWithoutNearKeys, setNearKeys } from '../store/noteNearKeys.js';

export { similarity, trigrams };

/**
 * Near-duplicate memory notes, so an agent can merge instead of writing a second copy.
 *
 * Closeness is trigram similarity as PostgreSQL's pg_trgm defines it: the Jaccard index of the
 * two bodies' sets of character trigrams (lower-cased words of letters and digits, each padded
 * with two spaces before and one after); trigrams are compared as 32-bit hashes. Comparing a new
 * body with every note of a workspace costs seconds (pg_trgm: 6 s for 10,000 bodies of 2 KB), so
 * candidates come from MinHash banding: each note stores NEAR_BANDS band keys
 * (`memory_notes.near_keys`, a GIN-indexed int[]), each a hash of the workspace and NEAR_ROWS
 * MinHash values. Two bodies of similarity s share a band with probability 1 − (1 − s⁴)^16:
 * 0.89 at s = 0.6, 0.988 at 0.7, 0.9992 at 0.8. Of at most NEAR_CANDIDATES (50, the candidate
 * statement's limit in store/noteNearKeys.ts) notes sharing a band, the NEAR_SCORED (5) sharing the
 * most bands are scored exactly; those at or above NEAR_THRESHOLD are reported. The cost of a create is thereby bounded whatever the workspace holds.
 */
export const NEAR_THRESHOLD = 0.6;
/** Bodies with fewer distinct trigrams (about one short sentence) are not compared: closeness means little there. */
export const NEAR_MIN_TRIGRAMS = 30;
export const NEAR_LIMIT = 5;
const NEAR_BANDS = 16;
const NEAR_ROWS = 4;
const NEAR_SCORED = 5;
const HASHES = NEAR_BANDS * NEAR_ROWS;
// nearKeys splits a 32-bit hash into 6 bin bits and 26 value bits.
if (HASHES !== 64) throw new Error('nearKeys assumes 64 MinHash bins');

/**
 * The band keys of a body in a workspace (none when it is too short to compare). The HASHES
 * MinHash values come from one-permutation hashing: each trigram's hash picks a bin by its low
 * bits and competes for that bin's minimum with its other bits (one hash per trigram instead of
 * one per trigram and function); an empty bin borrows the next filled one's value, shifted by the
 * distance, so equal sets still agree bin by bin. A minimum is the same whether a trigram is seen
 * once or many times, so the trigrams are streamed (no set is built: this runs on every PUT);
 * only the first NEAR_MIN_TRIGRAMS distinct ones are counted.
 */
export function nearKeys(workspaceId: string, body: string): number[] {
  // Values are below 2^26 (a 32-bit hash without its 6 bin bits); an empty bin's borrowed value may reach 2^32, hence doubles.
  const mins = new Float64Array(HASHES).fill(-1);
  const firstSeen = new Set<number>();
  let distinct = 0;
  const { hashes, count } = trigramHashes(body);
  for (let i = 0; i < count; i++) {
    const gram = hashes[i];
    if (distinct < NEAR_MIN_TRIGRAMS) distinct = firstSeen.add(gram).size;
    const h = Math.imul(gram ^ (gram >>> 15), 0x2c1b3c6d) >>> 0;
    // HASHES is 64: the low 6 bits pick the bin (h % 64), the other 26 compete (⌊h / 64⌋).
    const bin = h & (HASHES - 1);
    const value = h >>> 6;
    const min = mins[bin];
    if (min === -1 || value < min) mins[bin] = value;
  }
  if (distinct < NEAR_MIN_TRIGRAMS) return [];
  for (let i = 0; i < HASHES; i++) {
    if (mins[i] !== -1) continue;
    let j = 1;
    while (mins[(i + j) % HASHES] === -1) j++;
    mins[i] = mins[(i + j) % HASHES] + j * 0x4000000;
  }
  // Each key is FNV-1a of the text `${workspaceId}/${band}/${v0}/${v1}/${v2}/${v3}`, hashed as it
  // would be written, without writing it: the workspace's part once, then the band and its values.
  const prefix = fnvText(FNV_OFFSET, `${workspaceId}/`);
  const keys: number[] = [];
  for (let band = 0; band < NEAR_BANDS; band++) {
    let h = fnvChar(fnvDigits(prefix, band), SLASH);
    for (let row = 0; row < NEAR_ROWS; row++) {
      if (row) h = fnvChar(h, SLASH);
      h = fnvDigits(h, mins[band * NEAR_ROWS + row]);
    }
    keys.push(h | 0);
  }
  return keys;
}

/** Notes of the workspace (other than `path`) whose body is at least NEAR_THRESHOLD similar, closest first, at most NEAR_LIMIT. */
export async function similarNotes(
  db: SqlTarget,
  workspaceId: string,
  path: string,
  grams: Set<number>,
  keys: number[],
): Promise<{ path: string; score: number }[]> {
  if (!keys.length) return [];
  const candidates = await nearCandidates(db, workspaceId, keys, path);
  if (!candidates.length) return [];
  const wanted = new Set(keys);
  const shared = (c: { near_keys: number[] }) => c.near_keys.filter((k) => wanted.has(k)).length;
  const best = candidates
    .map((c) => ({ path: c.path, shared: shared(c) }))
    .sort((a, b) => b.shared - a.shared)
    .slice(0, NEAR_SCORED)
    .map((c) => c.path);
  const bodies = await noteBodies(db, workspaceId, best);
  return bodies
    .map((c) => ({ path: c.path, score: Math.round(similarity(grams, trigrams(c.body)) * 1000) / 1000 }))
    .filter((c) => c.score >= NEAR_THRESHOLD)
    .sort((a, b) => b.score - a.score || (a.path < b.path ? -1 : 1))
    .slice(0, NEAR_LIMIT);
}

/** Gives band keys to notes written before near-duplicate detection (a batch per call; run now and then). */
export async function backfillNearKeys(db: SqlTarget, batch = 500): Promise<number> {
  const rows = await notesWithoutNearKeys(db, batch);
  for (const row of rows) {
    // Only if the body is still the one the keys were made from (a write meanwhile set its own).
    await setNearKeys(db, row.id, nearKeys(row.workspace_id, row.body), row.body);
  }
  return rows.length;
}

const FNV_OFFSET = 0x811c9dc5;
const SLASH = 0x2f;
const ZERO = 0x30;

/** 32-bit FNV-1a (of UTF-16 units) continued from `h` with one unit. */
function fnvChar(h: number, unit: number): number {
  return Math.imul(h ^ unit, 0x01000193);
}

/** FNV-1a continued from `h` with a string's UTF-16 units. */
function fnvText(h: number, text: string): number {
  for (let i = 0; i < text.length; i++) h = fnvChar(h, text.charCodeAt(i));
  return h;
}

/** The decimal digits of a whole number below 2^53, most significant first. */
const digits = new Uint8Array(16);

/** FNV-1a continued from `h` with the decimal digits of a non-negative whole number, as `String(n)` writes it. */
function fnvDigits(h: number, n: number): number {
  let length = 0;
  do {
    const rest = Math.floor(n / 10);
    digits[length++] = n - rest * 10;
    n = rest;
  } while (n > 0);
  while (length > 0) h = fnvChar(h, ZERO + digits[--length]);
  return h;
}
