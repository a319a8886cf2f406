/**
 * The input contract: every bound on what a client may send, declared once. REST's JSON Schemas
 * (and so the OpenAPI document and the MCP tool schemas), the GraphQL schema's argument checks and
 * its SDL descriptions are all generated from these rules, so the three doors refuse the same
 * input with the same 400.
 */

/** A string: its length in characters (Unicode code points, as JSON Schema counts) is checked first, then the rest. */
export interface StringRule {
  kind: 'string';
  maxLength: number;
  minLength?: number;
  /** At most this many bytes in UTF-8 (checked after the character bound). */
  maxBytes?: number;
  /** Must not be only white space. */
  nonBlank?: boolean;
  /** A linear pattern the whole value must match (run only after the length check), and what to say when it does not. */
  pattern?: { source: string; message: string };
  /** One of these values. */
  oneOf?: readonly string[];
  /** A shape checked in linear time after the length check. */
  format?: 'email' | 'uri' | 'date-time';
}

/** A list: at most `maxItems` items, each checked by `items`. */
export interface ListRule {
  kind: 'list';
  maxItems: number;
  items: StringRule;
}

/** An integer within a range. */
export interface IntRule {
  kind: 'int';
  minimum: number;
  maximum: number;
  default?: number;
}

/** Any JSON value (or its text) whose serialised size is bounded. */
export interface JsonRule {
  kind: 'json';
  maxBytes: number;
}

export type Rule = StringRule | ListRule | IntRule | JsonRule;

const str = (maxLength: number, more: Omit<StringRule, 'kind' | 'maxLength'> = {}): StringRule => ({ kind: 'string', maxLength, ...more });
const int = (minimum: number, maximum: number, fallback?: number): IntRule => ({
  kind: 'int',
  minimum,
  maximum,
  ...(fallback === undefined ? {} : { default: fallback }),
});
const list = (maxItems: number, items: StringRule): ListRule => ({ kind: 'list', maxItems, items });
const json = (maxBytes: number): JsonRule => ({ kind: 'json', maxBytes });

const SLUG_SOURCE = '^[a-z0-9]+(?:-[a-z0-9]+)*$';
const slugPattern = { source: SLUG_SOURCE, message: 'must be a slug: lowercase letters and digits in "-"-separated words' };

export const SPEC_MAX_BYTES = 5 * 1024 * 1024;

/** Images: bytes, pixels a side and pixels in all (decompression bombs). */
export const UPLOAD_LIMITS = { maxBytes: 10 * 1024 * 1024, maxSide: 16_384, maxPixels: 50_000_000 };

/**
 * Request sizes, refused before anything is parsed: JSON bodies (a spec attached as text gets
 * room for the largest spec), an MCP message (a 10 MiB image base64-encoded, plus the envelope),
 * and URLs.
 */
export const BODY_LIMITS = {
  json: 1024 * 1024,
  spec: SPEC_MAX_BYTES + 64 * 1024,
  mcp: Math.ceil((UPLOAD_LIMITS.maxBytes * 4) / 3) + 1024 * 1024,
  url: 8 * 1024,
};
/**
 * How deeply a JSON request may nest arrays and objects (REST bodies, GraphQL requests, MCP messages,
 * OAuth registrations), counted on its text before it is parsed, so nothing that recurses (the
 * serialiser, the idempotency hash, the SDKs) ever meets a deeper value. An attached spec may nest
 * 500 levels; the rest is room for the request around it.
 */
export const JSON_MAX_DEPTH = 512;
export const NOTE_PATH_BYTES = 512;
export const NOTE_BODY_BYTES = 16 * 1024;
/** A workspace's guidance for agents: 4 KiB of UTF-8 Markdown, handed to every agent in MCP's instructions. */
export const GUIDANCE_BYTES = 4 * 1024;

/** Every named rule; the numbers in this table are the only place the limits live. */
export const RULES = {
  workspace: str(64, { minLength: 1 }),
  id: str(64, { minLength: 1 }),
  slug: str(200, { minLength: 1 }),
  newSlug: str(80, { pattern: slugPattern }),
  sectionKey: str(80, { minLength: 1 }),
  articleRef: str(200, { pattern: slugPattern }),
  cursor: str(200, { minLength: 1 }),
  pageLimit: int(1, 100, 50),
  searchLimit: int(1, 50, 20),
  auditLimit: int(1, 1000, 100),
  deliveryLimit: int(1, 500, 50),
  analyticsDays: int(1, 90, 7),
  position: int(0, 100_000),
  entryId: int(1, 2_147_483_647),
  count: int(0, 2_147_483_647),
  version: int(1, 2_147_483_647),
  title: str(200, { minLength: 1 }),
  markdown: str(200_000),
  guidance: str(GUIDANCE_BYTES, { maxBytes: GUIDANCE_BYTES }),
  summary: str(500, { minLength: 1 }),
  label: str(200, { minLength: 1 }),
  name: str(200, { minLength: 1 }),
  reason: str(1000, { minLength: 1, nonBlank: true }),
  email: str(320, { minLength: 3, format: 'email' }),
  plan: str(32),
  role: str(32),
  permissions: list(32, str(64)),
  notePath: str(NOTE_PATH_BYTES, { minLength: 1, maxBytes: NOTE_PATH_BYTES }),
  notePrefix: str(NOTE_PATH_BYTES, { maxBytes: NOTE_PATH_BYTES }),
  noteBody: str(NOTE_BODY_BYTES, { maxBytes: NOTE_BODY_BYTES }),
  noteKind: str(32, {
    minLength: 1,
    pattern: {
      source: '^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$',
      message: 'must be a short token: letters, digits, ".", "_" or "-", at most 32 characters',
    },
  }),
  noteLinks: list(50, str(512, { minLength: 1, maxBytes: 512 })),
  noteTags: list(20, str(50, { minLength: 1 })),
  tag: str(50),
  noteKindFilter: str(32),
  changelogTags: list(20, str(50)),
  query: str(2000, { minLength: 1, nonBlank: true }),
  documentId: str(600, { minLength: 3 }),
  textOffset: int(0, 2_147_483_647, 0),
  question: str(10_000),
  reportSlug: str(200),
  ifMatch: str(200),
  ifNoneMatch: str(200),
  url: str(2048, { minLength: 1, format: 'uri' }),
  events: list(64, str(100, { minLength: 1 })),
  spec: json(SPEC_MAX_BYTES),
  dateTime: str(64, { format: 'date-time' }),
  apiTag: str(200, { minLength: 1 }),
} as const satisfies Record<string, Rule>;

export type RuleName = keyof typeof RULES;

/** Message fragments shared by every door (REST's JSON Schema errors are mapped onto the same words). */
export const SAY = {
  maxLength: (n: number) => `must be at most ${n} characters`,
  minLength: (n: number) => (n === 1 ? 'must not be empty' : `must be at least ${n} characters`),
  maxBytes: (n: number, got: number) => `must be at most ${n} bytes in UTF-8 (got ${got})`,
  maxItems: (n: number) => `must have at most ${n} items`,
  intRange: (min: number, max: number) => `must be an integer from ${min} to ${max}`,
  oneOf: (values: readonly string[]) => `must be one of ${values.join(', ')}`,
  blank: 'must not be blank',
  format: { email: 'must be an e-mail address', uri: 'must be an absolute http(s) URL', 'date-time': 'must be an RFC 3339 date-time' },
  jsonBytes: (n: number) => `must be at most ${n} bytes when serialised`,
  nul: 'must not contain NUL (U+0000)',
  unpaired: 'must be well-formed Unicode (no unpaired surrogates)',
  jsonDepth: (n: number) => `must not nest arrays and objects more than ${n} levels deep`,
};

/** Patterns the contract declares, to put the same words on REST's pattern errors. */
export const PATTERN_MESSAGES: ReadonlyMap<string, string> = new Map(
  Object.values(RULES as Record<string, Rule>)
    .map((r) => (r.kind === 'list' ? r.items : r))
    .filter((r): r is StringRule => r.kind === 'string' && r.pattern !== undefined)
    .map((r) => [r.pattern!.source, r.pattern!.message]),
);

/** Whether a string rule's byte bound is the binding one (N bytes are at most N characters): it is then stated, and refused, in bytes alone. */
export function byteBound(rule: StringRule): boolean {
  return rule.maxBytes !== undefined && rule.maxBytes <= rule.maxLength;
}

/** The rule in words, for descriptions in the SDL and the OpenAPI document. */
export function describeRule(rule: Rule): string {
  switch (rule.kind) {
    case 'string': {
      const n = (value: number) => value.toLocaleString('en-US');
      const parts = [byteBound(rule) ? `at most ${n(rule.maxBytes!)} bytes in UTF-8` : `at most ${n(rule.maxLength)} characters`];
      if (rule.maxBytes !== undefined && !byteBound(rule)) parts.push(`${n(rule.maxBytes)} bytes in UTF-8`);
      if (rule.minLength) parts.unshift(rule.minLength === 1 ? 'not empty' : `at least ${rule.minLength} characters`);
      return `Limit: ${parts.join(', ')}.`;
    }
    case 'list':
      return `Limit: at most ${rule.maxItems} items, each ${describeRule(rule.items)
        .replace(/^Limit: /, '')
        .replace(/\.$/, '')}.`;
    case 'int':
      return (
        `Limit: an integer from ${rule.minimum} to ` +
        `${rule.maximum.toLocaleString('en-US')}${rule.default === undefined ? '' : ` (default ${rule.default})`}.`
      );
    case 'json':
      return `Limit: at most ${rule.maxBytes.toLocaleString('en-US')} bytes.`;
  }
}
