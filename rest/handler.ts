import type { Context } from 'koa';
import { BODY_LIMITS } from '../src/contract/rules.js';
import { InvalidRequestError } from '../src/errors.js';
import { headerValue } from '../src/http/headerValue.js';
import type { CompiledRoute } from './compile.js';
import { readMultipartFile } from './multipart.js';
import { readText } from '../src/http/body.js';
import { parseJsonText } from '../src/http/json.js';
import { runRoute, type RouteBackend, type RouteBody } from './run.js';

/** What the Koa facade needs from the domain besides running routes: per-request context and caller. */
export interface GraphQLBackend extends RouteBackend {
  /** Builds the GraphQL context for a request; with `requireCredential` it throws the 401 for a missing or bad key. */
  createContext(ctx: Context, requireCredential: boolean): Promise<{ requestId?: string }>;
  /** The calling agent key's id, once authenticated. */
  agentKeyId(ctx: Context): string | null;
}

/** The one Koa handler every route row runs: read the request, run the route, write the answer. */
export function routeHandler(compiled: CompiledRoute, backend: GraphQLBackend) {
  const { route } = compiled;
  // The request headers a route reads: its declared ones and, on writes, Idempotency-Key.
  const readHeaders = [...Object.keys(route.headers ?? {}), ...(route.method !== 'GET' ? ['idempotency-key'] : [])];
  const jsonLimit = route.body?.maxBytes ?? BODY_LIMITS.json;
  return async (ctx: Context & { params?: Record<string, string> }) => {
    const contextValue = await backend.createContext(ctx, true);
    let upload: Awaited<ReturnType<typeof readMultipartFile>> | undefined;
    // Read only after runRoute has authorized the caller.
    const body = async (): Promise<RouteBody> => {
      if (route.upload) upload = await readMultipartFile(ctx, route.upload);
      return { json: route.body ? await readJson(ctx, jsonLimit) : undefined, upload: upload?.value };
    };
    try {
      const headers: Record<string, string | undefined> = {};
      for (const name of readHeaders) {
        const value = ctx.headers[name];
        headers[name] = Array.isArray(value) ? value.join(', ') : value;
      }
      const out = await runRoute(compiled, backend, contextValue, backend.agentKeyId(ctx)!, {
        params: ctx.params ?? {},
        query: ctx.query,
        headers,
        body: route.body || route.upload ? body : undefined,
      });
      ctx.status = out.status;
      for (const [name, value] of Object.entries(out.headers)) ctx.set(name, headerValue(value));
      if (out.nextCursor) ctx.set('Link', `<${nextUrl(ctx, out.nextCursor)}>; rel="next"`);
      if (out.raw !== undefined) {
        ctx.type = 'application/json';
        ctx.body = out.raw;
      } else ctx.body = out.body;
    } finally {
      await upload?.cleanup();
    }
  };
}

/** Reads and parses a JSON body of at most `limit` bytes; every failure is a 400 naming the body. */
async function readJson(
  ctx: Context,
  limit: number = BODY_LIMITS.json,
  tooLarge: (limit: number) => Error = bodyTooLarge,
): Promise<unknown> {
  const type = ctx.get('content-type');
  if (!/^application\/([\w.+-]+\+)?json\b/i.test(type)) {
    throw new InvalidRequestError('The body must be JSON (Content-Type: application/json).', [
      { field: 'body', message: 'Content-Type must be application/json', in: 'body' },
    ]);
  }
  const text = await readText(ctx, limit, tooLarge);
  if (!text.trim()) throw new InvalidRequestError('A JSON body is required.', [{ field: 'body', message: 'is required', in: 'body' }]);
  const parsed = parseJsonText(text);
  if (parsed.ok) return parsed.value;
  throw new InvalidRequestError(`The body ${parsed.message}`, [
    { field: 'body', message: parsed.reason === 'syntax' ? 'is not valid JSON' : parsed.message, in: 'body' },
  ]);
}

function bodyTooLarge(limit: number) {
  return new InvalidRequestError(`The body exceeds ${limit} bytes.`, [
    { field: 'body', message: `must be at most ${limit} bytes`, in: 'body' },
  ]);
}

function nextUrl(ctx: Context, cursor: string): string {
  const params = new URLSearchParams(ctx.querystring);
  params.set('cursor', cursor);
  return `${ctx.path}?${params.toString()}`;
}
