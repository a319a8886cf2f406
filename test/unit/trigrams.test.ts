import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { eachTrigram, trigrams } from '../../src/search/trigrams.js';
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
        let visits = 0;
        eachTrigram(text, () => visits++);
        expect(visits).toBeGreaterThanOrEqual(trigrams(text).size);
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
});
