import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule, { type FormatsPlugin } from 'ajv-formats';
import type { ErrorObject, ValidateFunction } from 'ajv';
import type { FieldIssue } from '../src/errors.js';
import type { JsonSchema } from './jsonSchema.js';
import type { ParamDef } from './route.js';

// ajv-formats is CommonJS: under NodeNext its default import is the module object.
const addFormats = ((addFormatsModule as unknown as { default?: FormatsPlugin }).default ?? addFormatsModule) as FormatsPlugin;

function makeAjv(coerce: boolean) {
  const ajv = new Ajv2020({ allErrors: true, strict: false, coerceTypes: coerce, useDefaults: coerce });
  addFormats(ajv);
  return ajv;
}

const bodyAjv = makeAjv(false);
const paramAjv = makeAjv(true);

export type Location = 'path' | 'query' | 'header' | 'body';
export interface LocatedIssue extends FieldIssue {
  in: Location;
}

/** A compiled check: returns the (coerced) value or the list of issues. */
export type Check = (value: unknown) => { ok: true; value: Record<string, unknown> } | { ok: false; issues: LocatedIssue[] };

/** Compiles parameters (strings from the URL, coerced to their types) into one check. */
export function compileParams(params: Record<string, ParamDef> | undefined, where: 'path' | 'query' | 'header'): Check {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const [name, def] of Object.entries(params ?? {})) {
    properties[name] = def.schema;
    if (where === 'path' || def.required) required.push(name);
  }
  // Unknown query parameters are refused; other headers are simply not ours to check.
  return wrap(paramAjv.compile({ type: 'object', properties, required, additionalProperties: where === 'header' }), where);
}

/** Compiles a JSON body schema (no coercion: a string is not a number). */
export function compileBody(schema: JsonSchema): Check {
  return wrap(bodyAjv.compile(schema), 'body');
}

function wrap(validate: ValidateFunction, where: Location): Check {
  return (value) => {
    const copy = where === 'body' ? value : { ...(value as object) };
    if (validate(copy)) return { ok: true, value: copy as Record<string, unknown> };
    return { ok: false, issues: dedupe((validate.errors ?? []).map((e) => toIssue(e, where))) };
  };
}

function toIssue(error: ErrorObject, where: Location): LocatedIssue {
  const base = error.instancePath
    .split('/')
    .slice(1)
    .map((part) => (/^\d+$/.test(part) ? `[${part}]` : `.${part.replace(/~1/g, '/').replace(/~0/g, '~')}`))
    .join('')
    .replace(/^\./, '');
  const join = (name: string) => (base ? `${base}.${name}` : name);
  switch (error.keyword) {
    case 'required':
      return { field: join(error.params.missingProperty as string), message: 'is required', in: where };
    case 'additionalProperties':
      return { field: join(error.params.additionalProperty as string), message: 'is not a known field', in: where };
    case 'minProperties':
      return { field: base || where, message: `must have at least ${error.params.limit} field(s)`, in: where };
    case 'enum':
      return { field: base || where, message: `must be one of ${(error.params.allowedValues as unknown[]).join(', ')}`, in: where };
    default:
      return { field: base || where, message: error.message ?? 'is not valid', in: where };
  }
}

function dedupe(issues: LocatedIssue[]): LocatedIssue[] {
  const seen = new Set<string>();
  return issues.filter((i) => {
    const key = `${i.in}:${i.field}:${i.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
