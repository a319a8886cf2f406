import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Context } from 'koa';
import { effectivePermissions } from '../auth/permissions.js';
import type { Door, Principal, RequestContext } from '../context.js';
import { freshEm } from '../db/orm.js';
import { readingLike, type SqlTarget } from '../db/sql.js';
import { UnauthorizedError } from '../errors.js';

/** What every request's context shares. */
export interface ContextDeps {
  orm: MikroORM;
  serverSecret: string;
  search: RequestContext['search'];
  outbound: RequestContext['outbound'];
  memory: RequestContext['memory'];
  live: RequestContext['live'];
  sessions: RequestContext['sessions'];
  activity: RequestContext['activity'];
  documents: RequestContext['documents'];
}

/**
 * The console's GraphQL requests name it (Apollo's client-awareness header), so analytics tell it
 * from a person's other GraphQL clients (the explorer).
 */
export const CONSOLE_CLIENT = 'wks-console';

/**
 * The door of an HTTP request as analytics split them, from what the server knows: the route, then
 * the credential. Only a person's session (the console's sign-in cookie) can be the console: a key,
 * an OAuth grant or the admin token is `graphql` on /graphql whatever its headers say, so no agent
 * can pass its calls off as people's. The header only tells a signed-in person's console from
 * their other GraphQL tools.
 */
function viaOf(ctx: Context, requireCredential: boolean, principal: Principal): Door {
  if (ctx.path === '/mcp') return 'mcp';
  if (requireCredential) return 'rest';
  return principal.kind === 'member' && ctx.get('apollographql-client-name') === CONSOLE_CLIENT ? 'console' : 'graphql';
}

/** Builds a request's context; with `requireCredential` a missing or bad key is the 401. */
export type ContextFactory = (ctx: Context, requireCredential: boolean) => Promise<RequestContext>;

/**
 * One context per request: the principal the authentication middleware resolved, an
 * EntityManager forked only when the request first uses one, and one shared statement
 * EntityManager for single `sql()` statements (it never holds entities or a transaction).
 */
export function contextFactory(deps: ContextDeps): ContextFactory {
  const make = requestContextMaker(deps);
  return (ctx, requireCredential) => {
    const principal = principalOf(ctx) ?? { kind: 'anonymous' };
    if (requireCredential && (principal.kind === 'anonymous' || principal.kind === 'invalid'))
      return Promise.reject(new UnauthorizedError());
    const context = make(
      principal,
      ctx.state.requestId as string,
      requireCredential ? 'rest' : 'graphql',
      () => Promise.resolve(principal),
      viaOf(ctx, requireCredential, principal),
    );
    // A read the replica may serve (see readRouting): its plain reads go there.
    if (ctx.state.readTarget) context.db = ctx.state.readTarget as SqlTarget;
    if (!context.origin) context.origin = `${ctx.protocol}://${ctx.host}`;
    return Promise.resolve(context);
  };
}

/** Builds a request context for a principal: an HTTP request's (contextFactory), or a WebSocket operation's. */
export function requestContextMaker({ orm, serverSecret, search, outbound, memory, live, sessions, activity, documents }: ContextDeps) {
  const statementEm = freshEm(orm);
  return (
    principal: Principal,
    requestId: string,
    door: RequestContext['door'],
    currentPrincipal: RequestContext['currentPrincipal'],
    via: Door = door,
  ): RequestContext => {
    let em: EntityManager | undefined;
    const context: RequestContext = {
      // Created on first use: by then a read the replica may serve has its `db` (see readRouting), and its plain reads go there too.
      get em() {
        return (em ??= readingLike(freshEm(orm), context.db));
      },
      db: statementEm,
      principal,
      requestId,
      serverSecret,
      search,
      outbound,
      memory,
      responseHeaders: {},
      door,
      via,
      activity,
      live,
      currentPrincipal,
      adminActing: new Map(),
      sessions,
      origin: sessions.publicUrl?.replace(/\/$/, '') ?? '',
      documents,
    };
    return context;
  };
}

/** The caller the authentication middleware resolved, if any. */
function principalOf(ctx: Context): Principal | undefined {
  return ctx.state.principal as Principal | undefined;
}

/** The calling agent key's id, once authenticated. */
export function agentKeyIdOf(ctx: Context): string | null {
  const principal = principalOf(ctx);
  return principal?.kind === 'agent' ? principal.keyId : null;
}

/** Effective permissions (key AND role ceiling) of the calling agent, or null when not an agent. */
export function permissionsOf(ctx: Context): ReadonlySet<string> | null {
  const principal = principalOf(ctx);
  return principal?.kind === 'agent' ? effectivePermissions(principal.permissions, principal.role) : null;
}
