import type { FieldIssue } from '../errors.js';
import { byteBound, SAY, type IntRule, type JsonRule, type ListRule, type Rule, type StringRule } from './rules.js';

const compiled = new Map<string, RegExp>();
// An RFC 3339 date-time with an offset; no two quantifiers compete for the same characters.
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;
const regex = (source: string) => compiled.get(source) ?? compiled.set(source, new RegExp(source)).get(source)!;

/**
 * Unicode code points in `value`, counted only as far as needed to compare with `max`: a string
 * of more than 2 × max UTF-16 units has more than max code points whatever it holds.
 */
export function codePointsOver(value: string, max: number): boolean {
  if (value.length <= max) return false;
  if (value.length > 2 * max) return true;
  let count = 0;
  for (let i = 0; i < value.length; i++) {
    const unit = value.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < value.length) {
      const next = value.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
    }
    if (++count > max) return true;
  }
  return false;
}

function codePointsUnder(value: string, min: number): boolean {
  if (value.length >= 2 * min) return false;
  return Array.from(value).length < min;
}

/** Checks `value` against `rule` in time linear in its size, lengths first; appends what is wrong to `issues`. */
export function checkRule(rule: Rule, value: unknown, field: string, issues: FieldIssue[]): void {
  if (value === null || value === undefined) return;
  switch (rule.kind) {
    case 'string':
      if (typeof value === 'string') checkString(rule, value, field, issues);
      return;
    case 'list':
      if (Array.isArray(value)) checkList(rule, value, field, issues);
      return;
    case 'int':
      checkInt(rule, value, field, issues);
      return;
    case 'json':
      checkJson(rule, value, field, issues);
      return;
  }
}

function checkString(rule: StringRule, value: string, field: string, issues: FieldIssue[]): void {
  const issue = stringIssue(rule, value);
  if (issue) issues.push({ field, message: issue });
}

/**
 * What is wrong with a string, or null; the bounds come first, so no pattern ever sees an over-long
 * value. A rule whose byte bound is the tighter one says bytes, whatever the length that broke it.
 */
export function stringIssue(rule: StringRule, value: string): string | null {
  if (codePointsOver(value, rule.maxLength))
    return byteBound(rule) ? SAY.maxBytes(rule.maxBytes!, Buffer.byteLength(value, 'utf8')) : SAY.maxLength(rule.maxLength);
  if (rule.minLength && codePointsUnder(value, rule.minLength)) return SAY.minLength(rule.minLength);
  if (rule.maxBytes !== undefined && value.length * 3 > rule.maxBytes) {
    const bytes = Buffer.byteLength(value, 'utf8');
    if (bytes > rule.maxBytes) return SAY.maxBytes(rule.maxBytes, bytes);
  }
  if (value.includes('\u0000')) return SAY.nul;
  if (rule.nonBlank && value.trim() === '') return SAY.blank;
  if (rule.oneOf && !rule.oneOf.includes(value)) return SAY.oneOf(rule.oneOf);
  if (rule.pattern && !regex(rule.pattern.source).test(value)) return rule.pattern.message;
  if (rule.format && !FORMATS[rule.format](value)) return SAY.format[rule.format];
  return null;
}

type WellFormable = string & { isWellFormed(): boolean; toWellFormed(): string };

/** NUL, which no text or JSON column of PostgreSQL holds: every door refuses it with a 400 naming the field. */
export function nulIssue(value: string): string | null {
  return value.includes('\u0000') ? SAY.nul : null;
}

/**
 * What keeps text out of PostgreSQL as it was sent: NUL, and unpaired surrogates, which are not
 * Unicode (the driver's UTF-8 writes U+FFFD for them). Archives refuse both, so that an import
 * stores exactly what its records say; the API's doors refuse NUL and make the rest wellFormed.
 */
export function textIssue(value: string): string | null {
  return nulIssue(value) ?? ((value as WellFormable).isWellFormed() ? null : SAY.unpaired);
}

/** The first string (a value or an object's key) inside a JSON value that `check` refuses, or null. */
export function issueInside(value: unknown, check: (text: string) => string | null): string | null {
  const stack: unknown[] = [value];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v === 'string') {
      const issue = check(v);
      if (issue) return issue;
    } else if (v && typeof v === 'object') for (const [k, inner] of Object.entries(v)) stack.push(k, inner);
  }
  return null;
}

/**
 * A client's value with every unpaired surrogate in its strings (object keys included) replaced by
 * U+FFFD, which is what the database would store: applied at the edge, before anything reads it, so
 * the answer, the stored row and the event's JSON all hold the same text (JSON's `"\ud800"` is a
 * 500 in a jsonb column, and silently U+FFFD in a text one). Only what changes is copied; other
 * objects (an upload) are kept as they are.
 */
export function wellFormed<T>(value: T): T {
  return illFormed(value) ? (repaired(value) as T) : value;
}

/** A plain JSON object (not an upload or another class's instance). */
function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
}

/** Whether any string in the value (keys included) holds an unpaired surrogate: a walk that allocates nothing, as most values hold none. */
function illFormed(value: unknown): boolean {
  if (typeof value === 'string') return !(value as WellFormable).isWellFormed();
  if (Array.isArray(value)) return value.some(illFormed);
  if (!isPlainObject(value)) return false;
  for (const key in value) if (illFormed(key) || illFormed(value[key])) return true;
  return false;
}

function repaired(value: unknown): unknown {
  if (typeof value === 'string') return (value as WellFormable).toWellFormed();
  if (Array.isArray(value)) return value.map(repaired);
  if (!isPlainObject(value)) return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [repaired(k), repaired(v)]));
}

function checkList(rule: ListRule, value: unknown[], field: string, issues: FieldIssue[]): void {
  if (value.length > rule.maxItems) {
    issues.push({ field, message: SAY.maxItems(rule.maxItems) });
    return;
  }
  value.forEach((item, i) => checkRule(rule.items, item, `${field}[${i}]`, issues));
}

function checkInt(rule: IntRule, value: unknown, field: string, issues: FieldIssue[]): void {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < rule.minimum || value > rule.maximum) {
    issues.push({ field, message: SAY.intRange(rule.minimum, rule.maximum) });
  }
}

function checkJson(rule: JsonRule, value: unknown, field: string, issues: FieldIssue[]): void {
  if (jsonSizeOver(value, rule.maxBytes)) issues.push({ field, message: SAY.jsonBytes(rule.maxBytes) });
  else {
    const nul = issueInside(value, nulIssue);
    if (nul) issues.push({ field, message: nul });
  }
}

/**
 * Whether JSON text nests arrays and objects more than `max` levels deep, read in one pass before
 * it is parsed: brackets inside strings do not count, and a string is skipped with a native search
 * for its closing quote (a 10 MiB image in base64 is one string).
 */
export function jsonTextDepthOver(text: string, max: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) i = closingQuote(text, i);
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

/** Where the string opened at `open` ends (its closing quote, one not escaped), or the text's end. */
function closingQuote(text: string, open: number): number {
  let at = open;
  for (;;) {
    at = text.indexOf('"', at + 1);
    if (at < 0) return text.length;
    let slashes = 0;
    while (text.charCodeAt(at - 1 - slashes) === 0x5c) slashes++;
    if (slashes % 2 === 0) return at;
  }
}

/** Whether a JSON value serialises to more than `max` bytes; stops counting as soon as it does. */
export function jsonSizeOver(value: unknown, max: number): boolean {
  let size = 0;
  const stack: unknown[] = [value];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v === 'string') size += v.length * 3 > max ? Buffer.byteLength(v, 'utf8') + 2 : v.length + 2;
    else if (Array.isArray(v)) {
      size += 2 + v.length;
      for (const item of v) stack.push(item);
    } else if (v && typeof v === 'object') {
      const entries = Object.entries(v);
      size += 2 + entries.length;
      for (const [k, item] of entries) {
        size += k.length + 3;
        stack.push(item);
      }
    } else size += 5;
    if (size > max) return true;
  }
  return false;
}

/** Linear checks of the string formats the contract uses (each runs on a length-checked value; REST's JSON Schemas use the same). */
export const FORMATS: Record<NonNullable<StringRule['format']>, (value: string) => boolean> = {
  email: (value) => {
    const at = value.indexOf('@');
    if (at < 1 || at !== value.lastIndexOf('@') || /\s/.test(value)) return false;
    const domain = value.slice(at + 1);
    const dot = domain.lastIndexOf('.');
    return dot > 0 && dot < domain.length - 2;
  },
  uri: (value) => {
    try {
      const url = new URL(value);
      return url.protocol === 'http:' || url.protocol === 'https:';
    } catch {
      return false;
    }
  },
  'date-time': (value) => value.length <= 64 && RFC3339.test(value) && !Number.isNaN(Date.parse(value)),
};
