import Router from '@koa/router';
import type { Context, Middleware, Next } from 'koa';
import { compileRoutes, type CompiledRoute } from './compile.js';
import { envelope } from './envelope.js';
import { routeHandler, type GraphQLBackend } from './handler.js';
import { errorOutput } from './run.js';
import { API_PREFIX, buildOpenApi } from './openapi.js';
import type { Route } from './route.js';

export interface RestApi {
  middleware: Middleware;
  /** Renders any error thrown below it on an /api path as the envelope (mount it first). */
  errors: Middleware;
  openapi: Record<string, unknown>;
  routes: CompiledRoute[];
}

export interface RestOptions {
  version: string;
  /** Receives unexpected errors (never shown to the client). */
  logError(error: unknown, ctx: Context): void;
}

/** The Koa facade: every row of the route table mounted under /api/v1 on the one generic handler. */
export function createRestApi(backend: GraphQLBackend, table: Route[], options: RestOptions): RestApi {
  const routes = compileRoutes(backend.schema, table);
  const openapi = buildOpenApi(routes, { version: options.version });
  const openapiJson = JSON.stringify(openapi);
  const router = new Router({ prefix: API_PREFIX });
  router.get('/openapi.json', (ctx) => {
    ctx.type = 'application/json';
    ctx.body = openapiJson;
  });
  for (const compiled of routes) {
    const koaPath = compiled.route.path.replace(/\{(\w+)\}/g, ':$1');
    router.register(koaPath, [compiled.route.method], routeHandler(compiled, backend), { name: compiled.route.name });
  }
  const matchers = routes.map((c) => ({ method: c.route.method, re: new RegExp(`^${API_PREFIX}${c.route.path.replace(/\{\w+\}/g, '[^/]+')}/?$`) }));
  const dispatch = router.routes();

  const middleware: Middleware = async (ctx, next) => {
    if (ctx.path !== API_PREFIX && !ctx.path.startsWith(`${API_PREFIX}/`)) return next();
    try {
      await dispatch(ctx as Parameters<typeof dispatch>[0], noop);
      if (ctx.body === undefined && ctx.status === 404) {
        const allowed = matchers.filter((m) => m.re.test(ctx.path)).map((m) => m.method);
        if (allowed.length) {
          ctx.set('Allow', allowed.join(', '));
          send(ctx, 405, { error: { code: 'method_not_allowed', message: `${ctx.method} is not supported here; use ${allowed.join(', ')}.`, status: 405, details: null } });
        } else {
          const { status, body } = envelope('not_found', `No endpoint ${ctx.method} ${ctx.path}; see ${API_PREFIX}/openapi.json.`);
          send(ctx, status, body);
        }
      }
    } catch (error) {
      renderError(ctx, error, options);
    }
  };
  const errors: Middleware = async (ctx, next) => {
    try {
      await next();
    } catch (error) {
      if (!ctx.path.startsWith('/api/')) throw error;
      renderError(ctx, error, options);
    }
  };
  return { middleware, errors, openapi, routes };
}

const noop = (async () => undefined) as unknown as Next;

function renderError(ctx: Context, error: unknown, options: RestOptions) {
  const out = errorOutput(error, (e) => options.logError(e, ctx));
  for (const [name, value] of Object.entries(out.headers)) ctx.set(name, value);
  send(ctx, out.status, out.body);
}

function send(ctx: Context, status: number, body: unknown) {
  ctx.status = status;
  ctx.body = body;
}
