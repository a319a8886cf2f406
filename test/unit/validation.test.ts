import { describe, expect, it } from 'vitest';
import { compileBody, compileParams } from '../../rest/validate.js';
import { schemaOf } from '../../src/contract/jsonSchema.js';
import { RULES, SAY } from '../../src/contract/rules.js';
import { jsonBody } from '../../rest/routeDefinition.js';

// REST's JSON Schema errors are reported in the input contract's words, naming each field and
// where it was, so every door says the same thing about the same value.
const body = compileBody(
  jsonBody({
    variable: 'input',
    properties: {
      path: schemaOf(RULES.notePath),
      kind: schemaOf(RULES.noteKind),
      tags: schemaOf(RULES.noteTags),
      position: schemaOf(RULES.position),
      status: { type: 'string', enum: ['draft', 'published'] },
      at: schemaOf(RULES.dateTime),
    },
    required: ['path'],
  }).schema,
);

const issues = (value: unknown) => {
  const result = body(value);
  return result.ok ? [] : result.issues;
};

describe('body validation', () => {
  it('accepts a valid body', () => {
    expect(body({ path: 'a/b', kind: 'note', tags: ['x'], position: 0, status: 'draft', at: '2026-11-23T10:00:00Z' })).toMatchObject({
      ok: true,
    });
  });

  it("names a missing field, an unknown one and each bad one in the contract's words", () => {
    expect(issues({ colour: 'red' })).toEqual(
      expect.arrayContaining([
        { field: 'path', message: 'is required', in: 'body' },
        { field: 'colour', message: 'is not a known field', in: 'body' },
      ]),
    );
    // A note path's bound is 512 UTF-8 bytes: the refusal says bytes, as the rule counts them.
    expect(issues({ path: 'p'.repeat(513) })).toEqual([{ field: 'path', message: SAY.maxBytes(512, 513), in: 'body' }]);
    expect(issues({ path: 'é'.repeat(513) })).toEqual([{ field: 'path', message: SAY.maxBytes(512, 1026), in: 'body' }]);
    expect(issues({ path: '' })).toEqual([{ field: 'path', message: SAY.minLength(1), in: 'body' }]);
    expect(issues({ path: 'x', kind: '-x' })).toEqual([{ field: 'kind', message: RULES.noteKind.pattern!.message, in: 'body' }]);
    expect(issues({ path: 'x', tags: Array.from({ length: 21 }, () => 't') })).toEqual([
      { field: 'tags', message: SAY.maxItems(20), in: 'body' },
    ]);
    expect(issues({ path: 'x', tags: ['ok', ''] })).toEqual([{ field: 'tags[1]', message: SAY.minLength(1), in: 'body' }]);
    expect(issues({ path: 'x', position: -1 })).toEqual([{ field: 'position', message: SAY.intRange(0, 100_000), in: 'body' }]);
    expect(issues({ path: 'x', status: 'gone' })).toEqual([{ field: 'status', message: SAY.oneOf(['draft', 'published']), in: 'body' }]);
    expect(issues({ path: 'x', at: 'yesterday' })).toEqual([{ field: 'at', message: SAY.format['date-time'], in: 'body' }]);
  });
});

describe('parameter validation', () => {
  const query = compileParams({ limit: { schema: schemaOf(RULES.pageLimit), description: 'x' } }, 'query');
  it('coerces and defaults query parameters, and refuses unknown ones', () => {
    expect(query({ limit: '7' })).toEqual({ ok: true, value: { limit: 7 } });
    expect(query({})).toEqual({ ok: true, value: { limit: 50 } });
    expect(query({ limit: '0' })).toEqual({ ok: false, issues: [{ field: 'limit', message: SAY.intRange(1, 100), in: 'query' }] });
    expect(query({ limit: '1', colour: 'red' })).toEqual({
      ok: false,
      issues: [{ field: 'colour', message: 'is not a known field', in: 'query' }],
    });
  });
});
