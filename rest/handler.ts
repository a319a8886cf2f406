import type { Context } from 'koa';
import { InvalidRequestError } from '../src/errors.js';
import type { CompiledRoute } from './compile.js';
import { readUpload } from './multipart.js';
import { runRoute, type RouteBackend } from './run.js';
import type { LocatedIssue } from './validate.js';

/** What the Koa facade needs from the domain besides running routes: per-request context and caller. */
export interface GraphQLBackend extends RouteBackend {
  /** Builds the GraphQL context for a request; with `requireCredential` it throws the 401 for a missing or bad key. */
  createContext(ctx: Context, requireCredential: boolean): Promise<{ requestId?: string }>;
  /** The calling agent key's id, once authenticated. */
  agentKeyId(ctx: Context): string | null;
}

export const JSON_BODY_LIMIT = 1024 * 1024;

/** The one Koa handler every route row runs: read the request, run the route, write the answer. */
export function routeHandler(compiled: CompiledRoute, backend: GraphQLBackend) {
  const { route } = compiled;
  // The request headers a route reads: its declared ones and, on writes, Idempotency-Key.
  const readHeaders = [...Object.keys(route.headers ?? {}), ...(route.method !== 'GET' ? ['idempotency-key'] : [])];
  return async (ctx: Context & { params?: Record<string, string> }) => {
    const contextValue = await backend.createContext(ctx, true);
    const json = route.body ? await readJson(ctx) : undefined;
    const upload = route.upload ? await readUpload(ctx, route.upload) : undefined;
    try {
      const headers: Record<string, string | undefined> = {};
      for (const name of readHeaders) {
        const value = ctx.headers[name];
        headers[name] = Array.isArray(value) ? value.join(', ') : value;
      }
      const out = await runRoute(compiled, backend, contextValue, backend.agentKeyId(ctx)!, { params: ctx.params ?? {}, query: ctx.query, headers, json, upload: upload?.value });
      ctx.status = out.status;
      for (const [name, value] of Object.entries(out.headers)) ctx.set(name, value);
      if (out.nextCursor) ctx.set('Link', `<${nextUrl(ctx, out.nextCursor)}>; rel="next"`);
      ctx.body = out.body;
    } finally {
      await upload?.cleanup();
    }
  };
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
