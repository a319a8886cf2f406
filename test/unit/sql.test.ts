import { describe, expect, it } from 'vitest';
import { pgArray, toNumbered, toPositional } from '../../src/db/sql.js';

describe('placeholders', () => {
  it('numbers ? outside quoted literals', () => {
    expect(toNumbered("select ? , '?' , ?::int where a = '??' and b = ?")).toBe("select $1 , '?' , $2::int where a = '??' and b = $3");
  });

  it('turns :name placeholders into ? in order, repeats included, leaving casts and quoted text alone', () => {
    expect(toPositional("select :a::int, ':b', :a, x::text[] where y = :long_name")).toEqual({
      text: "select ?::int, ':b', ?, x::text[] where y = ?",
      names: ['a', 'a', 'long_name'],
    });
  });

  it('refuses a statement mixing ? and :name', () => {
    expect(() => toPositional('select :a, ?')).toThrow(/cannot also use \?/);
  });
});

describe('pgArray', () => {
  it('quotes and escapes every element', () => {
    expect(pgArray(['a', 'b"c', 'd\\e', 'x,y'])).toBe('{"a","b\\"c","d\\\\e","x,y"}');
    expect(pgArray([1, 2])).toBe('{"1","2"}');
    expect(pgArray([])).toBe('{}');
  });

  it('writes null and undefined as an unquoted NULL element, and the text NULL quoted', () => {
    expect(pgArray([1, null, undefined, 3])).toBe('{"1",NULL,NULL,"3"}');
    expect(pgArray(['NULL', null])).toBe('{"NULL",NULL}');
  });
});
