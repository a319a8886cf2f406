import { describe, expect, it } from 'vitest';
import { MAX_PASSAGES, passagesOf, sections, windows } from '../../src/search/passages.js';

describe('passages (what the encoder reads of a document)', () => {
  it('cuts Markdown at its headings, not at # lines inside fenced code', () => {
    const md = 'Intro text.\n\n## Install\n\nRun it.\n\n```sh\n# not a heading\n```\n\n### Configure\n\nSet **x**.';
    expect(sections(md).map((s) => s.heading)).toEqual(['', 'Install', 'Configure']);
    expect(sections(md)[1].body).toContain('# not a heading');
  });

  it('cuts a long section into overlapping windows at whitespace, none longer than the limit, covering every word', () => {
    const words = Array.from({ length: 400 }, (_, i) => `w${i}`);
    const parts = windows(words.join(' '), 600, 150);
    expect(parts.length).toBeGreaterThan(3);
    for (const p of parts) expect(p.length).toBeLessThanOrEqual(600);
    // Consecutive windows share text (the overlap), and together they hold every word in order.
    for (let i = 1; i < parts.length; i++)
      expect(
        parts[i - 1]
          .split(' ')
          .slice(-5)
          .some((w) => parts[i].includes(w)),
      ).toBe(true);
    expect(new Set(parts.flatMap((p) => p.split(' ')))).toEqual(new Set(words));
    expect(windows('   ')).toEqual([]);
    expect(windows('short')).toEqual(['short']);
  });

  it('embeds each passage under the title and its heading, without Markdown marks; keeps the Markdown for the snippet', () => {
    const passages = passagesOf('Password reset', '## Steps\n\nRequest a **reset** [link](https://example.com/r) in `Settings`.');
    expect(passages).toEqual([
      {
        embed: 'Password reset: Steps. Request a reset link in Settings.',
        source: 'Request a **reset** [link](https://example.com/r) in `Settings`.',
      },
    ]);
    // A document without text is its title alone; a heading without text is a passage of its own.
    expect(passagesOf('Empty', '')).toEqual([{ embed: 'Empty', source: '' }]);
    expect(passagesOf('T', '## Only a heading').map((p) => p.embed)).toEqual(['T: Only a heading']);
  });

  it('stops at MAX_PASSAGES per document', () => {
    const md = Array.from({ length: MAX_PASSAGES + 30 }, (_, i) => `## Part ${i}\n\nText ${i}.`).join('\n\n');
    const passages = passagesOf('Long', md);
    expect(passages).toHaveLength(MAX_PASSAGES);
    expect(passages[0].embed).toBe('Long: Part 0. Text 0.');
  });
});
