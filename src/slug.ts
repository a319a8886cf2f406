import { invalidField } from './errors.js';

const SLUG_PATTERN = '^[a-z0-9]+(?:-[a-z0-9]+)*$';
const SLUG = new RegExp(SLUG_PATTERN);
const MAX = 80;

/** A URL slug from free text: ASCII lowercase words joined by "-" (diacritics dropped). */
export function slugify(text: string, fallback = 'untitled'): string {
  const slug = text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, MAX)
    .replace(/-+$/, '');
  return slug || fallback;
}

/** Checks a client-chosen slug, or throws a 400 naming `field`. */
export function checkSlug(value: string, field: string): string {
  if (!SLUG.test(value) || value.length > MAX)
    throw invalidField(field, `must be a slug: lowercase letters and digits in "-"-separated words, at most ${MAX} characters`);
  return value;
}

/**
 * What every slug `nextFreeSlug` may make from `base` starts with: a candidate cuts `base` to leave
 * room for its number, so at the longest slugs `base-2` does not start with `base` (room is left
 * here for numbers up to seven digits). Look the taken slugs up by this prefix.
 */
export function slugStem(base: string): string {
  return base.slice(0, MAX - 8);
}

/** The first of `base`, `base-2`, `base-3`, … not in `taken` (every slug taken that starts with slugStem(base), or more). */
export function nextFreeSlug(base: string, taken: Iterable<string>): string {
  const used = new Set(taken);
  if (!used.has(base)) return base;
  for (let n = 2; ; n++) {
    const candidate = `${base.slice(0, MAX - String(n).length - 1)}-${n}`;
    if (!used.has(candidate)) return candidate;
  }
}
