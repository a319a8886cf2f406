import type { Middleware } from '../http/middleware.js';
import type { Principal } from '../context.js';
import type { ReadRouter } from '../db/replica.js';

/** Whose writes a read must see: an agent key, the admin token, or nobody (anonymous and invalid callers never write). */
export function callerOf(principal: Principal | undefined): string | null {
  if (!principal) return null;
  if (principal.kind === 'agent') return `key:${principal.keyId}`;
  if (principal.kind === 'admin') return 'admin';
  return null;
}

const READS = new Set(['GET', 'HEAD']);

/**
 * With a read replica (DATABASE_READ_URL): a REST GET or HEAD whose caller may read from the
 * replica gets the replica's statement target (`ctx.state.readTarget`, which the request context
 * takes as its `db`); every other request of an authenticated caller to the API, GraphQL or MCP
 * records the caller's write position once it is answered (see ReadRouter). Runs after
 * authentication.
 */
export function readRouting(router: ReadRouter | null): Middleware {
  return async (ctx, next) => {
    if (!router) return next();
    const api = ctx.path.startsWith('/api/');
    if (!api && ctx.path !== '/graphql' && ctx.path !== '/mcp') return next();
    const caller = callerOf(ctx.state.principal as Principal | undefined);
    if (READS.has(ctx.method)) {
      if (api && (await router.route(caller)) === 'replica') ctx.state.readTarget = router.target;
      return next();
    }
    try {
      await next();
    } finally {
      if (caller) await router.recordWrite(caller);
    }
  };
}
