import type { Context } from 'koa';
import type { Middleware } from '../http/middleware.js';
import type { Principal } from '../context.js';
import type { ReadRouter } from './readRouter.js';
import type { SqlTarget, StatementTally } from '../db/sql.js';
import type { ReadRoute } from './readRouter.js';

/**
 * Whose writes a read must see: an agent key (or OAuth grant), a signed-in member (their session's
 * GraphQL and console requests), the admin token, or nobody (anonymous and invalid callers never write).
 */
export function callerOf(principal: Principal | undefined): string | null {
  if (!principal) return null;
  if (principal.kind === 'agent') return `key:${principal.keyId}`;
  if (principal.kind === 'member') return `member:${principal.memberId}`;
  if (principal.kind === 'admin') return 'admin';
  return null;
}

const READS = new Set(['GET', 'HEAD']);

/** What readRouting leaves a door that learns from the body whether a request only reads (GraphQL, MCP). */
interface BodyRouting {
  /** The request only reads: route it like a REST GET, and record no write for it. */
  asRead(): Promise<void>;
  /** Records the caller's write now rather than once the request is answered (for a door that writes its answer itself). */
  recordWrite(): Promise<void>;
}

/**
 * With a read replica (DATABASE_READ_URL), for `/api/*`, `/graphql` and `/mcp`:
 * - a REST GET or HEAD whose caller may read from the replica gets the replica's statement target
 *   (`ctx.state.readTarget`, which the request context takes as its `db`);
 * - on `/graphql` and `/mcp`, whose bodies say whether they read, the door calls `routeAsRead`
 *   once it knows (a GraphQL query; MCP messages that only read), which routes the request the same way;
 * - every other request of an authenticated caller records the caller's write position once it
 *   is answered (see ReadRouter); a GET or HEAD never does (Apollo runs no mutation over GET).
 * Runs after authentication.
 */
export function readRouting(router: ReadRouter | null): Middleware {
  return async (ctx, next) => {
    if (!router) return next();
    const api = ctx.path.startsWith('/api/');
    if (!api && ctx.path !== '/graphql' && ctx.path !== '/mcp') return next();
    const caller = callerOf(ctx.state.principal as Principal | undefined);
    let decided: ReadRoute | null = null;
    let tally: StatementTally | null = null;
    const route = async () => {
      decided = await router.route(caller);
      if (decided !== 'replica') return;
      const routed = router.requestTarget();
      tally = routed.tally;
      ctx.state.readTarget = routed.target;
    };
    // Counted once answered, by where its statements really went: a request routed to the replica that wrote on the primary says so.
    const count = () => {
      if (decided) router.count(decided === 'replica' && tally!.primary > 0 ? 'primary_write' : decided);
    };
    if (api && READS.has(ctx.method)) {
      await route();
      try {
        return await next();
      } finally {
        count();
      }
    }
    let routed = false;
    let recorded = READS.has(ctx.method) || !caller; // nothing to record: a GET or HEAD, or no caller
    const routing: BodyRouting = {
      async asRead() {
        if (routed) return;
        routed = true;
        recorded = true; // a read records no write
        await route();
      },
      async recordWrite() {
        if (recorded) return;
        await router.recordWrite(caller!);
        recorded = true; // only once it is recorded: after a failure, the request's end tries again
      },
    };
    ctx.state.bodyRouting = routing;
    try {
      await next();
    } finally {
      count();
      await routing.recordWrite();
    }
  };
}

/**
 * Called by a door once it knows its request only reads (a GraphQL query, MCP messages that only
 * read): the request is routed like a REST GET and records no write. Answers the replica's
 * statement target when its reads may go there (also left in `ctx.state.readTarget`), else undefined.
 */
export async function routeAsRead(ctx: Context): Promise<SqlTarget | undefined> {
  await (ctx.state.bodyRouting as BodyRouting | undefined)?.asRead();
  return ctx.state.readTarget as SqlTarget | undefined;
}

/**
 * Records the caller's write at once, for a door that sends its answer itself before the request
 * unwinds (MCP): the caller's next read must already see it. Later calls (and the one readRouting
 * makes once the request is answered) record nothing more.
 */
export async function recordWriteNow(ctx: Context): Promise<void> {
  await (ctx.state.bodyRouting as BodyRouting | undefined)?.recordWrite();
}
