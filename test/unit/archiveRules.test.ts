import { describe, expect, it } from 'vitest';
import { lineShape, MAX_DEPTH, MAX_VALUES } from '../../src/archive/bounds.js';
import { RECORD_COLUMNS } from '../../src/archive/recordRules.js';
import { RECORD_TYPES } from '../../src/archive/recordTypes.js';

const shapeOf = (text: string) => lineShape(Buffer.from(text));

describe('archive record rules', () => {
  it('name every column of every record type, and no other', () => {
    for (const spec of RECORD_TYPES)
      expect(Object.keys(RECORD_COLUMNS[spec.type] ?? {}).sort(), spec.type).toEqual([...spec.columns].sort());
    expect(Object.keys(RECORD_COLUMNS).sort()).toEqual(RECORD_TYPES.map((t) => t.type).sort());
  });
});

describe('the line scan before parsing', () => {
  it('counts nesting and values outside strings only, escaped quotes included', () => {
    expect(shapeOf(`{"a":"${'['.repeat(50)}\\"${'{'.repeat(50)}","b":[1,2]}`).issue).toBeNull();
    expect(shapeOf(`${'['.repeat(MAX_DEPTH)}${']'.repeat(MAX_DEPTH)}`).issue).toBeNull();
    expect(shapeOf(`${'['.repeat(MAX_DEPTH + 1)}`).issue).toMatch(/nests deeper than/);
    expect(shapeOf(`[${'0,'.repeat(MAX_VALUES + 1)}0]`).issue).toMatch(/holds more than/);
    expect(shapeOf(`["${',,,'.repeat(MAX_VALUES)}"]`).issue).toBeNull();
  });

  it('finds the longest string literal, quotes included, past escaped quotes and backslashes', () => {
    const line = `{"type":"upload","data":{"id":"x","data":"ab\\\\\\"cd\\\\"}}`;
    const { longest } = shapeOf(line);
    expect(line.slice(longest.open, longest.close + 1)).toBe(`"ab\\\\\\"cd\\\\"`);
  });
});
