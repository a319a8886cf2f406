import { createHash } from 'node:crypto';
import SwaggerParser from '@apidevtools/swagger-parser';
import { parse as parseYaml } from 'yaml';
import { InvalidRequestError } from '../errors.js';
import { renderOperation } from './render.js';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
export const UNTAGGED = 'API Reference';

/** One operation of a spec, with the page it renders to. */
export interface SpecOperation {
  key: string;
  method: string;
  path: string;
  title: string;
  tag: string;
  hash: string;
  markdown: string;
}

export interface ParsedSpec {
  title: string | null;
  version: string | null;
  openapiVersion: string;
  operations: SpecOperation[];
  warnings: string[];
}

/** A finding of the parser, as put in a 400's details. */
export interface Finding {
  field: string;
  message: string;
  path: string;
}

/** JSON or YAML text (or an already-parsed object) to a document object; a 400 when it is neither. */
export function readSpecText(input: string | Record<string, unknown>): Record<string, unknown> {
  if (typeof input !== 'string') return structuredClone(input);
  let value: unknown;
  try {
    value = JSON.parse(input);
  } catch {
    try {
      value = parseYaml(input, { maxAliasCount: 100 });
    } catch (error) {
      throw specInvalid('The spec is neither JSON nor YAML.', [{ field: 'spec', path: '', message: (error as Error).message.split('\n')[0] }]);
    }
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw specInvalid('The spec must be an object.', [{ field: 'spec', path: '', message: 'is not an object' }]);
  return value as Record<string, unknown>;
}

/**
 * Validates an OpenAPI 3.0 / 3.1 or Swagger 2.0 document with swagger-parser, external `$ref`
 * resolution turned off (no file or URL is ever read), and extracts its operations.
 */
export async function parseSpec(doc: Record<string, unknown>): Promise<ParsedSpec> {
  const openapiVersion = String(doc.openapi ?? doc.swagger ?? '');
  if (!/^(2\.0|3\.0\.\d+|3\.1\.\d+)$/.test(openapiVersion)) {
    throw specInvalid('Only OpenAPI 3.0, 3.1 and Swagger 2.0 documents are accepted.', [{ field: 'spec', path: doc.openapi ? '#/openapi' : '#/swagger', message: `unsupported version "${openapiVersion || 'missing'}"` }]);
  }
  let api: Record<string, any>;
  try {
    api = (await SwaggerParser.validate(doc as never, { resolve: { external: false }, dereference: { circular: 'ignore' } })) as Record<string, any>;
  } catch (error) {
    const details = (error as { details?: { instancePath?: string; message?: string }[] }).details;
    const findings: Finding[] = details?.length
      ? details.slice(0, 50).map((d) => ({ field: 'spec', path: `#${d.instancePath ?? ''}`, message: d.message ?? 'is invalid' }))
      : [{ field: 'spec', path: '', message: (error as Error).message.split('\n').slice(0, 3).join(' ').slice(0, 500) }];
    throw specInvalid(`The spec is not a valid OpenAPI ${openapiVersion} document.`, findings);
  }
  const warnings: string[] = [];
  const operations: SpecOperation[] = [];
  const seen = new Set<string>();
  const isSwagger = openapiVersion === '2.0';
  for (const [path, item] of Object.entries<Record<string, any>>(api.paths ?? {})) {
    if (!item || typeof item !== 'object') continue;
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      if (op['x-hidden'] === true || item['x-hidden'] === true) continue;
      const key = typeof op.operationId === 'string' && op.operationId ? op.operationId : `${method.toUpperCase()} ${path}`;
      if (seen.has(key)) {
        warnings.push(`duplicate operation key "${key}" (${method.toUpperCase()} ${path}) skipped`);
        continue;
      }
      seen.add(key);
      const parameters = [...(item.parameters ?? []), ...(op.parameters ?? [])];
      const title = typeof op.summary === 'string' && op.summary.trim() ? op.summary.trim() : `${method.toUpperCase()} ${path}`;
      const tag = Array.isArray(op.tags) && typeof op.tags[0] === 'string' && op.tags[0] ? op.tags[0] : UNTAGGED;
      const canonical = stableJson({ method, path, op, parameters, servers: isSwagger ? [api.host, api.basePath] : api.servers });
      const hash = createHash('sha256').update(canonical).digest('hex').slice(0, 32);
      const markdown = renderOperation({ method, path, op, parameters, api, isSwagger, title });
      operations.push({ key, method: method.toUpperCase(), path, title, tag, hash, markdown });
    }
  }
  return { title: api.info?.title ?? null, version: api.info?.version ?? null, openapiVersion, operations, warnings };
}

/** JSON with sorted keys (and circular references cut), so equal operations hash equally. */
export function stableJson(value: unknown): string {
  const seen = new WeakSet<object>();
  const walk = (v: unknown): unknown => {
    if (!v || typeof v !== 'object') return v;
    if (seen.has(v as object)) return '[circular]';
    seen.add(v as object);
    const out = Array.isArray(v) ? v.map(walk) : Object.fromEntries(Object.keys(v as object).sort().map((k) => [k, walk((v as Record<string, unknown>)[k])]));
    seen.delete(v as object);
    return out;
  };
  return JSON.stringify(walk(value));
}

function specInvalid(message: string, findings: Finding[]): InvalidRequestError {
  return new InvalidRequestError(message, findings);
}
