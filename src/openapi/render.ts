import { rejectSpec, type SpecRejection } from './rejection.js';

// The document is a client's untyped JSON (or YAML): it is read through the typed accessors at the
// end of this file, which parse.ts shares (the spec worker loads only parse, render, expansion and
// rejection, see workerModules.ts, so they live here rather than in a module of their own).

/** A value of a parsed document (YAML aliases may make nodes shared or cyclic). */
export type JsonValue = null | boolean | number | string | JsonValue[] | JsonObject;

/** An object of a parsed document. */
export interface JsonObject {
  [key: string]: JsonValue;
}

/** What one operation's page is rendered from (the dereferenced document and the operation in it). */
export interface RenderInput {
  method: string;
  path: string;
  op: JsonObject;
  parameters: JsonValue[];
  api: JsonObject;
  isSwagger: boolean;
  title: string;
}

/** A schema sketch: a type name, a one-item array, or an object of sketches. */
type Sketch = string | Sketch[] | SketchObject;

interface SketchObject {
  [key: string]: Sketch;
}

const MAX_SCHEMA_DEPTH = 6;

/** Renders one operation as a Markdown page: description, parameters, bodies, responses, example. */
export function renderOperation({ method, path, op, parameters, api, isSwagger, title }: RenderInput): string {
  const out: string[] = [`# ${title}`, '', `\`${method.toUpperCase()} ${path}\``, ''];
  if (get(op, 'deprecated')) out.push('> **Deprecated.**', '');
  const description = get(op, 'description');
  if (description) out.push(text(description).trim(), '');
  const params = parameters.filter((p) => p && get(p, 'in') !== 'body');
  if (params.length) pushParameters(out, params);
  const body = isSwagger ? parameters.find((p) => get(p, 'in') === 'body') : get(op, 'requestBody');
  if (body) pushRequestBody(out, body, isSwagger);
  pushResponses(out, get(op, 'responses'), isSwagger);
  out.push('## Example request', '', '```sh', exampleCurl(method, path, params, api, isSwagger, Boolean(body)), '```', '');
  return out.join('\n');
}

/** The parameters table (pushed row by row: an operation may have very many). */
function pushParameters(out: string[], params: JsonValue[]): void {
  out.push('## Parameters', '', '| Name | In | Type | Required | Description |', '|---|---|---|---|---|');
  for (const p of params) {
    // In the order the page always read them (a value String() refuses fails the first).
    const name = text(get(p, 'name'));
    const location = text(get(p, 'in'));
    const type = typeName(get(p, 'schema') ?? p);
    out.push(`| \`${name}\` | ${location} | ${type} | ${get(p, 'required') ? 'yes' : 'no'} | ${cell(get(p, 'description'))} |`);
  }
  out.push('');
}

/** The request body: Swagger 2.0's body parameter, or OpenAPI 3's `requestBody` per media type. */
function pushRequestBody(out: string[], body: JsonValue, isSwagger: boolean): void {
  out.push('## Request body', '');
  const description = get(body, 'description');
  if (description) out.push(text(description).trim(), '');
  if (isSwagger) {
    out.push('```json', sketchJson(get(body, 'schema')), '```', '');
    return;
  }
  for (const [type, media] of entries(get(body, 'content')))
    out.push(`\`${type}\`${get(body, 'required') ? ' (required)' : ''}`, '', '```json', sketchJson(get(media, 'schema')), '```', '');
}

/** Each response: its description and a sketch of its schema per media type. */
function pushResponses(out: string[], responses: JsonValue | undefined, isSwagger: boolean): void {
  const all = entries(responses);
  if (!all.length) return;
  out.push('## Responses', '');
  for (const [status, res] of all) {
    out.push(`### ${status}`, '', cell(get(res, 'description')) || '—', '');
    const schema = get(res, 'schema');
    const media: [string, JsonValue][] = isSwagger ? (schema ? [['application/json', { schema }]] : []) : entries(get(res, 'content'));
    for (const [type, content] of media) {
      const contentSchema = get(content, 'schema');
      if (!contentSchema) continue;
      out.push(`\`${type}\``, '', '```json', sketchJson(contentSchema), '```', '');
    }
  }
}

/** A curl command for the operation: path parameters and required query ones filled with placeholders, headers. */
function exampleCurl(method: string, path: string, params: JsonValue[], api: JsonObject, isSwagger: boolean, hasBody: boolean): string {
  const base = isSwagger
    ? `${text(first(get(api, 'schemes')) ?? 'https')}://${text(get(api, 'host') ?? 'api.example.com')}${text(get(api, 'basePath') ?? '')}`
    : text(get(first(get(api, 'servers')), 'url') ?? 'https://api.example.com');
  const filled = fillTemplate(path);
  const query = params
    .filter((p) => get(p, 'in') === 'query' && get(p, 'required'))
    .map((p) => `${text(get(p, 'name'))}=<${text(get(p, 'name'))}>`)
    .join('&');
  const lines = [`curl -X ${method.toUpperCase()} '${base.endsWith('/') ? base.slice(0, -1) : base}${filled}${query ? `?${query}` : ''}'`];
  for (const h of params.filter((p) => get(p, 'in') === 'header')) lines.push(`  -H '${text(get(h, 'name'))}: <${text(get(h, 'name'))}>'`);
  if (hasBody) lines.push(`  -H 'content-type: application/json'`, `  -d '{…}'`);
  return lines.join(' \\\n');
}

/** A schema's sketch as indented JSON. */
function sketchJson(schema: JsonValue | undefined): string {
  return JSON.stringify(schemaSketch(schema, 0, new WeakSet()), null, 2);
}

/** A compact example-like view of a schema (types and nesting), bounded in depth and cycle-safe. */
function schemaSketch(schema: JsonValue | undefined, depth: number, seen: WeakSet<object>): Sketch {
  if (!schema || typeof schema !== 'object') return 'any';
  const ref = get(schema, '$ref');
  if (ref) {
    const segments = text(ref).split('/');
    return `<${segments[segments.length - 1]}>`;
  }
  if (seen.has(schema) || depth > MAX_SCHEMA_DEPTH) return '…';
  seen.add(schema);
  try {
    const variants = get(schema, 'oneOf') ?? get(schema, 'anyOf');
    if (Array.isArray(variants)) return { oneOf: variants.map((v) => schemaSketch(v, depth + 1, seen)) };
    const allOf = get(schema, 'allOf');
    // Merged one by one: spreading a huge allOf into Object.assign's arguments overflows the stack.
    if (Array.isArray(allOf))
      return allOf
        .map((s) => schemaSketch(s, depth + 1, seen))
        .filter((s): s is SketchObject | Sketch[] => typeof s === 'object')
        .reduce<SketchObject>((all, s) => Object.assign(all, s), {});
    const type = get(schema, 'type');
    if (type === 'array' || get(schema, 'items')) return [schemaSketch(get(schema, 'items'), depth + 1, seen)];
    if (type === 'object' || get(schema, 'properties')) {
      const required = requiredNames(get(schema, 'required'));
      return Object.fromEntries(
        entries(get(schema, 'properties')).map(([k, v]) => [required.has(k) ? k : `${k}?`, schemaSketch(v, depth + 1, seen)]),
      );
    }
    return typeName(schema);
  } finally {
    seen.delete(schema);
  }
}

/** A schema's type in words; bounded in depth, as a YAML alias can make `items` contain itself. */
function typeName(schema: JsonValue | undefined, depth = 0): string {
  if (!schema) return 'any';
  if (depth > MAX_SCHEMA_DEPTH) return '…';
  const declared = get(schema, 'type');
  const type = Array.isArray(declared) ? joinText(declared, ' | ') : (declared ?? (get(schema, 'properties') ? 'object' : 'any'));
  const values = get(schema, 'enum');
  const format = get(schema, 'format');
  const detail = values ? ` (${enumText(values)})` : format ? ` (${text(format)})` : '';
  return type === 'array' ? `array of ${typeName(get(schema, 'items'), depth + 1)}` : `${text(type)}${detail}`;
}

/**
 * The first eight values of an `enum`, comma-separated. OpenAPI 3.1 lets any JSON through as a
 * schema, so an `enum` that is no array is the document's fault, named as such (parse.ts adds the
 * operation). An object can inherit an array's methods (the dereferencer merges a `__proto__` key
 * beside a `$ref` into the prototype of the object it builds): only a real array is read.
 */
function enumText(values: JsonValue): string {
  if (Array.isArray(values)) return joinText(values.slice(0, 8), ', ');
  throw unrenderable(`has a schema whose \`enum\` is ${describeValue(values)}, not an array`);
}

/** The names a schema's `required` lists (a string reads as its characters, as it always has); a non-list is the document's fault. */
function requiredNames(value: JsonValue | undefined): Set<unknown> {
  if (value === undefined || value === null) return new Set();
  if (isIterable(value)) return new Set(value);
  throw unrenderable(`has a schema whose \`required\` is ${describeValue(value)}, not an array`);
}

/** A schema the pages cannot be rendered from: a rejection parse.ts completes with the operation. */
function unrenderable(finding: string): SpecRejection {
  return rejectSpec(`An operation ${finding}.`, finding);
}

/** A value's JSON type, and a short excerpt of a scalar, for messages about the client's document. */
function describeValue(value: JsonValue): string {
  if (isObject(value)) return 'an object';
  const excerpt = JSON.stringify(value).slice(0, 40);
  return `a ${value === null ? 'null' : typeof value} (${excerpt})`;
}

/**
 * One Markdown table cell: every whitespace run holding a line break becomes one space, pipes are
 * escaped. Split and trim, not a regex: `\s*\n\s*` backtracks quadratically on long whitespace runs.
 */
function cell(value: JsonValue | undefined): string {
  if (!value) return '';
  const lines = text(value)
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
  return lines.join(' ').replaceAll('|', '\\|');
}

/** `/pets/{petId}` → `/pets/<petId>` for names of word characters; anything else is kept as written. */
function fillTemplate(path: string): string {
  let out = '';
  let from = 0;
  let close = -1;
  for (let open = path.indexOf('{'); open >= 0; open = path.indexOf('{', open + 1)) {
    // The next '}' is searched again only once passed: many '{' before one '}' stay linear.
    if (close <= open) close = path.indexOf('}', open + 1);
    if (close < 0) break;
    const name = path.slice(open + 1, close);
    if (!isWord(name)) continue;
    out += `${path.slice(from, open)}<${name}>`;
    from = close + 1;
    open = close;
  }
  return out + path.slice(from);
}

/** Whether a name is ASCII letters, digits and underscores only (and not empty). */
function isWord(name: string): boolean {
  if (!name) return false;
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    const word = (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
    if (!word) return false;
  }
  return true;
}

/** Whether a value is an object of the document (not null, not an array). */
export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A member of an object, inherited ones included (as `value.key`); none of an array or scalar, whose prototypes hold no such name. */
export function get(value: JsonValue | undefined, key: string): JsonValue | undefined {
  return isObject(value) ? value[key] : undefined;
}

/** A string value, else undefined. */
export function str(value: JsonValue | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** An array value, else no items. */
export function arr(value: JsonValue | undefined): JsonValue[] {
  return Array.isArray(value) ? value : [];
}

/** `value?.[0]`: an array's or a string's first item, an object's member "0". */
function first(value: JsonValue | undefined): JsonValue | undefined {
  return Array.isArray(value) || typeof value === 'string' ? value[0] : get(value, '0');
}

/** A value's own entries as Object.entries gives them (a string's are its UTF-16 units); none for a number, boolean or null. */
export function entries(value: JsonValue | undefined): [string, JsonValue][] {
  if (typeof value === 'string') return Object.entries(value);
  return typeof value === 'object' && value !== null ? Object.entries(value) : [];
}

/** A document value as text, exactly as String() shows it: an array's items joined by commas, "[object Object]" for an object. */
export function text(value: unknown): string {
  return String(value);
}

/** Items joined as Array.prototype.join does: each item as String() gives it, null as nothing. */
function joinText(values: readonly unknown[], separator: string): string {
  return values.join(separator);
}

/** Whether `new Set(value)` can read a value: a string, or an object with an iterator (an array, or one inheriting from an array). */
function isIterable(value: unknown): value is Iterable<unknown> {
  return typeof value === 'string' || (typeof value === 'object' && value !== null && Symbol.iterator in value);
}
