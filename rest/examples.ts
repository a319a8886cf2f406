import type { JsonSchema } from './jsonSchema.js';

/**
 * Example values for the OpenAPI document, derived from a schema: a route's own example where it
 * gives one, else a realistic value for the field's name (a note path looks like a note path; a
 * list named by a row is that list), else one that satisfies the schema's type, bounds and enum.
 * The tests check every example against its schema, so an example can never drift from what the
 * API accepts and answers, and run them in order on a fresh workspace (test/openapiStory.test.ts),
 * comparing each documented answer with the one the service gave.
 */
export function exampleOf(schema: JsonSchema | undefined, name = '', values: Record<string, unknown> = {}): unknown {
  if (!schema) return null;
  const named = { ...NAMED, ...values };
  if ('example' in schema) return schema.example;
  if (Array.isArray(schema.examples) && schema.examples.length) return schema.examples[0];
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum.find((v) => v !== null) ?? schema.enum[0];
  if ('default' in schema && schema.default !== undefined) return schema.default;
  for (const key of ['oneOf', 'anyOf', 'allOf'] as const) {
    const options = schema[key] as JsonSchema[] | undefined;
    if (options?.length && !schema.type) {
      const merged = key === 'allOf' ? (Object.assign({}, ...options) as JsonSchema) : options.find((o) => o.type !== 'null');
      return exampleOf(merged, name, values);
    }
  }
  const types = Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string | undefined];
  if (named[name] === null && types.includes('null')) return null;
  const type = types.find((t) => t && t !== 'null') ?? (schema.properties ? 'object' : undefined);
  switch (type) {
    case 'object':
      return objectExample(schema, values);
    case 'array': {
      if (Array.isArray(named[name])) return named[name];
      const count = Math.max(1, Number(schema.minItems ?? 1));
      return Array.from({ length: count }, (_, i) => exampleOf(schema.items as JsonSchema, singular(name, i), values));
    }
    case 'string':
      return stringExample(schema, name, named);
    case 'integer':
    case 'number':
      return numberExample(schema, name, type === 'integer', named);
    case 'boolean':
      return typeof named[name] === 'boolean' ? named[name] : true;
    default:
      return name in named ? named[name] : {};
  }
}

function objectExample(schema: JsonSchema, values: Record<string, unknown>): Record<string, unknown> {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const out: Record<string, unknown> = {};
  for (const [key, property] of Object.entries(properties)) {
    // A field a row's values set to `undefined` is left out (the answer leaves it out too).
    if (key in values && values[key] === undefined) continue;
    out[key] = exampleOf(property, key, values);
  }
  return out;
}

/** `tags` → `tag` (an item of a list is named like one of its kind), numbered past the first. */
function singular(name: string, i: number): string {
  const one = name.endsWith('ies') ? `${name.slice(0, -3)}y` : name.replace(/s$/, '');
  return i === 0 ? one : `${one}#${i}`;
}

function stringExample(schema: JsonSchema, name: string, named: Record<string, unknown>): string {
  const format = schema.format as string | undefined;
  const base = name.replace(/#\d+$/, '');
  let value: string;
  if (format === 'date-time') value = '2026-11-23T09:30:00.000Z';
  else if (format === 'date') value = '2026-11-23';
  else if (format === 'uuid') value = '7d0f4a52-3c1e-4b9a-9f3e-2a6c8e1d5b70';
  else if (format === 'uri' || format === 'url') value = 'https://docs.example.com/openapi.json';
  else if (format === 'binary') value = '';
  else if (typeof named[base] === 'string') value = named[base];
  else if (/Id$/.test(base)) value = '3f1c9a7e-8b2d-4e6f-a1c3-5d7e9f0b2a4c';
  else value = base ? `example ${base}` : 'example';
  const min = Number(schema.minLength ?? 0);
  const max = schema.maxLength === undefined ? Infinity : Number(schema.maxLength);
  if ([...value].length > max) value = [...value].slice(0, max).join('');
  while ([...value].length < min) value += 'x';
  if (schema.pattern && !new RegExp(schema.pattern as string, 'u').test(value)) {
    const fallback = PATTERN_FALLBACKS.find((v) => new RegExp(schema.pattern as string, 'u').test(v) && v.length <= max && v.length >= min);
    if (fallback !== undefined) value = fallback;
  }
  return value;
}

function numberExample(schema: JsonSchema, name: string, integer: boolean, named: Record<string, unknown>): number {
  const min = schema.minimum === undefined ? -Infinity : Number(schema.minimum);
  const max = schema.maximum === undefined ? Infinity : Number(schema.maximum);
  const wanted = typeof named[name] === 'number' ? named[name] : integer ? 1 : 0.5;
  const value = Math.min(max, Math.max(min, wanted));
  return integer ? Math.round(value) : value;
}

/**
 * The story the examples tell, run top to bottom on a fresh workspace by
 * test/openapiStory.test.ts: guidance, a section `guides`, the article "Getting started" (created
 * as version 1, edited to 2 with `If-Match: "v1"`, version 1 restored as 3 with `If-Match: "v2"`),
 * an edit proposal, an image, a changelog entry, the memory note `runbooks/deploy`, a content gap
 * about rolling back, and the Pets spec attached, placed, synced and detached.
 */
export const STORY = {
  articleMarkdown: '# Getting started\n\nCreate an agent key, then search the workspace for what you need.',
  editedMarkdown:
    '# Getting started\n\nCreate an agent key with `wks init`, then search the workspace:\n`GET /api/v1/workspaces/-/search?q=agent+key`.',
  proposedMarkdown: '# Getting started\n\nCreate an agent key with `wks init`, then search.',
  noteBody: '# Deploy\n\n1. Merge to `main`.\n2. Watch the pipeline; roll back with `deploy --previous` if checks fail.',
  question: 'How do I roll back a failed deploy?',
  /** A spec with one operation, tagged `pets`: its page is `get-pets`, in the section collecting the tag. */
  petsSpec: {
    openapi: '3.1.0',
    info: { title: 'Pets', version: '1.4.0' },
    paths: { '/pets': { get: { summary: 'List pets', tags: ['pets'], responses: { '200': { description: 'The pets' } } } } },
  },
};

/** Realistic values by field name: what an agent would see in this workspace. */
const NAMED: Record<string, unknown> = {
  workspace: '-',
  workspaceId: '7d0f4a52-3c1e-4b9a-9f3e-2a6c8e1d5b70',
  id: 42,
  path: 'runbooks/deploy',
  prefix: 'runbooks',
  link: 'runbooks/rollback',
  kind: 'runbook',
  tag: 'ops',
  body: STORY.noteBody,
  markdown: STORY.articleMarkdown,
  title: 'Getting started',
  slug: 'getting-started',
  article: 'getting-started',
  section: 'guides',
  key: 'guides',
  label: 'Guides',
  summary: 'Point new users at wks init.',
  reason: 'Duplicates the quick-start article.',
  author: 'release-bot',
  q: 'create an agent key',
  query: 'create an agent key',
  question: STORY.question,
  sample: STORY.question,
  snippet: 'Getting started\n\n<mark>Create</mark> an <mark>agent</mark> <mark>key</mark>, then search the workspace for what you need',
  url: '/api/v1/workspaces/7d0f4a52-3c1e-4b9a-9f3e-2a6c8e1d5b70/articles/getting-started',
  cursor: 'WzIwXQ',
  status: 'published',
  type: 'article',
  message: 'Thanks, the gap was reported.',
  etag: '"v1"',
  ifMatch: '"v1"',
  'if-match': '"v1"',
  'if-none-match': '"v1"',
  ifNoneMatch: '"v1"',
  visibility: 'public',
  action: 'created',
  added: 'GET /pets',
  removed: 'DELETE /pets/{petId}',
  changed: 'markdown',
  diff:
    '===================================================================\n--- getting-started@v1\n+++ getting-started@v2\n@@ -1,3 +1,4 @@\n' +
    ' # Getting started\n \n-Create an agent key, then search the workspace for what you need.\n\\ No newline at end of file\n' +
    '+Create an agent key with `wks init`, then search the workspace:\n+`GET /api/v1/workspaces/-/search?q=agent+key`.\n' +
    '\\ No newline at end of file\n',
  field: 'status',
  lastSyncError: null,
  lastSyncResult: 'ok',
  nearestArticle: 'getting-started',
  articleSlug: 'getting-started',
  reviewedBy: null,
  reviewedAt: null,
  openapiVersion: '3.1.0',
  sampleQuestion: STORY.question,
  sha256: '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
  source: 'raw',
  state: 'open',
  warning: 'The spec declares no servers; pages show relative paths.',
  version: 1,
  from: 1,
  to: 2,
  // The note's, in UTF-8 bytes.
  size: Buffer.byteLength(STORY.noteBody),
  limit: 20,
  score: 0.61,
  similarity: 0.82,
  count: 1,
  questionCount: 1,
  position: 0,
  articleCount: 1,
  contentType: 'image/png',
  filename: 'architecture.png',
  operationKey: 'GET /pets',
  method: 'GET',
  sourceUrl: 'https://docs.example.com/openapi.json',
  restricted: false,
  deleted: true,
  truncated: false,
  semantic: false,
  reported: true,
};

/** Values tried, in order, when a named value does not fit a field's pattern. */
const PATTERN_FALLBACKS = ['guides', 'runbooks/deploy', 'getting-started', 'ops', 'v3', '"v3"', '*', 'abc', 'a', '1', '0'];
