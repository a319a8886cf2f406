import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { trigramHashes, trigrams } from '../../src/search/trigrams.js';
import { nearKeys } from '../../src/services/nearDuplicates.js';

/** pg_trgm's trigrams, written the plain way: lower-cased words of letters and digits, padded "  word ". */
function referenceTrigrams(text: string): string[] {
  const out = new Set<string>();
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    const chars = ['  ', ...word, ' '].join('');
    const points = [...chars];
    for (let i = 0; i + 2 < points.length; i++) out.add(points.slice(i, i + 3).join(''));
  }
  return [...out].sort();
}

const texts = fc.string({
  unit: fc.constantFrom('a', 'B', 'é', 'İ', 'ß', '日', '𝒜', '😀', '7', '٣', 'Ⅻ', ' ', '\n', '-', '.', '\uD800'),
  maxLength: 80,
});

describe('trigrams', () => {
  it('streams the trigrams of the plain definition: as many distinct hashes as distinct trigrams, whatever the alphabet', () => {
    fc.assert(
      fc.property(texts, (text) => {
        expect(trigrams(text).size).toBe(referenceTrigrams(text).length);
        const { hashes, count } = trigramHashes(text);
        expect(new Set(hashes.subarray(0, count))).toEqual(trigrams(text));
        expect(count).toBeGreaterThanOrEqual(trigrams(text).size);
      }),
    );
  });

  it('gives band keys that depend on the set of trigrams only, and none to a body too short to compare', () => {
    const body = 'replication slots keep WAL until every standby has read it; drop a slot nobody reads';
    expect(nearKeys('w', body)).toHaveLength(16);
    expect(nearKeys('w', `${body} ${body} ${body}`)).toEqual(nearKeys('w', body));
    expect(nearKeys('w', body.toUpperCase())).toEqual(nearKeys('w', body));
    expect(nearKeys('other', body)).not.toEqual(nearKeys('w', body));
    expect(nearKeys('w', 'too short')).toEqual([]);
  });

  it('gives the band keys notes already store: the same numbers for the same workspace and body, whatever the code computing them', () => {
    // Stored keys are compared with new ones: a change of these numbers would hide every existing near-duplicate.
    const body = 'replication slots keep WAL until every standby has read it; drop a slot nobody reads';
    expect(nearKeys('0f6b5b2e-6f1d-4c56-9d0a-2b1f3c4d5e6f', body)).toEqual([
      785104106, 124328741, -255168122, -1578554276, 1749107434, 516366536, 1004572252, 246562274, 521838956, 1724306231, 1502916708,
      -956458976, -603009209, 1049864568, 1142858427, 1939707020,
    ]);
    expect(nearKeys('w', 'Ünïcödé wörds, 日本語のテキスト, and 😀 emoji beside plain words of a note body that is long enough')).toEqual([
      -307547848, 211024991, 1170838780, -178522222, 1979367001, -190160244, 1699959080, 457000031, 1337047590, -410768643, -1888282787,
      601658573, 1701201408, 534715394, -1693902309, 621025607,
    ]);
    // A body longer than any before it (the hashes' buffer grows) gives the keys of its repeated part.
    const long = `${body} `.repeat(200);
    expect(nearKeys('w', long)).toEqual(nearKeys('w', body));
  });
});
