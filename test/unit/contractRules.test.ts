import { buildSchema } from 'graphql';
import { describe, expect, it } from 'vitest';
import {
  checkRule,
  codePointsOver,
  jsonSizeOver,
  jsonTextDepthOver,
  stringIssue,
  textIssue,
  wellFormed,
} from '../../src/contract/check.js';
import { applyInputContract } from '../../src/contract/graphql.js';
import { describeRule, RULES, SAY } from '../../src/contract/rules.js';
import type { FieldIssue } from '../../src/errors.js';
// Input rules are declared beside the resolvers' arguments: load one resolver's declarations (memoryNote(path:) is a notePath).
import 'reflect-metadata';
import '../../src/resolvers/MemoryResolver.js';

describe('the input contract', () => {
  it('counts code points like JSON Schema, without reading more than it needs', () => {
    expect(codePointsOver('😀'.repeat(512), 512)).toBe(false); // 1,024 UTF-16 units, 512 code points
    expect(codePointsOver('😀'.repeat(513), 512)).toBe(true);
    expect(codePointsOver('a'.repeat(10_000_000), 512)).toBe(true);
  });

  it('checks the length first, then bytes, blankness, values, the pattern and the format', () => {
    expect(stringIssue(RULES.notePath, 'é'.repeat(300))).toBe(SAY.maxBytes(512, 600));
    expect(stringIssue(RULES.query, '   ')).toBe(SAY.blank);
    expect(stringIssue(RULES.noteKind, 'a'.repeat(33))).toBe(SAY.maxLength(32));
    expect(stringIssue(RULES.noteKind, '.x')).toBe(RULES.noteKind.pattern!.message);
    expect(stringIssue(RULES.email, 'not-an-address')).toBe(SAY.format.email);
    expect(stringIssue(RULES.url, 'ftp://example.com/x')).toBe(SAY.format.uri);
    expect(stringIssue(RULES.dateTime, '2026-11-23T10:00:00+01:00')).toBeNull();
  });

  it('names list items and stops counting a JSON value once it is over', () => {
    const issues: FieldIssue[] = [];
    checkRule(RULES.noteTags, ['ok', 't'.repeat(51)], 'tags', issues);
    expect(issues).toEqual([{ field: 'tags[1]', message: SAY.maxLength(50) }]);
    expect(jsonSizeOver({ a: 'x'.repeat(100) }, 50)).toBe(true);
    expect(jsonSizeOver({ a: [1, 2, { b: 'c' }] }, 1000)).toBe(false);
  });

  it('refuses NUL in every string rule and inside JSON values, keys included; archives refuse unpaired surrogates too', () => {
    expect(stringIssue(RULES.title, 'T\u0000')).toBe(SAY.nul);
    expect(stringIssue(RULES.noteKindFilter, '\ud83d')).toBeNull(); // made U+FFFD at the edge, not refused
    const issues: FieldIssue[] = [];
    checkRule(RULES.spec, { info: { title: 'x\u0000' } }, 'spec', issues);
    checkRule(RULES.spec, { ['k\u0000']: 1 }, 'spec', issues);
    checkRule(RULES.spec, { ['k\ud800']: '\udc00' }, 'spec', issues);
    expect(issues).toEqual([
      { field: 'spec', message: SAY.nul },
      { field: 'spec', message: SAY.nul },
    ]);
    expect(textIssue('a\u0000b')).toBe(SAY.nul);
    expect(textIssue('a\ud800b')).toBe(SAY.unpaired);
    expect(textIssue('a\udc00')).toBe(SAY.unpaired);
    expect(textIssue('😀 and é')).toBeNull();
  });

  it('makes text well-formed as the database stores it (an unpaired surrogate is U+FFFD), copying only what changes', () => {
    expect(wellFormed('half \ud800 and \udfff')).toBe('half \ufffd and \ufffd');
    expect(wellFormed({ tags: ['ok', 'x\udc00'], n: 1, ['k\ud83d']: { deep: ['\ud800'] } })).toEqual({
      tags: ['ok', 'x\ufffd'],
      n: 1,
      ['k\ufffd']: { deep: ['\ufffd'] },
    });
    const clean = { body: '😀', list: ['é'] };
    expect(wellFormed(clean)).toBe(clean);
    const upload = new (class Upload {
      name = '\ud800';
    })();
    expect(wellFormed(upload)).toBe(upload);
    expect(wellFormed(null)).toBeNull();
  });

  it('states and refuses a byte bound in bytes, whatever length broke it', () => {
    expect(describeRule(RULES.guidance)).toBe('Limit: at most 4,096 bytes in UTF-8.');
    expect(describeRule(RULES.notePath)).toBe('Limit: not empty, at most 512 bytes in UTF-8.');
    expect(describeRule(RULES.title)).toBe('Limit: not empty, at most 200 characters.');
    expect(stringIssue(RULES.guidance, 'x'.repeat(4097))).toBe(SAY.maxBytes(4096, 4097));
    expect(stringIssue(RULES.guidance, '€'.repeat(1366))).toBe(SAY.maxBytes(4096, 4098));
  });

  it('measures JSON nesting on the text, before parsing, not counting brackets inside strings', () => {
    expect(jsonTextDepthOver('[[[]]]', 3)).toBe(false);
    expect(jsonTextDepthOver('[[[[]]]]', 3)).toBe(true);
    expect(jsonTextDepthOver('{"a":{"b":{"c":1}}}', 3)).toBe(false);
    expect(jsonTextDepthOver(`{"a":"${'[{'.repeat(100)}","b":[]}`, 3)).toBe(false);
    expect(jsonTextDepthOver('["\\\\",[["x\\"[[["]]]]', 3)).toBe(false); // escaped quotes and backslashes
    expect(jsonTextDepthOver('["\\\\",[[["x"]]]]', 3)).toBe(true);
    expect(jsonTextDepthOver(`{"a":"${'x'.repeat(10_000_000)}"}`, 1)).toBe(false);
    expect(jsonTextDepthOver('['.repeat(5000), 512)).toBe(true);
  });

  it('fails a schema where a string argument or input field has no rule', () => {
    expect(() => applyInputContract(buildSchema('type Query { note(colour: String): String }'))).toThrow(
      /Query.note\(colour:\) carries client-sized input but has no rule/,
    );
    expect(() => applyInputContract(buildSchema('type Query { memoryNote(path: Int): String }'))).toThrow(
      /rule notePath \(string\) does not fit/,
    );
  });
});
