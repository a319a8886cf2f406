import { readFileSync } from 'node:fs';
import {
  execute,
  GraphQLObjectType,
  GraphQLSchema,
  Kind,
  parse,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLSchema as Schema,
} from 'graphql';

/**
 * Resources an event carries, by GraphQL type, each with the fragment its REST answers select:
 * an event's `object` is the resource exactly as REST returns it (same fields, same serialisation).
 */
const FRAGMENTS = {
  Article: 'ArticleFields',
  ChangelogEntry: 'ChangelogEntryFields',
  Proposal: 'ProposalFields',
} as const;
export type EventObjectType = keyof typeof FRAGMENTS;

const FRAGMENT_DIR = new URL('../../schema/operations/fragments/', import.meta.url).pathname;

/** A webhook `data` stays under this size: longer text fields are cut and `truncated: true` is set. */
export const EVENT_DATA_MAX_BYTES = 64 * 1024;

/** Per type: a schema whose one root field hands back the value, and the document selecting its fragment. */
let shapers: Map<EventObjectType, { schema: Schema; document: DocumentNode }> | null = null;

/** Prepares the shapes from the built schema (once per process, at start). */
export function configureEventObjects(schema: Schema): void {
  shapers = new Map();
  for (const [type, fragment] of Object.entries(FRAGMENTS) as [EventObjectType, string][]) {
    const objectType = schema.getType(type);
    if (!(objectType instanceof GraphQLObjectType)) throw new Error(`event objects: no object type ${type}`);
    const root = new GraphQLObjectType({
      name: `${type}EventRoot`,
      fields: { object: { type: objectType, resolve: (value: unknown) => value } },
    });
    const definition = parse(readFileSync(`${FRAGMENT_DIR}${fragment}.graphql`, 'utf8')).definitions[0] as FragmentDefinitionNode;
    if (definition.kind !== Kind.FRAGMENT_DEFINITION) throw new Error(`event objects: ${fragment} is not a fragment`);
    const document = parse(`query { object { ...${fragment} } }`);
    shapers.set(type, {
      schema: new GraphQLSchema({ query: root }),
      document: { ...document, definitions: [...document.definitions, definition] },
    });
  }
}

/** The resource as REST returns it. */
export function eventObject(type: EventObjectType, value: object): Record<string, unknown> {
  const shaper = shapers?.get(type);
  if (!shaper) throw new Error('event objects are not configured (configureEventObjects at start)');
  const result = execute({ schema: shaper.schema, document: shaper.document, rootValue: value });
  if ('then' in result) throw new Error(`event objects: ${type} has an asynchronous field`);
  if (result.errors?.length) throw result.errors[0];
  // A plain JSON value (no null-prototype objects), as it is stored.
  return JSON.parse(JSON.stringify(result.data!.object)) as Record<string, unknown>;
}

/** The fields of `before` whose values differ in `after`, with their values before. */
function changedFields(before: Record<string, unknown>, after: Record<string, unknown>): Record<string, unknown> {
  const previous: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(before)) {
    const other = after[key];
    const differs =
      typeof value === 'string' || typeof other === 'string' ? value !== other : JSON.stringify(value) !== JSON.stringify(other);
    if (differs) previous[key] = value;
  }
  return previous;
}

/**
 * The payload of an event about `value` (a resource of `type`): the resource as REST returns it
 * and, with `before` (its REST form before the change), the fields that changed.
 */
export function objectPayload(type: EventObjectType, value: object, before?: Record<string, unknown>): Record<string, unknown> {
  const object = eventObject(type, value);
  return eventPayload(object, before && changedFields(before, object));
}

/**
 * An event's extra webhook data: `object` (and `previous` for updates); when it would pass
 * EVENT_DATA_MAX_BYTES, its longest text fields are cut (to the same length, halved until it
 * fits) and `truncated: true` says so.
 */
function eventPayload(object: Record<string, unknown>, previous?: Record<string, unknown>): Record<string, unknown> {
  const payload: Record<string, unknown> = previous ? { object, previous } : { object };
  // Most payloads are far below the limit: no need to serialise them to know.
  if (jsonBound(object) + (previous ? jsonBound(previous) : 0) + 32 <= EVENT_DATA_MAX_BYTES) return payload;
  if (Buffer.byteLength(JSON.stringify(payload)) <= EVENT_DATA_MAX_BYTES) return payload;
  const parts = [object, ...(previous ? [previous] : [])];
  let cut = EVENT_DATA_MAX_BYTES / 4;
  for (;;) {
    const shortened = parts.map((part) =>
      Object.fromEntries(Object.entries(part).map(([k, v]) => [k, typeof v === 'string' && v.length > cut ? cutText(v, cut) : v])),
    );
    const out: Record<string, unknown> = previous ? { object: shortened[0], previous: shortened[1] } : { object: shortened[0] };
    out.truncated = true;
    if (Buffer.byteLength(JSON.stringify(out)) <= EVENT_DATA_MAX_BYTES || cut < 64) return out;
    cut = Math.floor(cut / 2);
  }
}

/** The first `length` UTF-16 units of `text`, without a lone high surrogate at the end. */
function cutText(text: string, length: number): string {
  const cut = text.slice(0, length);
  return /[\uD800-\uDBFF]$/.test(cut) ? cut.slice(0, -1) : cut;
}

/** An upper bound of a part's JSON size in bytes: 6 bytes per UTF-16 unit of text (the longest escape), other values as serialised, 64 per key. */
function jsonBound(part: Record<string, unknown>): number {
  let bytes = 2;
  for (const [k, v] of Object.entries(part))
    bytes += 64 + k.length + (typeof v === 'string' ? v.length * 6 : JSON.stringify(v ?? null).length * 6);
  return bytes;
}
