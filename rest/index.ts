import Router from '@koa/router';
import type { Context, Next } from 'koa';
import { DomainError } from '../src/errors.js';
import { compileRoutes, type CompiledRoute } from './compile.js';
import { routeHandler, type GraphQLBackend } from './handler.js';
import { buildLlmsTxt, type LlmsAbout } from './llms.js';
import { API_PREFIX, buildOpenApi } from './openapi.js';
import type { Route } from './routeDefinition.js';
import type { Middleware } from '../src/http/middleware.js';

export interface RestApi {
  middleware: Middleware;
  openapi: Record<string, unknown>;
  routes: CompiledRoute[];
}

/** What the facade asks of the service besides running routes. */
export interface RestOptions {
  /**
   * The guidance of the workspace of the caller /llms.txt was asked by (a key sent with it), shown
   * at its end; null for an anonymous caller, an org-wide key, or a workspace without guidance.
   * Throws the 401 for a key that is not valid.
   */
  guidanceOf?(ctx: Context): Promise<string | null>;
}

/**
 * The Koa facade: every row of the route table mounted under /api/v1 on the one generic handler,
 * and the OpenAPI document generated from the same rows. An unknown path is a 404, a known path
 * with another method a 405 with `Allow` (the router's own answer); both are thrown, so the error
 * middleware renders them like every other error.
 */
export function createRestApi(
  backend: GraphQLBackend,
  table: Route[],
  version: string,
  about: Omit<LlmsAbout, 'version'> = {},
  options: RestOptions = {},
): RestApi {
  const routes = compileRoutes(backend.schema, table);
  const openapi = buildOpenApi(routes, { version });
  const openapiJson = JSON.stringify(openapi);
  const llmsTxt = buildLlmsTxt(routes, { ...about, version });
  const router = new Router({ prefix: API_PREFIX });
  router.get('/openapi.json', (ctx) => {
    ctx.type = 'application/json';
    ctx.body = openapiJson;
  });
  for (const compiled of routes) {
    const koaPath = compiled.route.path.replace(/\{(\w+)\}/g, ':$1');
    router.register(koaPath, [compiled.route.method], routeHandler(compiled, backend), { name: compiled.route.name });
  }
  const dispatch = router.routes();
  const allowed = router.allowedMethods();
  const direct = directDispatch(router);
  const middleware: Middleware = async (ctx, next) => {
    if (ctx.path === '/llms.txt' && (ctx.method === 'GET' || ctx.method === 'HEAD')) {
      ctx.type = 'text/markdown; charset=utf-8';
      // The answer depends on the key sent (its workspace's guidance): no shared cache may keep a keyed one, or serve one for another.
      ctx.vary('Authorization');
      if (ctx.get('authorization')) ctx.set('Cache-Control', 'private');
      const guidance = await options.guidanceOf?.(ctx);
      ctx.body = guidance ? `${llmsTxt}\n## Guidance for your workspace\n\n${guidance}\n` : llmsTxt;
      return;
    }
    if (ctx.path !== API_PREFIX && !ctx.path.startsWith(`${API_PREFIX}/`)) return next();
    if (await direct(ctx)) return;
    await dispatch(ctx as Parameters<typeof dispatch>[0], () => allowed(ctx as Parameters<typeof allowed>[0], noop) as Promise<void>);
    if (ctx.body !== undefined) return;
    if (ctx.status === 405 || ctx.status === 501) {
      // HEAD is implied by GET; the answer lists the methods the endpoints declare.
      const methods = ctx.response
        .get('Allow')
        .split(', ')
        .filter((m) => m !== 'HEAD')
        .join(', ');
      throw new DomainError('method_not_allowed', `${ctx.method} is not supported here; use ${methods}.`, null, { Allow: methods });
    }
    throw new DomainError('not_found', `No endpoint ${ctx.method} ${ctx.path}; see ${API_PREFIX}/openapi.json.`);
  };
  return { middleware, openapi, routes };
}

const noop: Next = () => Promise.resolve();

/** What `directDispatch` reads of @koa/router's layers (its own matching: the same regular expressions, methods and decoding). */
interface RouterLayer {
  name?: string;
  methods: string[];
  regexp: RegExp;
  stack: ((ctx: Context, next: Next) => unknown)[];
  params(path: string, captures: string[], existing?: Record<string, string>): Record<string, string>;
}

/**
 * The router's common case without its per-request machinery: the first route whose path and
 * method match runs its handler directly, with the same parameters and the route's name for the
 * metrics, where the router would build and compose a middleware chain per request (a handler
 * never calls `next`, so only the first match ever ran). Resolves false when no route matches
 * both, so the router itself answers the 404, 405, 501 and OPTIONS cases as before.
 */
function directDispatch(router: Router): (ctx: Context) => Promise<boolean> {
  const layers = router.stack as unknown as RouterLayer[];
  for (const layer of layers) {
    if (layer.stack.length !== 1 || layer.regexp.global || layer.regexp.sticky)
      throw new Error('directDispatch expects one handler per route and stateless path expressions');
  }
  return async (ctx) => {
    const path = ctx.path;
    const method = ctx.method;
    for (const layer of layers) {
      if (!layer.methods.includes(method)) continue;
      const match = layer.regexp.exec(path);
      if (!match) continue;
      ctx.params = layer.params(path, match.slice(1), ctx.params as Record<string, string> | undefined);
      (ctx as unknown as { _matchedRouteName?: string })._matchedRouteName = layer.name;
      await layer.stack[0](ctx, noop);
      return true;
    }
    return false;
  };
}
