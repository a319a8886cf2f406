import { createHash } from 'node:crypto';
import { GraphQLError, type GraphQLSchema } from 'graphql';
import { ConflictError, InvalidRequestError, NotModifiedError } from '../src/errors.js';
import { etagMatches } from '../src/etag.js';
import type { IdempotencyStore } from '../src/services/idempotency.js';
import type { SqlTarget } from '../src/db/sql.js';
import type { AnswerCache } from './answerCache.js';
import type { CompiledRoute } from './compile.js';
import { variableOf, type HeaderDef, type ParamDef } from './routeDefinition.js';
import { errorAnswer } from '../src/http/envelope.js';
import type { LocatedIssue } from './validate.js';

/** A request to one route, independent of the transport (REST over Koa, or an agent tool call). */
export interface RouteInput {
  params: Record<string, string>;
  query: Record<string, unknown>;
  /** Lower-case header names. */
  headers: Record<string, string | undefined>;
  /**
   * Reads the body: the parsed JSON (routes with a body) or the file (routes with an upload: a
   * graphql-upload `Upload` carrying a `digest`). Called only once the caller is authorized, so
   * a refused request never streams its body in.
   */
  body?: () => Promise<RouteBody>;
}

export interface RouteBody {
  json?: unknown;
  upload?: unknown;
}

/** What the route answered: status, body (the bare array for lists), headers, the next cursor and a list's other fields. */
export interface RouteOutput {
  status: number;
  body: unknown;
  /** `body` already serialised (a conditional route's answer), when it is. */
  raw?: string;
  headers: Record<string, string>;
  nextCursor: string | null;
  /** A list's fields beside its items and cursor (REST sends some as headers; agent tools answer them all). */
  extra?: Record<string, unknown>;
}

/** What the facade needs from the domain: the schema and a per-request context (no entities). */
export interface RouteBackend {
  schema: GraphQLSchema;
  idempotency: IdempotencyStore;
  /** Answers of conditional routes, served again once the service confirms their ETag (see AnswerCache). */
  answers?: AnswerCache;
  /** Authentication, two-factor, workspace and permissions for the route, decided before its body is read (throws the envelope's error). */
  authorize(contextValue: unknown, workspace: string, permissions: readonly string[]): Promise<void>;
  /** Receives unexpected errors (never shown to the client). */
  logError(error: unknown, requestId: string | undefined): void;
  /**
   * Runs `work` in one database transaction that the request's statements join (it receives the
   * transaction, for the Idempotency-Key's record): committed when `work` says so. Absent on the
   * embedded database, where a request holding a transaction open would stall every other one.
   */
  atomically?<T>(contextValue: unknown, work: (tx: SqlTarget) => Promise<{ value: T; commit: boolean }>): Promise<T>;
}

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/**
 * Runs one route, in the order every door shares: the URL's parameters are validated, then the
 * caller is authorized for the route (key, two-factor, workspace, permissions), then the body is
 * read and validated, then the Idempotency-Key is claimed (a replay is served only to a caller
 * who passed the same checks), then the pre-validated document runs in-process on the schema.
 * Domain and validation errors become envelopes here; nothing is thrown.
 */
export async function runRoute(
  compiled: CompiledRoute,
  backend: RouteBackend,
  contextValue: { requestId?: string; responseHeaders?: Record<string, string> },
  agentKeyId: string,
  input: RouteInput,
): Promise<RouteOutput> {
  const { route } = compiled;
  let claim: { id: number } | null = null;
  let output: RouteOutput;
  try {
    const variables = urlVariables(compiled, input);
    await backend.authorize(contextValue, input.params.workspace ?? '-', compiled.permissions);
    Object.assign(variables, bodyVariables(compiled, (await input.body?.()) ?? {}));
    const key = route.method !== 'GET' ? input.headers['idempotency-key'] : undefined;
    // Checked before anything reads or locks by it (MCP passes it as an argument, which may hold any character).
    if (key) assertIdempotencyKey(key);
    if (key && backend.atomically) {
      const keyed = { agentKeyId, workspace: input.params.workspace ?? '', key };
      return await backend.atomically(contextValue, (tx) => runKeyed(compiled, backend, contextValue, keyed, variables, tx));
    }
    if (key) {
      const start = await claimKey(backend, compiled, agentKeyId, input.params.workspace ?? '', key, variables);
      if (start.kind === 'replay') return start.output;
      claim = start;
    }
    const conditional = route.keepAnswers ? route.headers?.['if-none-match'] : undefined;
    output =
      conditional && backend.answers
        ? await runConditional(compiled, backend.answers, contextValue, agentKeyId, variables, conditional.variable)
        : await execute(compiled, contextValue, variables);
  } catch (error) {
    output = errorOutput(error, (e) => backend.logError(e, contextValue.requestId));
  }
  if (claim) {
    // Answers that a retry might change are not kept: the client may try again with the same key.
    if (!kept(output)) await backend.idempotency.abandon(claim.id);
    else await backend.idempotency.complete(claim.id, output.status, output.body, storedHeaders(output));
  }
  return output;
}

/**
 * A request with an Idempotency-Key inside the request's transaction `tx`: the key's lock, its
 * claim (or the answer to replay), the route's writes and the stored answer commit together.
 * Answers that are not kept (5xx, 429, 409) roll everything back, claim included, so a retry runs
 * afresh; a COMMIT left without an answer (a failover) is a 503, and the retry finds the answer or nothing.
 */
async function runKeyed(
  compiled: CompiledRoute,
  backend: RouteBackend,
  contextValue: { requestId?: string; responseHeaders?: Record<string, string> },
  keyed: { agentKeyId: string; workspace: string; key: string },
  variables: Record<string, unknown>,
  tx: SqlTarget,
): Promise<{ value: RouteOutput; commit: boolean }> {
  if (!(await backend.idempotency.lock(tx, keyed.agentKeyId, keyed.workspace, keyed.key))) throw stillRunning(keyed.key);
  const start = await claimKey(backend, compiled, keyed.agentKeyId, keyed.workspace, keyed.key, variables, tx);
  if (start.kind === 'replay') return { value: start.output, commit: false };
  let output: RouteOutput;
  try {
    output = await execute(compiled, contextValue, variables);
  } catch (error) {
    output = errorOutput(error, (e) => backend.logError(e, contextValue.requestId));
  }
  if (!kept(output)) return { value: output, commit: false };
  await backend.idempotency.complete(start.id, output.status, output.body, storedHeaders(output), tx);
  return { value: output, commit: true };
}

/** Whether an answer is stored for retries: not one a retry might change (5xx, 429, 409), which the client may try again. */
function kept(output: RouteOutput): boolean {
  return !(output.status >= 500 || output.status === 429 || output.status === 409);
}

/** The headers stored with an answer, the next cursor among them. */
function storedHeaders(output: RouteOutput): Record<string, string> {
  return { ...output.headers, ...(output.nextCursor ? { 'x-next-cursor': output.nextCursor } : {}) };
}

function stillRunning(key: string): ConflictError {
  return new ConflictError('A request with this Idempotency-Key is still being processed; retry shortly.', {
    idempotencyKey: key,
    retryAfter: 1,
  });
}

/** Runs the route's document and shapes its result: the body (a list route's items), its headers and the next cursor. */
async function execute(
  compiled: CompiledRoute,
  contextValue: { responseHeaders?: Record<string, string> },
  variables: Record<string, unknown>,
): Promise<RouteOutput> {
  const { route, op } = compiled;
  const result = await compiled.run(contextValue, variables);
  if (result.errors?.length) throw result.errors[0];
  const data = (result.data as Record<string, unknown>)[op.rootField] as Record<string, unknown>;
  for (const field of route.omitWhenNull ?? []) if (data?.[field] === null) delete data[field];
  const headers: Record<string, string> = {};
  for (const [name, header] of Object.entries(route.responseHeaders ?? {})) {
    const value = header.value ? header.value(data) : (contextValue.responseHeaders?.[name] ?? null);
    if (value !== null) headers[name] = value;
  }
  if (!route.list) return { status: route.status, body: data, headers, nextCursor: null };
  const { items, nextCursor, ...extra } = data;
  return { status: route.status, body: items, headers, nextCursor: (nextCursor as string | null) ?? null, extra };
}

/**
 * A conditional route (one that reads If-None-Match): the ETag of this caller's last answer to
 * the same request is sent along with the client's own, so an unchanged answer costs the service
 * only its ETag check. The service's `not_modified` then means a 304 when the client's tag is
 * current, else the kept answer, sent again as serialised; a new answer is kept with its ETag.
 */
async function runConditional(
  compiled: CompiledRoute,
  answers: AnswerCache,
  contextValue: { responseHeaders?: Record<string, string> },
  agentKeyId: string,
  variables: Record<string, unknown>,
  variable: string,
): Promise<RouteOutput> {
  const { [variable]: clientTags, ...request } = variables;
  const key = `${compiled.route.name}\n${agentKeyId}\n${stableStringify(request)}`;
  const kept = answers.get(key);
  const sent = [clientTags, kept?.etag].filter(Boolean).join(', ');
  try {
    const output = await execute(compiled, contextValue, sent ? { ...request, [variable]: sent } : request);
    const etag = output.headers.ETag;
    if (!etag) return output;
    const raw = JSON.stringify(output.body);
    answers.set(key, { etag, body: output.body, raw, nextCursor: output.nextCursor });
    return { ...output, raw };
  } catch (error) {
    const current = error instanceof GraphQLError && error.originalError instanceof NotModifiedError ? error.originalError.etag : null;
    const clientHasIt = typeof clientTags === 'string' && current !== null && etagMatches(clientTags, current);
    if (!kept || current !== kept.etag || clientHasIt) throw error;
    return { status: compiled.route.status, body: kept.body, raw: kept.raw, headers: { ETag: kept.etag }, nextCursor: kept.nextCursor };
  }
}

/** Any error as an envelope answer (see errorAnswer); unexpected ones are logged and hidden. */
export function errorOutput(error: unknown, log: (error: unknown) => void): RouteOutput {
  return { ...errorAnswer(error, log), nextCursor: null };
}

async function claimKey(
  backend: RouteBackend,
  compiled: CompiledRoute,
  agentKeyId: string,
  workspace: string,
  key: string,
  variables: Record<string, unknown>,
  tx?: SqlTarget,
): Promise<{ kind: 'replay'; output: RouteOutput } | { kind: 'new'; id: number }> {
  const hash = createHash('sha256')
    .update(`${compiled.route.name}\n${stableStringify(variables)}`)
    .digest('hex');
  const start = await backend.idempotency.begin(agentKeyId, workspace, key, hash, tx);
  if (start.kind === 'mismatch')
    throw new ConflictError('This Idempotency-Key was already used with a different request; use a new key for a new request.', {
      idempotencyKey: key,
    });
  if (start.kind === 'in_progress') throw stillRunning(key);
  if (start.kind === 'replay') {
    const { 'x-next-cursor': next, ...headers } = start.headers;
    return {
      kind: 'replay',
      output: { status: start.status, body: start.body, headers: { ...headers, 'Idempotent-Replayed': 'true' }, nextCursor: next ?? null },
    };
  }
  return start;
}

/** JSON with sorted keys; uploads are represented by their digest. */
function stableStringify(value: unknown): string {
  if (value && typeof value === 'object' && typeof (value as { digest?: unknown }).digest === 'string')
    return JSON.stringify((value as { digest: string }).digest);
  if (Array.isArray(value)) return `[${value.map(stableStringify).join(',')}]`;
  if (value && typeof value === 'object')
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableStringify((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(value) ?? 'null';
}

/** Variables from the path, query and headers, or a 400 naming every bad one. */
function urlVariables(compiled: CompiledRoute, input: RouteInput): Record<string, unknown> {
  const { route } = compiled;
  const issues: LocatedIssue[] = [];
  const variables: Record<string, unknown> = {};
  const take = (result: ReturnType<CompiledRoute['checkPath']>, defs: Record<string, ParamDef | HeaderDef>) => {
    if (!result.ok) return issues.push(...result.issues);
    for (const [name, value] of Object.entries(result.value)) variables[defs[name] ? variableOf(name, defs[name]) : name] = value;
  };
  take(compiled.checkPath(input.params), compiled.pathParams);
  take(compiled.checkQuery(input.query), route.query ?? {});
  if (route.headers) {
    const present = Object.fromEntries(
      Object.keys(route.headers)
        .filter((h) => input.headers[h])
        .map((h) => [h, input.headers[h]]),
    );
    take(compiled.checkHeaders(present), route.headers);
  }
  throwIssues(issues);
  return variables;
}

/** Variables from the JSON body or the upload, or a 400 naming every bad field. */
function bodyVariables(compiled: CompiledRoute, body: RouteBody): Record<string, unknown> {
  const { route } = compiled;
  const issues: LocatedIssue[] = [];
  const variables: Record<string, unknown> = {};
  if (route.upload) {
    if (body.upload === undefined) issues.push({ field: route.upload.field, message: 'is required', in: 'body' });
    else variables[route.upload.variable] = body.upload;
  }
  if (route.body && compiled.checkBody) {
    const checked = compiled.checkBody(body.json);
    if (checked.ok) {
      const rename = route.body.rename;
      variables[route.body.variable] = rename
        ? Object.fromEntries(Object.entries(checked.value).map(([k, v]) => [rename[k] ?? k, v]))
        : checked.value;
    } else issues.push(...checked.issues);
  }
  throwIssues(issues);
  return variables;
}

function throwIssues(issues: LocatedIssue[]): void {
  if (issues.length) throw new InvalidRequestError(issues.map((i) => `${i.field}: ${i.message}`).join('; '), issues);
}

/** A 400 unless `key` is 1 to 255 printable ASCII characters. */
function assertIdempotencyKey(key: string): void {
  if (!IDEMPOTENCY_KEY.test(key))
    throw new InvalidRequestError('Idempotency-Key must be 1 to 255 printable ASCII characters.', [
      { field: 'Idempotency-Key', message: 'must be 1 to 255 printable ASCII characters', in: 'header' },
    ]);
}
