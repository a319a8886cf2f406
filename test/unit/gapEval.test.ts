import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pairwise, partScores, readLabelled } from '../../scripts/eval/gaps.js';

describe('content-gap evaluation: labelled questions and pairwise scores', () => {
  it('reads topics, questions and the part each question is in', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'gaps-')), 'q.tsv');
    writeFileSync(file, '# comment\nsmtp\tHow do I relay mail?\n# part: first\na\tOne?\n\nb\tTwo?\n#part:  added \nc\tThree?\n');
    expect(readLabelled(file)).toEqual([
      { topic: 'smtp', question: 'How do I relay mail?', part: '' },
      { topic: 'a', question: 'One?', part: 'first' },
      { topic: 'b', question: 'Two?', part: 'first' },
      { topic: 'c', question: 'Three?', part: 'added' },
    ]);
  });

  it('scores pairs: precision of the pairs grouped together, recall of the pairs of one topic', () => {
    // Topics x x x y y; groups 1 1 2 2 2: together (0,1) (2,3) (2,4) (3,4), of which (0,1) and (3,4) share a topic;
    // same-topic pairs (0,1) (0,2) (1,2) (3,4), of which (0,1) and (3,4) are together.
    const s = pairwise(['x', 'x', 'x', 'y', 'y'], [1, 1, 2, 2, 2]);
    expect(s.precision).toBeCloseTo(2 / 4);
    expect(s.recall).toBeCloseTo(2 / 4);
    expect(s.f1).toBeCloseTo(0.5);
    expect(pairwise(['x', 'x', 'y'], [1, 1, 2])).toEqual({ precision: 1, recall: 1, f1: 1 });
  });

  it('scores each part among its own questions, from the same groups', () => {
    // Part a is grouped perfectly; part b's two topics share one group with each other and with part a's x.
    const parts = partScores(['a', 'a', 'a', 'b', 'b', 'b'], ['x', 'x', 'y', 'z', 'z', 'w'], [1, 1, 2, 1, 1, 1]);
    expect(parts.a).toEqual({ precision: 1, recall: 1, f1: 1 });
    expect(parts.b.recall).toBe(1);
    expect(parts.b.precision).toBeCloseTo(1 / 3);
  });
});
