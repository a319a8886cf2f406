/**
 * An inverted index of one workspace's searchable items in process, and BM25F ranking over it.
 *
 * Postings are per lexeme: the slot of each item holding it and its packed term frequencies
 * (title, headings, body: see packTf), 6 bytes a posting. An item written again gets a new slot;
 * the old one is marked dead and skipped until compaction. Statistics are kept per audience:
 * `public` counts only items everyone may read, `all` adds restricted ones, so a caller's scores
 * come from the items it may read and no other (docs/behaviour.md, search).
 */
import type { DocTerms } from './tsvectorText.js';

/** The types of item an index holds (workspace search: articles and changelog entries; memory search: notes). */
export type IndexedType = 'article' | 'changelog' | 'note';
const TYPES: readonly IndexedType[] = ['article', 'changelog', 'note'];

/** An item as the index takes it: what it is, who may read it, and its terms. */
export interface IndexedItem {
  type: IndexedType;
  id: number;
  /** The writing transaction (xid8 as text): an older version never replaces a newer one. */
  xid: bigint;
  /** An article's section (whose visibility is its too), else null. */
  section: number | null;
  /** Restricted by its own visibility. */
  restricted: boolean;
  terms: DocTerms;
}

/** BM25F parameters: term-frequency saturation `k1`, length normalisation `b`, and the field weights. */
export interface RankParams {
  k1: number;
  b: number;
  weights: readonly [title: number, headings: number, body: number];
}

/** A lexeme of a query and its weight (how often the question says it). */
export interface QueryTerm {
  lexeme: string;
  weight: number;
}

/** What one ranking asks: its terms, who reads (restricted items or not), and which items must or must not be among the hits. */
export interface RankRequest {
  terms: QueryTerm[];
  seesRestricted: boolean;
  /** Only these items (keys `type:id`); null for no such condition. */
  only: Set<string> | null;
  /** Never these items. */
  except: Set<string>;
  /** Excluded lexemes: an item holding any is left out. */
  without: string[];
  /** Rank at most this many (the rest are counted). */
  depth: number;
  /** Rank by at most this many terms (the rarest) and read at most `maxPostings` postings: the commonest terms are dropped first. */
  maxTerms: number;
  maxPostings: number;
}

/** A hit: the item, its BM25F score, and the share of the query's weight (by idf) its terms cover. */
export interface RankedHit {
  type: IndexedType;
  id: number;
  score: number;
  coverage: number;
}

/** A ranking: its first `depth` hits, how many items matched in all, and the terms that ranked them. */
export interface Ranking {
  hits: RankedHit[];
  matched: number;
  terms: { lexeme: string; weight: number; idf: number; df: number }[];
}

/** One term's part in a hit's score, per field (see explain). */
export interface TermPart {
  lexeme: string;
  idf: number;
  fields: [title: number, headings: number, body: number];
}

interface Postings {
  slots: Int32Array;
  tfs: Uint16Array;
  size: number;
  /** Items holding the lexeme (live), per audience, as of `epoch` (recounted after a removal). */
  dfPublic: number;
  dfAll: number;
  epoch: number;
}

const DEAD = 0;
const PUBLIC = 1;
const RESTRICTED = 2;

const keyOf = (type: IndexedType, id: number) => `${type}:${id}`;

/** A workspace's items of some types, indexed for BM25F (see the module's comment). */
export class TermIndex {
  private readonly postings = new Map<string, Postings>();
  private readonly slotOf = new Map<string, number>();
  private readonly restrictedSections = new Set<number>();
  private state = new Uint8Array(64);
  private ownRestricted = new Uint8Array(64);
  private lengths = new Uint32Array(64);
  private types = new Uint8Array(64);
  private ids = new Int32Array(64);
  private sections = new Int32Array(64);
  private termCounts = new Uint32Array(64);
  private xids: bigint[] = [];
  private slots = 0;
  private dead = 0;
  private postingCount = 0;
  private deadPostings = 0;
  /** Bumped by every change that can lower a lexeme's document frequency (see Postings.epoch). */
  private epoch = 0;
  private readonly stats = { public: { n: 0, length: 0 }, all: { n: 0, length: 0 } };
  // Reused by every ranking (rankings run one at a time: they never await).
  private scores = new Float64Array(64);
  private seen = new Uint32Array(64);
  private mark = 0;

  /** Items indexed (live). */
  get size(): number {
    return this.slots - this.dead;
  }

  /** Postings held, live and dead, and the bytes they and the items take (for /metrics and the docs' figures). */
  memory(): { postings: number; bytes: number } {
    let bytes = this.state.length * 26 + this.xids.length * 24;
    for (const [lexeme, p] of this.postings) bytes += p.slots.length * 6 + lexeme.length * 2 + 80;
    return { postings: this.postingCount, bytes: bytes + this.slotOf.size * 60 };
  }

  /** Adds an item, or replaces the version indexed (unless that one is newer). */
  put(item: IndexedItem): void {
    const key = keyOf(item.type, item.id);
    const old = this.slotOf.get(key);
    if (old !== undefined) {
      if (this.xids[old] > item.xid) return;
      this.kill(old);
      this.maybeCompact();
    }
    const slot = this.newSlot(item);
    this.slotOf.set(key, slot);
    const audience = this.state[slot];
    const { lexemes, tfs } = item.terms;
    for (let i = 0; i < lexemes.length; i++) {
      let p = this.postings.get(lexemes[i]);
      if (!p) {
        p = { slots: new Int32Array(4), tfs: new Uint16Array(4), size: 0, dfPublic: 0, dfAll: 0, epoch: this.epoch };
        this.postings.set(lexemes[i], p);
      }
      if (p.size === p.slots.length) grow(p);
      p.slots[p.size] = slot;
      p.tfs[p.size++] = tfs[i];
      if (p.epoch === this.epoch) {
        p.dfAll++;
        if (audience === PUBLIC) p.dfPublic++;
      }
    }
    this.postingCount += lexemes.length;
  }

  /** Whether an item the reader may see holds `lexeme`. */
  holds(lexeme: string, seesRestricted: boolean): boolean {
    const p = this.postings.get(lexeme);
    return p !== undefined && this.df(p, seesRestricted) > 0;
  }

  /** The version (writing transaction) of an item held, if it is held. */
  versionOf(type: IndexedType, id: number): bigint | undefined {
    const slot = this.slotOf.get(keyOf(type, id));
    return slot === undefined ? undefined : this.xids[slot];
  }

  /** Removes an item (deleted, archived, unpublished) unless the version indexed is newer than `xid`. */
  remove(type: IndexedType, id: number, xid: bigint): void {
    const key = keyOf(type, id);
    const slot = this.slotOf.get(key);
    if (slot === undefined || this.xids[slot] > xid) return;
    this.kill(slot);
    this.slotOf.delete(key);
    this.maybeCompact();
  }

  /** A section's visibility: its articles are restricted with it. */
  setSection(section: number, restricted: boolean): void {
    if (restricted === this.restrictedSections.has(section)) return;
    if (restricted) this.restrictedSections.add(section);
    else this.restrictedSections.delete(section);
    for (let slot = 0; slot < this.slots; slot++) {
      if (this.state[slot] === DEAD || this.sections[slot] !== section) continue;
      this.count(slot, -1);
      this.state[slot] = this.ownRestricted[slot] || restricted ? RESTRICTED : PUBLIC;
      this.count(slot, 1);
    }
    this.epoch++;
  }

  private newSlot(item: IndexedItem): number {
    if (this.slots === this.state.length) this.growSlots();
    const slot = this.slots++;
    const restricted = item.restricted || (item.section !== null && this.restrictedSections.has(item.section));
    this.state[slot] = restricted ? RESTRICTED : PUBLIC;
    this.ownRestricted[slot] = item.restricted ? 1 : 0;
    this.lengths[slot] = item.terms.length;
    this.types[slot] = TYPES.indexOf(item.type);
    this.ids[slot] = item.id;
    this.sections[slot] = item.section ?? -1;
    this.termCounts[slot] = item.terms.lexemes.length;
    this.xids[slot] = item.xid;
    this.count(slot, 1);
    return slot;
  }

  private kill(slot: number): void {
    if (this.state[slot] === DEAD) return;
    this.count(slot, -1);
    this.state[slot] = DEAD;
    this.dead++;
    this.deadPostings += this.termCounts[slot];
    this.epoch++;
  }

  private count(slot: number, sign: 1 | -1): void {
    const length = this.lengths[slot];
    this.stats.all.n += sign;
    this.stats.all.length += sign * length;
    if (this.state[slot] === PUBLIC) {
      this.stats.public.n += sign;
      this.stats.public.length += sign * length;
    }
  }

  private growSlots(): void {
    const size = this.state.length * 2;
    const widen = <T extends Uint8Array | Uint32Array | Int32Array>(a: T, make: (n: number) => T): T => {
      const b = make(size);
      b.set(a);
      return b;
    };
    this.state = widen(this.state, (n) => new Uint8Array(n));
    this.ownRestricted = widen(this.ownRestricted, (n) => new Uint8Array(n));
    this.lengths = widen(this.lengths, (n) => new Uint32Array(n));
    this.types = widen(this.types, (n) => new Uint8Array(n));
    this.ids = widen(this.ids, (n) => new Int32Array(n));
    this.sections = widen(this.sections, (n) => new Int32Array(n));
    this.termCounts = widen(this.termCounts, (n) => new Uint32Array(n));
    this.scores = new Float64Array(size);
    this.seen = new Uint32Array(size);
    this.mark = 0;
  }

  /** A lexeme's document frequency for an audience, recounted when a removal may have lowered it. */
  private df(p: Postings, seesRestricted: boolean): number {
    if (p.epoch !== this.epoch) {
      let all = 0;
      let open = 0;
      for (let i = 0; i < p.size; i++) {
        const s = this.state[p.slots[i]];
        if (s !== DEAD) all++;
        if (s === PUBLIC) open++;
      }
      p.dfAll = all;
      p.dfPublic = open;
      p.epoch = this.epoch;
    }
    return seesRestricted ? p.dfAll : p.dfPublic;
  }

  /** The idf of a lexeme held by `df` of `n` items (BM25's, never negative). */
  static idf(n: number, df: number): number {
    return Math.log(1 + (n - df + 0.5) / (df + 0.5));
  }

  /** Ranks the items the request may see by BM25F (see RankRequest); ties go by type, then the lower id. */
  rank(request: RankRequest, params: RankParams): Ranking {
    const audience = request.seesRestricted ? this.stats.all : this.stats.public;
    const n = audience.n;
    const avg = n ? audience.length / n : 1;
    const terms = this.weighTerms(request, n);
    if (++this.mark === 0xffffffff) {
      this.seen.fill(0);
      this.mark = 1;
    }
    const mark = this.mark;
    const touched: number[] = [];
    const { k1, b } = params;
    const [wTitle, wHead, wBody] = params.weights;
    const norm = (slot: number) => k1 * (1 - b + (b * this.lengths[slot]) / avg);
    for (const term of terms) {
      const p = term.postings;
      if (!p) continue;
      const w = term.weight * term.idf * (k1 + 1);
      for (let i = 0; i < p.size; i++) {
        const slot = p.slots[i];
        const s = this.state[slot];
        if (s === DEAD || (s === RESTRICTED && !request.seesRestricted)) continue;
        const packed = p.tfs[i];
        const tf = wTitle * (packed >>> 12) + wHead * ((packed >>> 8) & 15) + wBody * (packed & 255);
        const part = (w * tf) / (tf + norm(slot));
        if (this.seen[slot] !== mark) {
          this.seen[slot] = mark;
          this.scores[slot] = part;
          touched.push(slot);
        } else this.scores[slot] += part;
      }
    }
    // A query of conditions alone (exclusions, phrases of stop words) holds every item that meets them, unranked.
    if (!terms.length && (request.only || request.without.length || request.except.size))
      this.touchAll(touched, mark, request.seesRestricted);
    const kept = this.filter(touched, request);
    const top = topSlots(kept, this.scores, this.types, this.ids, request.depth);
    const total = terms.reduce((sum, t) => sum + t.weight * t.idf, 0);
    return {
      hits: top.map((slot) => ({
        type: TYPES[this.types[slot]],
        id: this.ids[slot],
        score: this.scores[slot],
        coverage: total ? this.covered(slot, terms) / total : 0,
      })),
      matched: kept.length,
      terms: terms.map((t) => ({ lexeme: t.lexeme, weight: t.weight, idf: t.idf, df: t.df })),
    };
  }

  /**
   * The request's terms with their idf for this audience; terms no item holds get the idf of a
   * lexeme held by none (they still weigh in `coverage`). Past `maxTerms`, or over `maxPostings`,
   * the commonest terms (lowest idf) are dropped until the rest fit; the rarest is always kept.
   */
  private weighTerms(request: RankRequest, n: number) {
    const terms = request.terms.map((t) => {
      const postings = this.postings.get(t.lexeme) ?? null;
      const df = postings ? this.df(postings, request.seesRestricted) : 0;
      return { ...t, postings: df ? postings : null, df, idf: TermIndex.idf(n, df) };
    });
    terms.sort((x, y) => y.idf * y.weight - x.idf * x.weight || (x.lexeme < y.lexeme ? -1 : 1));
    let budget = request.maxPostings;
    return terms.slice(0, request.maxTerms).filter((t, i) => {
      const size = t.postings?.size ?? 0;
      if (i > 0 && size > budget) return false;
      budget -= size;
      return true;
    });
  }

  /** Touches every live slot the reader may see, with a score of 0. */
  private touchAll(touched: number[], mark: number, seesRestricted: boolean): void {
    for (let slot = 0; slot < this.slots; slot++) {
      const s = this.state[slot];
      if (s === DEAD || (s === RESTRICTED && !seesRestricted)) continue;
      this.seen[slot] = mark;
      this.scores[slot] = 0;
      touched.push(slot);
    }
  }

  /** The touched slots that hold no excluded lexeme, and are among `only` when it is set. */
  private filter(touched: number[], request: RankRequest): number[] {
    let kept = touched;
    if (request.without.length) {
      const mark = ++this.mark;
      for (const lexeme of request.without) {
        const p = this.postings.get(lexeme);
        for (let i = 0; p && i < p.size; i++) this.seen[p.slots[i]] = mark;
      }
      kept = kept.filter((slot) => this.seen[slot] !== mark);
    }
    const key = (slot: number) => keyOf(TYPES[this.types[slot]], this.ids[slot]);
    if (request.only) kept = kept.filter((slot) => request.only!.has(key(slot)));
    if (request.except.size) kept = kept.filter((slot) => !request.except.has(key(slot)));
    return kept;
  }

  /** The idf weight of `terms` that `slot` holds. */
  private covered(slot: number, terms: { weight: number; idf: number; postings: Postings | null }[]): number {
    let sum = 0;
    for (const t of terms) if (t.postings && indexIn(t.postings, slot) >= 0) sum += t.weight * t.idf;
    return sum;
  }

  /** Each term's part in an item's score, per field (the weighted frequency split by the fields that hold it). */
  explain(type: IndexedType, id: number, ranking: Ranking, params: RankParams, seesRestricted: boolean): TermPart[] {
    const slot = this.slotOf.get(keyOf(type, id));
    if (slot === undefined) return [];
    const audience = seesRestricted ? this.stats.all : this.stats.public;
    const avg = audience.n ? audience.length / audience.n : 1;
    const { k1, b, weights } = params;
    const parts: TermPart[] = [];
    for (const t of ranking.terms) {
      const p = this.postings.get(t.lexeme);
      const at = p ? indexIn(p, slot) : -1;
      if (!p || at < 0) continue;
      const packed = p.tfs[at];
      const byField = [(packed >>> 12) * weights[0], ((packed >>> 8) & 15) * weights[1], (packed & 255) * weights[2]];
      const tf = byField[0] + byField[1] + byField[2];
      const score = (t.weight * t.idf * (k1 + 1) * tf) / (tf + k1 * (1 - b + (b * this.lengths[slot]) / avg));
      const share = (f: number) => round(tf ? (score * byField[f]) / tf : 0);
      parts.push({ lexeme: t.lexeme, idf: round(t.idf), fields: [share(0), share(1), share(2)] });
    }
    return parts;
  }

  /** Rewrites the postings without dead slots once they are a third of all (an item written again leaves one). */
  private maybeCompact(): void {
    if (this.deadPostings * 3 < this.postingCount && this.dead * 3 < this.slots) return;
    this.compact();
  }

  /** Renumbers the live slots from 0 and drops dead ones from every postings list. */
  compact(): void {
    const remap = new Int32Array(this.slots).fill(-1);
    let next = 0;
    for (let slot = 0; slot < this.slots; slot++) {
      if (this.state[slot] === DEAD) continue;
      remap[slot] = next;
      this.state[next] = this.state[slot];
      this.ownRestricted[next] = this.ownRestricted[slot];
      this.lengths[next] = this.lengths[slot];
      this.types[next] = this.types[slot];
      this.ids[next] = this.ids[slot];
      this.sections[next] = this.sections[slot];
      this.termCounts[next] = this.termCounts[slot];
      this.xids[next] = this.xids[slot];
      next++;
    }
    this.state.fill(DEAD, next);
    this.xids.length = next;
    let count = 0;
    for (const [lexeme, p] of this.postings) {
      let size = 0;
      for (let i = 0; i < p.size; i++) {
        const to = remap[p.slots[i]];
        if (to < 0) continue;
        p.slots[size] = to;
        p.tfs[size++] = p.tfs[i];
      }
      if (!size) this.postings.delete(lexeme);
      p.size = size;
      count += size;
    }
    for (const [key, slot] of this.slotOf) this.slotOf.set(key, remap[slot]);
    this.slots = next;
    this.dead = 0;
    this.postingCount = count;
    this.deadPostings = 0;
    this.epoch++;
  }
}

/** Doubles a postings list's room. */
function grow(p: Postings): void {
  const slots = new Int32Array(p.slots.length * 2);
  slots.set(p.slots);
  const tfs = new Uint16Array(p.tfs.length * 2);
  tfs.set(p.tfs);
  p.slots = slots;
  p.tfs = tfs;
}

/** Where `slot` is in a postings list (slots are appended in increasing order), or -1. */
function indexIn(p: Postings, slot: number): number {
  let lo = 0;
  let hi = p.size - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const at = p.slots[mid];
    if (at === slot) return mid;
    if (at < slot) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

const round = (x: number) => Math.round(x * 1e6) / 1e6;

/**
 * The best `depth` of `slots` by score (ties: by type, then the lower id), best first: a bounded
 * min-heap, so ranking a common word's 70,000 matches costs a pass, not a sort of all of them.
 */
function topSlots(slots: number[], scores: Float64Array, types: Uint8Array, ids: Int32Array, depth: number): number[] {
  const better = (a: number, b: number) =>
    scores[a] > scores[b] || (scores[a] === scores[b] && (types[a] < types[b] || (types[a] === types[b] && ids[a] < ids[b])));
  const heap: number[] = [];
  const down = (i: number) => {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let worst = i;
      if (l < heap.length && better(heap[worst], heap[l])) worst = l;
      if (r < heap.length && better(heap[worst], heap[r])) worst = r;
      if (worst === i) return;
      [heap[i], heap[worst]] = [heap[worst], heap[i]];
      i = worst;
    }
  };
  for (const slot of slots) {
    if (heap.length < depth) {
      heap.push(slot);
      for (let i = heap.length - 1; i > 0;) {
        const parent = (i - 1) >>> 1;
        if (!better(heap[parent], heap[i])) break;
        [heap[i], heap[parent]] = [heap[parent], heap[i]];
        i = parent;
      }
    } else if (depth > 0 && better(slot, heap[0])) {
      heap[0] = slot;
      down(0);
    }
  }
  return heap.sort((a, b) => (better(a, b) ? -1 : 1));
}
