import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { ApolloServer, type BaseContext } from '@apollo/server';
import { ApolloServerPluginLandingPageLocalDefault, ApolloServerPluginLandingPageProductionDefault } from '@apollo/server/plugin/landingPage/default';
import { koaMiddleware } from '@as-integrations/koa';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { GraphQLFormattedError } from 'graphql';
import Koa from 'koa';
import { koaBody } from 'koa-body';
import pino, { type Logger } from 'pino';
import { createRestApi } from '../rest/index.js';
import { ROUTES } from '../rest/routes.js';
import type { DbConnection } from '../mikro-orm.config.js';
import { resolvePrincipal, type Credentials } from './auth/principal.js';
import type { RequestContext } from './context.js';
import { startEmbedded, type EmbeddedDatabase } from './db/embedded.js';
import { migrate, openOrm } from './db/orm.js';
import { classifyError, UnauthorizedError } from './errors.js';
import { buildAppSchema } from './schema.js';
import { loadCredentials } from './services/settings.js';

export const VERSION = '1.0.0';

export interface ServerOptions {
  port?: number;
  host?: string;
  /** A real PostgreSQL; without it the embedded PGlite is used. */
  databaseUrl?: string;
  /** Embedded data directory (kept across restarts); omit with `embeddedDump` for an in-memory copy. */
  dataDir?: string;
  /** Start the embedded database from a `dumpDataDir()` tarball (tests). */
  embeddedDump?: Blob;
  adminToken?: string;
  keyHashSecret?: string;
  logger?: Logger;
  /** Sandbox landing page on GET /graphql (default: not in production). */
  sandbox?: boolean;
}

export interface RunningServer {
  url: string;
  port: number;
  orm: MikroORM;
  logger: Logger;
  openapi: Record<string, unknown>;
  close(): Promise<void>;
}

/** Boots everything: database, migrations, schema, GraphQL, REST; resolves once it listens. */
export async function startServer(options: ServerOptions = {}): Promise<RunningServer> {
  const logger = options.logger ?? pino({ redact: ['req.headers.authorization', '*.authorization', '*.key'] });
  let embedded: EmbeddedDatabase | null = null;
  let connection: DbConnection;
  if (options.databaseUrl) {
    connection = { clientUrl: options.databaseUrl };
  } else {
    embedded = await startEmbedded({ dataDir: options.dataDir, loadDataDir: options.embeddedDump });
    connection = embedded.connection;
  }
  const orm = await openOrm(connection, options.databaseUrl ? 20 : 8);
  try {
    const applied = await migrate(orm, connection, Boolean(options.databaseUrl));
    if (applied.length) logger.info({ migrations: applied }, 'applied migrations');
    const credentials = await loadCredentials(orm.em.fork(), {
      adminToken: options.adminToken,
      keyHashSecret: options.keyHashSecret,
      announceAdminToken: (token) => logger.warn(`ADMIN_TOKEN was not set; generated one (shown once, store it now): ${token}`),
    });
    return await listen(orm, credentials, options, logger, embedded);
  } catch (error) {
    await orm.close();
    await embedded?.close();
    throw error;
  }
}

async function listen(orm: MikroORM, credentials: Credentials, options: ServerOptions, logger: Logger, embedded: EmbeddedDatabase | null): Promise<RunningServer> {
  const schema = await buildAppSchema();

  /** One forked EntityManager and one resolved principal per request, for REST and GraphQL alike. */
  const createContext = async (input: { authorization: string | undefined; requestId: string; requireCredential: boolean }): Promise<RequestContext> => {
    const em = orm.em.fork();
    const principal = await resolvePrincipal(em, credentials, input.authorization);
    if (input.requireCredential && (principal.kind === 'anonymous' || principal.kind === 'invalid')) throw new UnauthorizedError();
    return { em, principal, requestId: input.requestId, serverSecret: credentials.serverSecret };
  };

  const rest = createRestApi({ schema, createContext }, ROUTES, {
    version: VERSION,
    logError: (error, ctx) => logger.error({ err: error, requestId: ctx.state.requestId }, 'request failed'),
  });

  const apollo = new ApolloServer<BaseContext>({
    schema,
    introspection: true,
    plugins: [
      (options.sandbox ?? process.env.NODE_ENV !== 'production')
        ? ApolloServerPluginLandingPageLocalDefault({ embed: true })
        : ApolloServerPluginLandingPageProductionDefault({ footer: false }),
    ],
    formatError: (formatted: GraphQLFormattedError, error: unknown) => {
      const classified = classifyError(error as import('graphql').GraphQLError);
      if (classified.code === 'invalid_request' && formatted.extensions?.code && formatted.extensions.code !== 'BAD_USER_INPUT' && !(error as { originalError?: unknown }).originalError) {
        return formatted; // Apollo's own parse/validation errors keep their codes
      }
      if (classified.unexpected) logger.error({ err: (error as { originalError?: unknown }).originalError ?? error }, 'graphql resolver failed');
      return { message: classified.message, locations: formatted.locations, path: formatted.path, extensions: { code: classified.code, details: classified.details } };
    },
  });
  await apollo.start();

  const app = new Koa();
  app.proxy = false;
  app.use(async (ctx, next) => {
    const incoming = ctx.get('x-request-id');
    ctx.state.requestId = /^[\w.:-]{1,128}$/.test(incoming) ? incoming : randomUUID();
    ctx.set('X-Request-Id', ctx.state.requestId);
    await next();
  });
  app.use(rest.middleware);
  const graphqlBody = koaBody({ jsonLimit: '1mb', multipart: false });
  const graphqlHandler = koaMiddleware(apollo, {
    context: async ({ ctx }) => createContext({ authorization: ctx.get('authorization') || undefined, requestId: ctx.state.requestId, requireCredential: false }),
  });
  app.use(async (ctx, next) => {
    if (ctx.path !== '/graphql') return next();
    await graphqlBody(ctx, async () => {
      await graphqlHandler(ctx, next);
    });
  });
  app.on('error', (error) => logger.error({ err: error }, 'koa error'));

  const server: Server = await new Promise((resolve) => {
    const s = app.listen(options.port ?? 8080, options.host ?? '0.0.0.0', () => resolve(s));
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;
  logger.info({ port, database: embedded ? 'embedded' : 'postgresql' }, `listening on ${url}`);
  return {
    url,
    port,
    orm,
    logger,
    openapi: rest.openapi,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections?.();
      await apollo.stop();
      await orm.close();
      await embedded?.close();
    },
  };
}
