import { pgArray, sql, type SqlTarget } from '../db/sql.js';

/**
 * Near-duplicate memory notes, so an agent can merge instead of writing a second copy.
 *
 * Closeness is the trigram similarity PostgreSQL's pg_trgm defines: the Jaccard index of the two
 * bodies' sets of character trigrams (lower-cased words of letters and digits, each padded with
 * two spaces before and one after). Comparing a new body with every note of a workspace costs
 * seconds (pg_trgm: 6 s for 10,000 bodies of 2 KB), so candidates come from MinHash banding:
 * each note stores NEAR_BANDS band keys (`memory_notes.near_keys`, a GIN-indexed int[]), each a
 * hash of the workspace and two MinHash values of its trigrams. Two bodies of similarity s share
 * a band with probability 1 − (1 − s²)^10: 0.99 at s = 0.6, 0.9999 at s = 0.8. Candidates (at most
 * NEAR_CANDIDATES) are then scored exactly, and those at or above NEAR_THRESHOLD are reported.
 */
export const NEAR_THRESHOLD = 0.6;
/** Bodies with fewer distinct trigrams (about one short sentence) are not compared: closeness means little there. */
export const NEAR_MIN_TRIGRAMS = 30;
export const NEAR_LIMIT = 5;
const NEAR_BANDS = 10;
const NEAR_CANDIDATES = 50;
const HASHES = NEAR_BANDS * 2;

/** Seeds of the MinHash functions h(x) = a·x + b mod 2³², fixed so keys stay comparable across processes and restarts. */
const SEEDS = Array.from({ length: HASHES }, (_, i) => [fnv(`a${i}`) | 1, fnv(`b${i}`)] as const);

/** The distinct trigrams of a text, as pg_trgm makes them. */
export function trigrams(text: string): Set<string> {
  const out = new Set<string>();
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    const padded = `  ${word} `;
    const chars = Array.from(padded);
    for (let i = 0; i + 3 <= chars.length; i++) out.add(chars[i] + chars[i + 1] + chars[i + 2]);
  }
  return out;
}

/** The Jaccard index of two trigram sets (pg_trgm's similarity()). */
export function similarity(a: Set<string>, b: Set<string>): number {
  if (!a.size && !b.size) return 0;
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  let shared = 0;
  for (const t of small) if (large.has(t)) shared++;
  return shared / (a.size + b.size - shared);
}

/** The band keys of a body in a workspace (none when it is too short to compare). */
export function nearKeys(workspaceId: string, grams: Set<string>): number[] {
  if (grams.size < NEAR_MIN_TRIGRAMS) return [];
  const mins = new Array<number>(HASHES).fill(0xffffffff);
  for (const gram of grams) {
    const x = fnv(gram);
    for (let i = 0; i < HASHES; i++) {
      const h = (Math.imul(SEEDS[i][0], x) + SEEDS[i][1]) >>> 0;
      if (h < mins[i]) mins[i] = h;
    }
  }
  const keys: number[] = [];
  for (let band = 0; band < NEAR_BANDS; band++) keys.push(fnv(`${workspaceId}/${band}/${mins[2 * band]}/${mins[2 * band + 1]}`) | 0);
  return keys;
}

/** The band keys as a SQL int[] literal. */
export function nearKeysParam(keys: number[]): string {
  return pgArray(keys.map(String));
}

/** Notes of the workspace (other than `path`) whose body is at least NEAR_THRESHOLD similar, closest first, at most NEAR_LIMIT. */
export async function similarNotes(
  db: SqlTarget,
  workspaceId: string,
  path: string,
  grams: Set<string>,
  keys: number[],
): Promise<{ path: string; score: number }[]> {
  if (!keys.length) return [];
  const candidates = await sql<{ path: string; body: string }>(
    db,
    `select path, body from memory_notes where workspace_id = ? and near_keys && ?::int[] and path <> ? limit ${NEAR_CANDIDATES}`,
    [workspaceId, nearKeysParam(keys), path],
    'memory_near_candidates',
  );
  return candidates
    .map((c) => ({ path: c.path, score: Math.round(similarity(grams, trigrams(c.body)) * 1000) / 1000 }))
    .filter((c) => c.score >= NEAR_THRESHOLD)
    .sort((a, b) => b.score - a.score || (a.path < b.path ? -1 : 1))
    .slice(0, NEAR_LIMIT);
}

/** Gives band keys to notes written before near-duplicate detection (a batch per call; run now and then). */
export async function backfillNearKeys(db: SqlTarget, batch = 500): Promise<number> {
  const rows = await sql<{ id: number; workspace_id: string; body: string }>(
    db,
    'select id, workspace_id, body from memory_notes where near_keys is null limit ?',
    [batch],
  );
  for (const row of rows) {
    // Only if the body is still the one the keys were made from (a write meanwhile set its own).
    await sql(db, 'update memory_notes set near_keys = ?::int[] where id = ? and near_keys is null and body = ?', [
      nearKeysParam(nearKeys(row.workspace_id, trigrams(row.body))),
      row.id,
      row.body,
    ]);
  }
  return rows.length;
}

/** 32-bit FNV-1a of a string's UTF-16 units. */
function fnv(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
