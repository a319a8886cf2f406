// Runs inside the spec worker (see specThread.mjs): never imported by the main thread, so the
// service's error classes (and graphql with them) stay out of it; client faults are SpecRejections.
import { createHash } from 'node:crypto';
import SwaggerParser from '@apidevtools/swagger-parser';
import { parse as parseYaml } from 'yaml';
import { checkExpansion } from './expansion.js';
import { rejectSpec, SpecRejection, tookTooLong, type Finding } from './rejection.js';
import { arr, entries, get, isObject, renderOperation, str, text, type JsonObject } from './render.js';
import type { ParsedSpec, SpecOperation } from './parsedSpec.js';

export { SpecRejection } from './rejection.js';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
/** The section of operations without a tag. */
const UNTAGGED = 'API Reference';

/** The yaml package's cap on alias expansion (uses of an anchor times the aliases nested in it). */
const YAML_MAX_ALIAS_COUNT = 100;

/** Reads, bounds, validates and renders a client's OpenAPI document (JSON or YAML text). */
export async function parseSpecText(source: string, options: { timeoutMs: number }): Promise<ParsedSpec> {
  const started = Date.now();
  const doc = readSpecText(source);
  checkVersion(doc);
  checkExpansion(doc);
  // Dereferencing stops itself a little before the job's wall-clock limit, so the worker survives.
  const derefMs = Math.max(1, Math.floor(options.timeoutMs * 0.9) - (Date.now() - started));
  return parseSpec(doc, options.timeoutMs, derefMs);
}

/** JSON or YAML text to a document object; a rejection when it is neither. */
function readSpecText(source: string): JsonObject {
  let value: unknown;
  try {
    value = JSON.parse(source);
  } catch {
    try {
      value = parseYaml(source, { maxAliasCount: YAML_MAX_ALIAS_COUNT });
    } catch (error) {
      throw new SpecRejection('The spec is neither JSON nor YAML.', [
        { field: 'spec', path: '', message: firstLine((error as Error).message) },
      ]);
    }
  }
  if (!isObject(value)) throw rejectSpec('The spec must be an object.', 'is not an object');
  return value;
}

/** Rejects a document that is not OpenAPI 3.0, 3.1 or Swagger 2.0. */
function checkVersion(doc: JsonObject): void {
  const version = text(get(doc, 'openapi') ?? get(doc, 'swagger') ?? '');
  if (!/^(2\.0|3\.0\.\d+|3\.1\.\d+)$/.test(version)) {
    throw new SpecRejection('Only OpenAPI 3.0, 3.1 and Swagger 2.0 documents are accepted.', [
      {
        field: 'spec',
        path: get(doc, 'openapi') ? '#/openapi' : '#/swagger',
        message: `unsupported version "${clip(version, 40) || 'missing'}"`,
      },
    ]);
  }
}

/**
 * Validates an OpenAPI 3.0 / 3.1 or Swagger 2.0 document with swagger-parser, external `$ref`
 * resolution turned off (no file or URL is ever read), and extracts its operations.
 */
async function parseSpec(doc: JsonObject, timeoutMs: number, derefMs: number): Promise<ParsedSpec> {
  const openapiVersion = text(get(doc, 'openapi') ?? get(doc, 'swagger'));
  const api = await validate(doc, openapiVersion, timeoutMs, derefMs);
  const warnings: string[] = [];
  const operations: SpecOperation[] = [];
  const seen = new Set<string>();
  const isSwagger = openapiVersion === '2.0';
  // The document is valid here: paths hold path items, path items operations, parameters are arrays.
  for (const [path, item] of entries(get(api, 'paths'))) {
    if (!isObject(item)) continue;
    for (const method of METHODS) {
      const op = get(item, method);
      if (!isObject(op)) continue;
      if (get(op, 'x-hidden') === true || get(item, 'x-hidden') === true) continue;
      const key = str(get(op, 'operationId')) || `${method.toUpperCase()} ${path}`;
      if (seen.has(key)) {
        warnings.push(`duplicate operation key "${key}" (${method.toUpperCase()} ${path}) skipped`);
        continue;
      }
      seen.add(key);
      const parameters = [...arr(get(item, 'parameters')), ...arr(get(op, 'parameters'))];
      const title = str(get(op, 'summary'))?.trim() || `${method.toUpperCase()} ${path}`;
      const tag = str(arr(get(op, 'tags'))[0]) || UNTAGGED;
      const servers = isSwagger ? [get(api, 'host'), get(api, 'basePath')] : get(api, 'servers');
      const hash = createHash('sha256').update(stableJson({ method, path, op, parameters, servers })).digest('hex').slice(0, 32);
      const markdown = renderNamed({ method, path, op, parameters, api, isSwagger, title });
      operations.push({ key, method: method.toUpperCase(), path, title, tag, hash, markdown });
    }
  }
  const info = get(api, 'info');
  return { title: str(get(info, 'title')) ?? null, version: str(get(info, 'version')) ?? null, openapiVersion, operations, warnings };
}

/** Renders one operation's page; a schema it cannot render is a rejection naming the operation (a JSON pointer). */
function renderNamed(input: Parameters<typeof renderOperation>[0]): string {
  try {
    return renderOperation(input);
  } catch (error) {
    if (!(error instanceof SpecRejection)) throw error;
    const pointer = `#/paths/${input.path.replaceAll('~', '~0').replaceAll('/', '~1')}/${input.method}`;
    const where = `${input.method.toUpperCase()} ${input.path}`;
    const findings = error.findings.map((f) => ({ ...f, path: pointer, message: `${where} ${f.message}` }));
    throw new SpecRejection(`The spec's operation ${where} ${findings[0].message.slice(where.length + 1)}.`, findings);
  }
}

/** swagger-parser's validation and dereferencing; its findings (or its own time limit) become a rejection. */
async function validate(doc: JsonObject, openapiVersion: string, timeoutMs: number, derefMs: number): Promise<JsonObject> {
  let api: unknown;
  try {
    const options = { resolve: { external: false }, dereference: { circular: 'ignore' as const }, timeoutMs: derefMs };
    api = await SwaggerParser.validate(doc as never, options);
  } catch (error) {
    if ((error as Error).name === 'TimeoutError') throw tookTooLong(timeoutMs);
    const details = (error as { details?: { instancePath?: string; message?: string }[] }).details;
    const findings: Finding[] = details?.length
      ? details.slice(0, 50).map((d) => ({ field: 'spec', path: `#${d.instancePath ?? ''}`, message: d.message ?? 'is invalid' }))
      : [{ field: 'spec', path: '', message: (error as Error).message.split('\n').slice(0, 3).join(' ').slice(0, 500) }];
    throw new SpecRejection(`The spec is not a valid OpenAPI ${openapiVersion} document.`, findings);
  }
  // swagger-parser answers the document it was given, dereferenced in place.
  if (!isObject(api)) throw new Error('swagger-parser answered no document object.');
  return api;
}

/** JSON with sorted keys (and circular references cut), so equal operations hash equally. */
function stableJson(value: unknown): string {
  const seen = new WeakSet<object>();
  const walk = (v: unknown): unknown => {
    if (!v || typeof v !== 'object') return v;
    if (seen.has(v)) return '[circular]';
    seen.add(v);
    const out = Array.isArray(v)
      ? v.map(walk)
      : Object.fromEntries(
          Object.keys(v)
            .sort()
            .map((k) => [k, walk((v as Record<string, unknown>)[k])]),
        );
    seen.delete(v);
    return out;
  };
  return JSON.stringify(walk(value));
}

/** At most `max` characters of a client's text, as echoed in a finding. */
function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** The text up to its first line break. */
function firstLine(source: string): string {
  const end = source.indexOf('\n');
  return end < 0 ? source : source.slice(0, end);
}
