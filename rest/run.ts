import { createHash } from 'node:crypto';
import { GraphQLError, type GraphQLSchema } from 'graphql';
import { classifyError, ConflictError, DomainError, InvalidRequestError } from '../src/errors.js';
import type { IdempotencyStore } from '../src/services/idempotency.js';
import type { CompiledRoute } from './compile.js';
import { envelope } from './envelope.js';
import type { LocatedIssue } from './validate.js';

/** A request to one route, independent of the transport (REST over Koa, or an agent tool call). */
export interface RouteInput {
  params: Record<string, unknown>;
  query: Record<string, unknown>;
  /** Lower-case header names. */
  headers: Record<string, string | undefined>;
  /** The parsed JSON body (routes with a body). */
  json?: unknown;
  /** The file (routes with an upload): a graphql-upload `Upload` carrying a `digest`. */
  upload?: unknown;
}

/** What the route answered: status, body (the bare array for lists), headers and the next cursor. */
export interface RouteOutput {
  status: number;
  body: unknown;
  headers: Record<string, string>;
  nextCursor: string | null;
}

/** What the facade needs from the domain: the schema and a per-request context (no entities). */
export interface RouteBackend {
  schema: GraphQLSchema;
  idempotency: IdempotencyStore;
  /** Receives unexpected errors (never shown to the client). */
  logError(error: unknown, requestId: string | undefined): void;
}

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/**
 * Runs one route: validates parameters and body against the row, claims the Idempotency-Key,
 * executes the pre-validated document in-process on the schema, and maps the result or the
 * error to the answer. Domain and validation errors become envelopes here; nothing is thrown.
 */
export async function runRoute(compiled: CompiledRoute, backend: RouteBackend, contextValue: { requestId?: string }, agentKeyId: string, input: RouteInput): Promise<RouteOutput> {
  const { route, op } = compiled;
  let claim: { id: number } | null = null;
  let output: RouteOutput;
  try {
    const variables = buildVariables(compiled, input);
    const key = route.method !== 'GET' ? input.headers['idempotency-key'] : undefined;
    if (key) {
      const start = await claimKey(backend, compiled, agentKeyId, String(input.params.workspace ?? ''), key, variables);
      if (start.kind === 'replay') return start.output;
      claim = start;
    }
    const result = await compiled.run(contextValue, variables);
    if (result.errors?.length) throw result.errors[0];
    const data = (result.data as Record<string, unknown>)[op.rootField] as Record<string, unknown>;
    const headers: Record<string, string> = {};
    for (const [name, header] of Object.entries(route.responseHeaders ?? {})) {
      const value = header.value(data);
      if (value !== null) headers[name] = value;
    }
    output = route.list
      ? { status: route.status, body: data.items, headers, nextCursor: (data.nextCursor as string | null) ?? null }
      : { status: route.status, body: data, headers, nextCursor: null };
  } catch (error) {
    output = errorOutput(error, (e) => backend.logError(e, contextValue.requestId));
  }
  if (claim) {
    // Answers that a retry might change are not kept: the client may try again with the same key.
    if (output.status >= 500 || output.status === 429 || output.status === 409) await backend.idempotency.abandon(claim.id);
    else await backend.idempotency.complete(claim.id, output.status, output.body, { ...output.headers, ...(output.nextCursor ? { 'x-next-cursor': output.nextCursor } : {}) });
  }
  return output;
}

/** Any error as an envelope answer; unexpected ones are logged and hidden. */
export function errorOutput(error: unknown, log: (error: unknown) => void): RouteOutput {
  let code = 'internal';
  let message = 'The server failed to process the request.';
  let details: unknown = null;
  const headers: Record<string, string> = {};
  if (error instanceof DomainError) {
    ({ code, message, details } = error);
  } else if (error instanceof Error) {
    const classified = classifyError(error);
    if (classified.unexpected) log(error instanceof GraphQLError ? (error.originalError ?? error) : error);
    ({ code, message, details } = classified);
  } else {
    log(error);
  }
  if (code === 'unavailable') headers['Retry-After'] = '1';
  if (error instanceof ConflictError && (details as { retryAfter?: number } | null)?.retryAfter) headers['Retry-After'] = String((details as { retryAfter: number }).retryAfter);
  const { status, body } = envelope(code, message, details);
  return { status, body, headers, nextCursor: null };
}

async function claimKey(backend: RouteBackend, compiled: CompiledRoute, agentKeyId: string, workspace: string, key: string, variables: Record<string, unknown>): Promise<{ kind: 'replay'; output: RouteOutput } | { kind: 'new'; id: number }> {
  if (!IDEMPOTENCY_KEY.test(key)) {
    throw new InvalidRequestError('Idempotency-Key must be 1 to 255 printable ASCII characters.', [{ field: 'Idempotency-Key', message: 'must be 1 to 255 printable ASCII characters', in: 'header' } as LocatedIssue]);
  }
  const hash = createHash('sha256').update(`${compiled.route.name}\n${stableStringify(variables)}`).digest('hex');
  const start = await backend.idempotency.begin(agentKeyId, workspace, key, hash);
  if (start.kind === 'mismatch') throw new ConflictError('This Idempotency-Key was already used with a different request; use a new key for a new request.', { idempotencyKey: key });
  if (start.kind === 'in_progress') throw new ConflictError('A request with this Idempotency-Key is still being processed; retry shortly.', { idempotencyKey: key, retryAfter: 1 });
  if (start.kind === 'replay') {
    const { 'x-next-cursor': next, ...headers } = start.headers;
    return { kind: 'replay', output: { status: start.status, body: start.body, headers: { ...headers, 'Idempotent-Replayed': 'true' }, nextCursor: next ?? null } };
  }
  return start;
}

/** JSON with sorted keys; uploads are represented by their digest. */
function stableStringify(value: unknown): string {
  if (value && typeof value === 'object' && typeof (value as { digest?: unknown }).digest === 'string') return JSON.stringify((value as { digest: string }).digest);
  if (Array.isArray(value)) return `[${value.map(stableStringify).join(',')}]`;
  if (value && typeof value === 'object') return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${stableStringify((value as Record<string, unknown>)[k])}`).join(',')}}`;
  return JSON.stringify(value) ?? 'null';
}

function buildVariables(compiled: CompiledRoute, input: RouteInput): Record<string, unknown> {
  const { route } = compiled;
  const issues: LocatedIssue[] = [];
  const variables: Record<string, unknown> = {};
  const take = (result: ReturnType<CompiledRoute['checkPath']>, defs: Record<string, { variable?: string }>) => {
    if (!result.ok) return issues.push(...result.issues);
    for (const [name, value] of Object.entries(result.value)) variables[defs[name]?.variable ?? name] = value;
  };
  take(compiled.checkPath(input.params), compiled.pathParams);
  take(compiled.checkQuery(input.query), route.query ?? {});
  if (route.headers) {
    const present = Object.fromEntries(Object.keys(route.headers).filter((h) => input.headers[h]).map((h) => [h, input.headers[h]]));
    take(compiled.checkHeaders(present), route.headers);
  }
  if (route.upload) {
    if (input.upload === undefined) issues.push({ field: route.upload.field, message: 'is required', in: 'body' });
    else variables[route.upload.variable] = input.upload;
  }
  if (route.body && compiled.checkBody) {
    const body = compiled.checkBody(input.json);
    if (body.ok) {
      const rename = route.body.rename ?? {};
      variables[route.body.variable] = Object.fromEntries(Object.entries(body.value).map(([k, v]) => [rename[k] ?? k, v]));
    } else issues.push(...body.issues);
  }
  if (issues.length) throw new InvalidRequestError(issues.map((i) => `${i.field}: ${i.message}`).join('; '), issues);
  return variables;
}
