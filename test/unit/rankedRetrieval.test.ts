import { describe, expect, it } from 'vitest';
import { readable } from '../../src/search/embedder.js';
import { fuse, withFeedback } from '../../src/search/fusion.js';
import { compoundWords, parseQuery, splitCompound } from '../../src/search/queryText.js';
import { TermIndex, type IndexedItem, type RankRequest } from '../../src/search/termIndex.js';
import { anyLexemeQuery, FIELD_OF_WEIGHT, readTsvector } from '../../src/search/tsvectorText.js';

const PARAMS = { k1: 1.2, b: 0.75, weights: [2, 1.5, 1] as [number, number, number] };
const request = (terms: string[], more: Partial<RankRequest> = {}): RankRequest => ({
  terms: terms.map((lexeme) => ({ lexeme, weight: 1 })),
  seesRestricted: true,
  only: null,
  except: new Set(),
  without: [],
  depth: 100,
  maxTerms: 64,
  maxPostings: 1_000_000,
  ...more,
});
const item = (id: number, printed: string, more: Partial<IndexedItem> = {}): IndexedItem => ({
  type: 'article',
  id,
  xid: 1n,
  section: null,
  restricted: false,
  terms: readTsvector(printed, FIELD_OF_WEIGHT.article),
  ...more,
});
const ids = (index: TermIndex, terms: string[], more: Partial<RankRequest> = {}) =>
  index.rank(request(terms, more), PARAMS).hits.map((h) => h.id);

describe('web-search syntax as ranked retrieval reads it', () => {
  it('keeps words, requires phrases (and their `or` alternatives), excludes `-` words and phrases', () => {
    expect(parseQuery('how do I rotate keys')).toEqual({ words: 'how do I rotate keys', required: [], excluded: [] });
    expect(parseQuery('"domain event" log')).toEqual({ words: 'domain event log', required: [['domain event']], excluded: [] });
    expect(parseQuery('"domain event" or reversed -hyphens -"event log"')).toEqual({
      words: 'domain event reversed',
      required: [['domain event', 'reversed']],
      excluded: ['hyphens', 'event log'],
    });
    expect(parseQuery('a or b').required).toEqual([]);
    expect(parseQuery('"a b" "c d"').required).toEqual([['a b'], ['c d']]);
  });

  it('reads operator storms, stray quotes and dashes as no words, never as an error', () => {
    for (const q of ['-'.repeat(50), '- '.repeat(200), '!-'.repeat(250), '"', '""""', 'or', '- -'])
      expect(() => parseQuery(q)).not.toThrow();
    expect(parseQuery('-'.repeat(50))).toEqual({ words: '', required: [], excluded: ['-'.repeat(49)] });
    expect(parseQuery('- - -').words).toBe('- - -');
    expect(parseQuery('"unclosed phrase').required).toEqual([['unclosed phrase']]);
  });

  it('splits a word the workspace lacks into two it holds', () => {
    expect(compoundWords('Rollback the SIGNUP flow, re-run it')).toEqual(['rollback', 'signup']);
    const held = new Set(['roll', 'back', 'sign']);
    expect(splitCompound('rollback', (w) => held.has(w))).toEqual(['roll', 'back']);
    expect(splitCompound('signup', (w) => held.has(w))).toBeNull();
  });
});

describe('printed tsvectors', () => {
  it('counts positions per field and the length, undoing quotes and escapes', () => {
    const terms = readTsvector(`'deploy':1A,5B,9 'it''s':3 'back\\\\slash':4C 'bare'`, FIELD_OF_WEIGHT.article);
    expect(terms.lexemes).toEqual(['deploy', "it's", 'back\\slash', 'bare']);
    const unpack = (p: number) => [p >>> 12, (p >>> 8) & 15, p & 255];
    expect(terms.tfs.map(unpack)).toEqual([
      [1, 1, 1],
      [0, 0, 1],
      [0, 0, 1],
      [0, 0, 1],
    ]);
    // An article's headings (B) repeat body words: not counted in its length.
    expect(terms.length).toBe(5);
    expect(readTsvector(`'deploy':1A,5B,9`, FIELD_OF_WEIGHT.note).length).toBe(3);
    expect(anyLexemeQuery(["it's", 'a\\b'])).toBe(`'it''s' | 'a\\\\b'`);
    expect(anyLexemeQuery([])).toBeNull();
  });
});

describe('the term index', () => {
  it('ranks by BM25F: rarer words, titles and shorter items first; ties by type and id', () => {
    const index = new TermIndex();
    index.put(item(1, `'deploy':1A 'guid':2A`));
    index.put(item(2, `'deploy':5 'guid':6 'long':7,8,9,10,11,12`));
    index.put(item(3, `'rollback':3`));
    index.put(item(4, `'deploy':3`));
    expect(ids(index, ['deploy'])).toEqual([1, 4, 2]);
    expect(ids(index, ['deploy', 'rollback'])[0]).toBe(3);
    index.put(item(5, `'deploy':3`));
    expect(ids(index, ['deploy']).slice(1, 3)).toEqual([4, 5]);
  });

  it('replaces an item by a newer version only, removes it, and compacts the dead slots away', () => {
    const index = new TermIndex();
    index.put(item(1, `'alpha':1`, { xid: 5n }));
    index.put(item(1, `'beta':1`, { xid: 4n }));
    expect(ids(index, ['alpha'])).toEqual([1]);
    index.put(item(1, `'beta':1`, { xid: 6n }));
    expect(ids(index, ['alpha'])).toEqual([]);
    expect(ids(index, ['beta'])).toEqual([1]);
    index.remove('article', 1, 5n);
    expect(ids(index, ['beta'])).toEqual([1]);
    index.remove('article', 1, 7n);
    expect(ids(index, ['beta'])).toEqual([]);
    for (let i = 0; i < 50; i++) index.put(item(2, `'gamma':1`, { xid: BigInt(10 + i) }));
    expect(index.size).toBe(1);
    expect(index.memory().postings).toBeLessThan(10);
    expect(ids(index, ['gamma'])).toEqual([2]);
  });

  it("scores a reader who may not see restricted items from the others alone, and follows a section's visibility", () => {
    const index = new TermIndex();
    index.put(item(1, `'canari':1`));
    index.put(item(2, `'canari':1 'rollout':2`, { restricted: true }));
    index.put(item(3, `'rollout':1`, { section: 9 }));
    const publicOnly = new TermIndex();
    publicOnly.put(item(1, `'canari':1`));
    publicOnly.put(item(3, `'rollout':1`, { section: 9 }));
    const viewer = index.rank(request(['canari', 'rollout'], { seesRestricted: false }), PARAMS);
    expect(viewer.hits).toEqual(publicOnly.rank(request(['canari', 'rollout']), PARAMS).hits);
    index.setSection(9, true);
    expect(ids(index, ['rollout'], { seesRestricted: false })).toEqual([]);
    expect(ids(index, ['rollout'])).toEqual([3, 2]);
    index.setSection(9, false);
    expect(ids(index, ['rollout'], { seesRestricted: false })).toEqual([3]);
  });

  it('explains a score as the sum of its parts, keeps conditions, and drops the commonest terms past the budget', () => {
    const index = new TermIndex();
    for (let i = 1; i <= 20; i++) index.put(item(i, `'common':1${i === 7 ? " 'rare':2A" : ''}`));
    const ranking = index.rank(request(['rare', 'common']), PARAMS);
    expect(ranking.hits[0]).toMatchObject({ id: 7, coverage: 1 });
    const parts = index.explain('article', 7, ranking, PARAMS, true);
    const sum = parts.reduce((s, p) => s + p.fields[0] + p.fields[1] + p.fields[2], 0);
    expect(sum).toBeCloseTo(ranking.hits[0].score, 5);
    expect(ranking.hits[1].coverage).toBeLessThan(0.5);
    expect(ids(index, ['common'], { only: new Set(['article:3', 'article:4']) })).toEqual([3, 4]);
    expect(ids(index, ['common'], { without: ['rare'] })).toHaveLength(19);
    // One posting of budget: the rarest term is kept, the common one dropped.
    expect(ids(index, ['rare', 'common'], { maxPostings: 1 })).toEqual([7]);
    // Exclusions alone: every item without them, unranked.
    expect(ids(index, [], { without: ['rare'] })).toHaveLength(19);
  });
});

describe('hybrid fusion and the encoder input', () => {
  it('scales each ranking to 0–1 and weighs them 0.7 : 0.3', () => {
    const fused = fuse(
      [
        { type: 'article', id: 1, score: 10 },
        { type: 'article', id: 2, score: 5 },
        { type: 'article', id: 3, score: 0 },
      ],
      [
        { itemType: 'article', itemId: 3, passage: 0, similarity: 0.9, score: 0.9 },
        { itemType: 'article', itemId: 4, passage: 0, similarity: 0.5, score: 0.5 },
      ],
    );
    expect(fused.map((c) => [c.itemId, Math.round(c.score * 100) / 100])).toEqual([
      [1, 0.7],
      [2, 0.35],
      [3, 0.3],
      [4, 0],
    ]);
    // The question as a unit vector, plus 0.8 × the feedback's mean, as a unit vector.
    const round = (v: number[]) => v.map((x) => Math.round(x * 1000) / 1000);
    expect(round(withFeedback([2, 0], [Float32Array.from([0, 1]), Float32Array.from([0, 1])]))).toEqual([0.781, 0.625]);
    expect(withFeedback([3, 4], [])).toEqual([3, 4]);
  });

  it('reads text in capitals in lower case, and leaves other text as written', () => {
    expect(readable('MEASUREMENT OF DIELECTRIC CONSTANT')).toBe('measurement of dielectric constant');
    expect(readable('Use the TLS certificate of NASA')).toBe('Use the TLS certificate of NASA');
    expect(readable('12345')).toBe('12345');
  });
});
