import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule, { type FormatsPlugin } from 'ajv-formats';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { FORMATS } from '../src/contract/check.js';
import { MAX_BYTES } from '../src/contract/jsonSchema.js';
import { PATTERN_MESSAGES, SAY } from '../src/contract/rules.js';
import type { FieldIssue, FieldLocation } from '../src/errors.js';
import type { JsonSchema } from './jsonSchema.js';
import type { ParamDef } from './routeDefinition.js';

// ajv-formats is CommonJS: under NodeNext its default import is the module object.
const addFormats = ((addFormatsModule as unknown as { default?: FormatsPlugin }).default ?? addFormatsModule) as FormatsPlugin;

function makeAjv(coerce: boolean) {
  const ajv = new Ajv2020({ allErrors: true, strict: false, coerceTypes: coerce, useDefaults: coerce, verbose: true });
  addFormats(ajv);
  // The contract's own checks: the same answer as the GraphQL door, and linear (with allErrors a
  // format runs even on a value already refused as too long).
  for (const [name, check] of Object.entries(FORMATS)) ajv.addFormat(name, (value: string) => check(value));
  return ajv;
}

const bodyAjv = makeAjv(false);
const paramAjv = makeAjv(true);

/** A field issue that always says where it was found. */
export type LocatedIssue = FieldIssue & { in: FieldLocation };

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

function wrap(validate: ValidateFunction, where: FieldLocation): Check {
  return (value) => {
    const copy = where === 'body' ? value : { ...(value as object) };
    if (validate(copy)) return { ok: true, value: copy as Record<string, unknown> };
    return { ok: false, issues: dedupe((validate.errors ?? []).map((e) => toIssue(e, where))) };
  };
}

function toIssue(error: ErrorObject, where: FieldLocation): LocatedIssue {
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
      return { field: base || where, message: SAY.oneOf((error.params.allowedValues as unknown[]).map(String)), in: where };
    default:
      return { field: base || where, message: contractMessage(error) ?? error.message ?? 'is not valid', in: where };
  }
}

/** The input contract's words for the bounds it declares, so every door says the same. */
function contractMessage(error: ErrorObject): string | null {
  const parent = (error.parentSchema ?? {}) as Record<string, unknown>;
  switch (error.keyword) {
    case 'maxLength':
      // A byte bound is stated as the length bound too; the refusal says bytes, as the rule counts them.
      return typeof parent[MAX_BYTES] === 'number' && typeof error.data === 'string'
        ? SAY.maxBytes(parent[MAX_BYTES], Buffer.byteLength(error.data, 'utf8'))
        : SAY.maxLength(error.params.limit as number);
    case 'minLength':
      return SAY.minLength(error.params.limit as number);
    case 'maxItems':
      return SAY.maxItems(error.params.limit as number);
    case 'minimum':
    case 'maximum':
      return parent.type === 'integer' && typeof parent.minimum === 'number' && typeof parent.maximum === 'number'
        ? SAY.intRange(parent.minimum, parent.maximum)
        : null;
    case 'pattern':
      return PATTERN_MESSAGES.get(error.params.pattern as string) ?? null;
    case 'format':
      return (SAY.format as Record<string, string>)[error.params.format as string] ?? null;
    default:
      return null;
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
