import { execute, type GraphQLSchema } from 'graphql';
import type { Context } from 'koa';
import { createHash } from 'node:crypto';
import { ConflictError, InvalidRequestError } from '../src/errors.js';
import type { IdempotencyStore } from '../src/services/idempotency.js';
import type { CompiledRoute } from './compile.js';
import { readUpload } from './multipart.js';
import type { LocatedIssue } from './validate.js';

/** What the facade needs from the domain: the schema and a per-request context (no entities). */
export interface GraphQLBackend {
  schema: GraphQLSchema;
  /** Builds the GraphQL context for a request; with `requireCredential` it throws the 401 for a missing or bad key. */
  createContext(ctx: Context, requireCredential: boolean): Promise<unknown>;
  /** The calling agent key's id (for Idempotency-Key scoping), once authenticated. */
  agentKeyId(ctx: Context): string | null;
  idempotency: IdempotencyStore;
}

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;
/** Response headers a replay repeats. */
const REPLAYED_HEADERS = ['etag', 'link', 'x-search-ranking', 'x-search-fallback'];

export const JSON_BODY_LIMIT = 1024 * 1024;

/** The one handler every route row runs: validate, build variables, execute in-process, respond. */
export function routeHandler(compiled: CompiledRoute, backend: GraphQLBackend) {
  const { route, op } = compiled;
  return async (ctx: Context & { params?: Record<string, string> }) => {
    const contextValue = await backend.createContext(ctx, true);
    const cleanups: (() => Promise<void>)[] = [];
    let result;
    try {
      const variables = await buildVariables(compiled, ctx, cleanups);
      if (route.method !== 'GET' && ctx.get('idempotency-key')) {
        const replayed = await claimIdempotency(ctx, backend, compiled, variables);
        if (replayed) return;
      }
      result = await execute({ schema: backend.schema, document: op.document, variableValues: variables, contextValue });
    } finally {
      for (const cleanup of cleanups) await cleanup();
    }
    if (result.errors?.length) throw result.errors[0];
    const data = (result.data as Record<string, unknown>)[op.rootField] as Record<string, unknown>;
    ctx.status = route.status;
    for (const [name, header] of Object.entries(route.responseHeaders ?? {})) {
      const value = header.value(data);
      if (value !== null) ctx.set(name, value);
    }
    if (route.list) {
      const next = data.nextCursor as string | null;
      if (next) ctx.set('Link', `<${nextUrl(ctx, next)}>; rel="next"`);
      ctx.body = data.items;
    } else {
      ctx.body = data;
    }
  };
}

/**
 * Claims the request's Idempotency-Key before executing: answers a replay (true) or a 409, or
 * leaves a claim in ctx.state for the REST middleware to complete with the final answer.
 */
async function claimIdempotency(ctx: Context, backend: GraphQLBackend, compiled: CompiledRoute, variables: Record<string, unknown>): Promise<boolean> {
  const key = ctx.get('idempotency-key');
  if (!IDEMPOTENCY_KEY.test(key)) {
    throw new InvalidRequestError('Idempotency-Key must be 1 to 255 printable ASCII characters.', [{ field: 'Idempotency-Key', message: 'must be 1 to 255 printable ASCII characters', in: 'header' } as LocatedIssue]);
  }
  const agentKeyId = backend.agentKeyId(ctx)!;
  const hash = createHash('sha256').update(`${compiled.route.name}\n${stableStringify(variables)}`).digest('hex');
  const start = await backend.idempotency.begin(agentKeyId, String(ctx.params?.workspace ?? ''), key, hash);
  if (start.kind === 'mismatch') throw new ConflictError('This Idempotency-Key was already used with a different request; use a new key for a new request.', { idempotencyKey: key });
  if (start.kind === 'in_progress') {
    ctx.set('Retry-After', '1');
    throw new ConflictError('A request with this Idempotency-Key is still being processed; retry shortly.', { idempotencyKey: key });
  }
  if (start.kind === 'replay') {
    for (const [name, value] of Object.entries(start.headers)) ctx.set(name, value);
    ctx.set('Idempotent-Replayed', 'true');
    ctx.status = start.status;
    ctx.body = start.body;
    return true;
  }
  ctx.state.idempotency = {
    complete: async () => {
      const status = ctx.status;
      // Answers that a retry might change are not kept: the client may try again.
      if (status >= 500 || status === 429 || status === 409) return backend.idempotency.abandon(start.id);
      const headers = Object.fromEntries(REPLAYED_HEADERS.map((h) => [h, ctx.response.get(h)]).filter(([, v]) => v));
      return backend.idempotency.complete(start.id, status, ctx.body, headers);
    },
  };
  return false;
}

/** JSON with sorted keys; uploads are represented by their digest. */
function stableStringify(value: unknown): string {
  if (value && typeof value === 'object' && 'digest' in (value as object) && typeof (value as { digest: unknown }).digest === 'string') return JSON.stringify((value as { digest: string }).digest);
  if (Array.isArray(value)) return `[${value.map(stableStringify).join(',')}]`;
  if (value && typeof value === 'object') return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${stableStringify((value as Record<string, unknown>)[k])}`).join(',')}}`;
  return JSON.stringify(value) ?? 'null';
}

async function buildVariables(compiled: CompiledRoute, ctx: Context & { params?: Record<string, string> }, cleanups: (() => Promise<void>)[]): Promise<Record<string, unknown>> {
  const { route } = compiled;
  const issues: LocatedIssue[] = [];
  const variables: Record<string, unknown> = {};
  const path = compiled.checkPath(ctx.params ?? {});
  if (path.ok) assign(variables, path.value, compiled.pathParams);
  else issues.push(...path.issues);
  const query = compiled.checkQuery(ctx.query);
  if (query.ok) assign(variables, query.value, route.query ?? {});
  else issues.push(...query.issues);
  if (route.headers) {
    const values = Object.fromEntries(Object.keys(route.headers).filter((h) => ctx.get(h) !== '').map((h) => [h, ctx.get(h)]));
    const headers = compiled.checkHeaders(values);
    if (headers.ok) assign(variables, headers.value, route.headers);
    else issues.push(...headers.issues);
  }
  if (route.upload && !issues.length) {
    const upload = await readUpload(ctx, route.upload);
    cleanups.push(upload.cleanup);
    variables[route.upload.variable] = upload.value;
  }
  if (route.body && compiled.checkBody) {
    const raw = await readJson(ctx);
    const body = compiled.checkBody(raw);
    if (body.ok) {
      const rename = route.body.rename ?? {};
      variables[route.body.variable] = Object.fromEntries(Object.entries(body.value).map(([k, v]) => [rename[k] ?? k, v]));
    } else issues.push(...body.issues);
  }
  if (issues.length) throw new InvalidRequestError(issues.map((i) => `${i.field}: ${i.message}`).join('; '), issues);
  return variables;
}

function assign(variables: Record<string, unknown>, values: Record<string, unknown>, defs: Record<string, { variable?: string }>) {
  for (const [name, value] of Object.entries(values)) variables[defs[name]?.variable ?? name] = value;
}

/** Reads and parses a JSON body of at most 1 MiB; every failure is a 400 naming the body. */
export async function readJson(ctx: Context): Promise<unknown> {
  const type = ctx.get('content-type');
  if (!/^application\/([\w.+-]+\+)?json\b/i.test(type)) {
    throw new InvalidRequestError('The body must be JSON (Content-Type: application/json).', [{ field: 'body', message: 'Content-Type must be application/json', in: 'body' } as LocatedIssue]);
  }
  const declared = Number(ctx.get('content-length') || 0);
  if (declared > JSON_BODY_LIMIT) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req) {
    size += (chunk as Buffer).length;
    if (size > JSON_BODY_LIMIT) throw tooLarge();
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (!text.trim()) throw new InvalidRequestError('A JSON body is required.', [{ field: 'body', message: 'is required', in: 'body' } as LocatedIssue]);
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new InvalidRequestError(`The body is not valid JSON: ${(error as Error).message}`, [{ field: 'body', message: 'is not valid JSON', in: 'body' } as LocatedIssue]);
  }
}

function tooLarge() {
  return new InvalidRequestError(`The body exceeds ${JSON_BODY_LIMIT} bytes.`, [{ field: 'body', message: `must be at most ${JSON_BODY_LIMIT} bytes`, in: 'body' } as LocatedIssue]);
}

function nextUrl(ctx: Context, cursor: string): string {
  const params = new URLSearchParams(ctx.querystring);
  params.set('cursor', cursor);
  return `${ctx.path}?${params.toString()}`;
}
