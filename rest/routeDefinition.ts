import { ruleSchema, withLimit } from '../src/contract/jsonSchema.js';
import { RULES, type IntRule, type Rule } from '../src/contract/rules.js';
import { versionEtag } from '../src/etag.js';
import { encodeCursor } from '../src/pagination.js';
import type { OperationDocument } from '../schema/operations/types.js';
import type { JsonSchema } from './jsonSchema.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** A path or query parameter: its schema; it becomes the GraphQL variable of its name. */
export interface ParamDef {
  schema: JsonSchema;
  description: string;
  required?: boolean;
  /**
   * The document's example (default: derived from the schema and the name, see examples.ts). Set to
   * `undefined` for none: an optional header the example request leaves out.
   */
  example?: unknown;
}

/** A request header: its schema, and the GraphQL variable it becomes (a header's name is never a variable's). */
export interface HeaderDef<Variable extends string = string> extends ParamDef {
  variable: Variable;
}

/** The GraphQL variable a path or query parameter or a header becomes. */
export function variableOf(name: string, def: ParamDef | HeaderDef): string {
  return 'variable' in def ? def.variable : name;
}

/** A JSON body that becomes one GraphQL input variable; `rename` maps body names to input fields. */
export interface BodyDef<Variable extends string = string> {
  schema: JsonSchema & { type: 'object'; properties: Record<string, JsonSchema> };
  variable: Variable;
  rename?: Record<string, string>;
  description?: string;
  /** Largest accepted body in bytes (default: the JSON body limit). */
  maxBytes?: number;
  /**
   * The kinds of body the endpoint takes, when they differ in which properties they allow: the
   * document declares them as `oneOf` (each a closed object), so a generated client knows them.
   * The request itself is checked against `schema` and then by the service, which refuses a mix.
   */
  variants?: BodyVariant[];
  /** The document's example request body (default: derived from the first variant or the schema). */
  example?: Record<string, unknown>;
}

/** One kind of body: a title, when to send it, and which of the body's properties it takes. */
export interface BodyVariant {
  title: string;
  description: string;
  properties: string[];
  required: string[];
  /** At least one of these too (e.g. an edit changes the title, the markdown or both). */
  oneOfRequired?: string[];
}

/**
 * A JSON body (an object with exactly these properties) that becomes one GraphQL input variable.
 * `required` and the keys of `rename` can only name its own properties: a typo fails `tsc`.
 */
export function jsonBody<P extends Record<string, JsonSchema>, const Variable extends string>(def: {
  variable: Variable;
  properties: P;
  required?: readonly (keyof P & string)[];
  minProperties?: number;
  rename?: Partial<Record<keyof P & string, string>>;
  description?: string;
  maxBytes?: number;
  variants?: (BodyVariant & { properties: (keyof P & string)[]; required: (keyof P & string)[] })[];
  example?: Partial<Record<keyof P & string, unknown>>;
}): BodyDef<Variable> {
  const { variable, properties, required, minProperties, rename, description, maxBytes, variants, example } = def;
  return {
    variable,
    schema: {
      type: 'object',
      additionalProperties: false,
      ...(required?.length ? { required: [...required] } : {}),
      ...(minProperties ? { minProperties } : {}),
      properties,
    },
    ...(rename ? { rename: rename as Record<string, string> } : {}),
    ...(description ? { description } : {}),
    ...(maxBytes ? { maxBytes } : {}),
    ...(variants ? { variants } : {}),
    ...(example ? { example } : {}),
  };
}

/** A multipart/form-data file field that becomes a GraphQL `Upload` variable. */
export interface UploadDef<Variable extends string = string> {
  field: string;
  variable: Variable;
  maxBytes: number;
  description: string;
}

/** A response header computed from the operation's result, or (without `value`) set by the service for the answer. */
export interface ResponseHeaderDef {
  description: string;
  value?(data: Record<string, unknown>): string | null;
}

/** One REST endpoint: everything the generic handler, the OpenAPI document and the agent tools need. */
export interface Route {
  /** Stable operationId (and agent tool name), e.g. `changelog_list`. */
  name: string;
  method: HttpMethod;
  /** Relative to /api/v1, with `{param}` placeholders. */
  path: string;
  /** Its document: a constant generated beside schema/operations/<Name>.graphql, imported by the row. */
  operation: OperationDocument<unknown>;
  tag: string;
  summary: string;
  description: string;
  pathParams?: Record<string, ParamDef>;
  query?: Record<string, ParamDef>;
  body?: BodyDef;
  /**
   * Request headers that become variables (lower-case names), e.g. `if-match` → `ifMatch`; a route
   * reading `if-none-match` with GET may answer 304 (documented from this).
   */
  headers?: Record<string, HeaderDef>;
  /** A multipart file upload instead of a JSON body. */
  upload?: UploadDef;
  /**
   * Keep this caller's last answer, serialised, and serve it again while the service confirms its
   * ETag (the route reads If-None-Match and its document throws not_modified): for answers that
   * are costly to build and change only with their ETag. Never for answers that move without it.
   */
  keepAnswers?: boolean;
  /** Response headers derived from the result (e.g. ETag). */
  responseHeaders?: Record<string, ResponseHeaderDef>;
  /**
   * Fields of the answer left out when null: fields added to an endpoint for clients that use
   * them, so that every other answer stays exactly what it was.
   */
  omitWhenNull?: string[];
  /** The document's example answer (default: derived from the response schema, see examples.ts). */
  responseExample?: unknown;
  /**
   * Example values by field name for this row's derived examples (parameters, body, answer), over
   * its tag's and the general ones: the examples tell one story, run top to bottom on a fresh
   * workspace by test/openapiStory.test.ts.
   */
  exampleValues?: Record<string, unknown>;
  /** HTTP status on success. */
  status: number;
  /** The root field returns `{ items, nextCursor }`: the body is the bare array, the cursor goes into `Link`. */
  list?: boolean;
  /** Error statuses beyond the ones every endpoint declares. */
  extraErrors?: number[];
  /**
   * Other names its agent tool accepts for its arguments (tool argument → the row's own): the names
   * hosts call a tool with (`query` for search's `q`, as ChatGPT's connectors do).
   */
  toolAliases?: Record<string, string>;
}

/**
 * Statuses every endpoint can return: the declared 400, 401, 403, 404 and 429, plus 500 and 503,
 * which any call may hit, and 414 and 431, answered before any route (a URL over 8 KiB, headers over 16 KiB).
 */
export const COMMON_ERRORS = [400, 401, 403, 404, 414, 429, 431, 500, 503];

/** A parameter bounded by a rule of the input contract; its description ends with the rule in words. */
export function paramOf(rule: Rule, description: string, more: Omit<ParamDef, 'schema' | 'description'> = {}): ParamDef {
  return { schema: ruleSchema(rule), description: withLimit(description, rule), ...more };
}

/** A request header bounded by a rule of the input contract, and the variable it becomes. */
export function headerOf<const Variable extends string>(
  rule: Rule,
  description: string,
  variable: Variable,
  more: Omit<ParamDef, 'schema' | 'description'> = {},
): HeaderDef<Variable> {
  return { ...paramOf(rule, description, more), variable };
}

/** The `{workspace}` path segment every workspace endpoint has. */
export const WORKSPACE_PARAM: ParamDef = paramOf(
  RULES.workspace,
  'A workspace id, or `-` for the workspace the key is bound to (an org-wide key must name an id).',
);

/**
 * Cursor-pagination query parameters shared by every list. `after`: the position the example
 * cursor names (each list's cursor has its own shape), chosen so the example's page holds the
 * items the document's other examples make.
 */
export const PAGE_QUERY = (limit: IntRule, after: readonly (string | number)[]): { limit: ParamDef; cursor: ParamDef } => ({
  limit: paramOf(limit, 'Page size.'),
  cursor: paramOf(RULES.cursor, 'Opaque cursor from the `Link: rel="next"` header of the previous page.', { example: encodeCursor(after) }),
});

/** The `ETag` response header of a versioned resource (articles, memory notes): `"v<version>"` of the answer. */
export function versionEtagHeader(description: string): Record<string, ResponseHeaderDef> {
  return { ETag: { description, value: (data) => versionEtag(Number(data.version)) } };
}

/** The names of an operation's variables. */
type VariableOf<V> = keyof V & string;

/** Parameters keyed by the variables they become: a key the operation lacks names itself in the error. */
type Named<P, V> = { [K in keyof P]: K extends VariableOf<V> ? ParamDef : `${K & string} is not a variable of the operation` };

/**
 * A row as written in routes/: its `operation` an imported document, whose variables type the rest.
 * Path and query parameters, header and body `variable`s and the upload's `variable` must be variables
 * of that document, or `tsc` fails (spread-in parameters too).
 */
export type RouteRow<V, P, Q> = Omit<Route, 'operation' | 'pathParams' | 'query' | 'headers' | 'body' | 'upload'> & {
  operation: OperationDocument<V>;
  pathParams?: P & Named<P, V>;
  query?: Q & Named<Q, V>;
  headers?: NoInfer<Record<string, HeaderDef<VariableOf<V>>>>;
  body?: NoInfer<BodyDef<VariableOf<V>>>;
  upload?: NoInfer<UploadDef<VariableOf<V>>>;
};

type NoParams = Record<never, ParamDef>;

/** One row of the route table, checked against its operation's variables by `tsc` (compileRoutes checks the rest at start). */
export function defineRoute<V, P extends Record<string, ParamDef> = NoParams, Q extends Record<string, ParamDef> = NoParams>(
  row: RouteRow<V, P, Q>,
): Route {
  return row;
}
