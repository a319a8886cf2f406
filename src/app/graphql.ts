import { ApolloServer, type ApolloServerPlugin, type BaseContext } from '@apollo/server';
import { ApolloServerPluginCacheControlDisabled, ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { OperationTypeNode, type GraphQLError, type GraphQLFormattedError, type GraphQLSchema } from 'graphql';
import { graphqlUploadKoa } from 'graphql-upload-minimal';
import type { Context } from 'koa';
import type { Logger } from 'pino';
import { errorAnswer } from '../http/envelope.js';
import { UPLOAD_LIMITS } from '../contract/rules.js';
import type { RequestContext } from '../context.js';
import { readingLike } from '../db/sql.js';
import { classifyError } from '../errors.js';
import type { RateLimiter } from '../rateLimit.js';
import type { ContextFactory } from './context.js';
import { answerWithApollo } from './apolloKoa.js';
import { armor, graphqlJsonBody, rootFieldRateLimit } from './graphqlLimits.js';
import { routeAsRead } from './readRouting.js';
import type { Middleware } from '../http/middleware.js';

interface GraphQLOptions {
  schema: GraphQLSchema;
  limiter: RateLimiter;
  logger: Logger;
  createContext: ContextFactory;
}

/**
 * The Koa request of a GraphQL context (a symbol-keyed property: Apollo runs each operation on a
 * shallow copy of the context it was given, which keeps it).
 */
const KOA_REQUEST = Symbol('koa request');

/**
 * `/graphql`: Apollo Server on the shared schema, with its limits (armor, one rate-limit charge per
 * root field), errors coded like REST's, GraphQL multipart uploads, and JSON bodies read within
 * the JSON body limit. Resolves with the Koa middleware and a stop function.
 */
export async function createGraphQL(options: GraphQLOptions): Promise<{ middleware: Middleware; stop(): Promise<void> }> {
  const limits = armor();
  const apollo = new ApolloServer<BaseContext>({
    schema: options.schema,
    introspection: true,
    allowBatchedHttpRequests: false,
    validationRules: limits.validationRules,
    plugins: [
      rootFieldRateLimit(options.limiter) as ApolloServerPlugin<BaseContext>,
      httpFromContext(),
      queriesRead(),
      // No cache hints are used; without this plugin Apollo wraps every field resolver of the shared
      // schema (which REST executes too).
      ApolloServerPluginCacheControlDisabled(),
      ...limits.plugins,
      // The explorers' pages are the service's own (explorer.ts, served before this middleware), never Apollo's from its CDN.
      ApolloServerPluginLandingPageDisabled(),
    ],
    formatError: (formatted, error) => formatError(formatted, error, options.logger),
  });
  await apollo.start();
  const context = async (ctx: Context) => Object.assign(await options.createContext(ctx, false), { [KOA_REQUEST]: ctx });
  // GraphQL multipart requests (uploads) go through graphql-upload first, JSON bodies through our reader; then Apollo.
  const uploads = graphqlUploadKoa({ maxFileSize: UPLOAD_LIMITS.maxBytes, maxFiles: 1 });
  const middleware: Middleware = async (ctx, next) => {
    if (ctx.path !== '/graphql') return next();
    const run = (): Promise<void> => answerWithApollo(apollo, ctx, context);
    if (ctx.is('multipart/form-data')) await uploads(ctx, run);
    else await graphqlJsonBody(ctx, run);
  };
  return { middleware, stop: () => apollo.stop() };
}

/**
 * A query only reads: once Apollo has picked the operation that runs (the one `operationName`
 * names, else the document's only one), a query is routed like a REST GET (with a read replica,
 * its plain reads may go there, see readRouting) and records no write. Mutations, and requests
 * that never get this far (unparseable or invalid), record the caller's write as any other request.
 */
function queriesRead(): ApolloServerPlugin<BaseContext> {
  return {
    requestDidStart() {
      return Promise.resolve({
        async didResolveOperation({ operation, contextValue }) {
          const ctx = (contextValue as { [KOA_REQUEST]?: Context })[KOA_REQUEST];
          if (!ctx || operation?.operation !== OperationTypeNode.QUERY) return;
          const target = await routeAsRead(ctx);
          if (!target) return;
          // Nothing has run yet: the operation's statements and its EntityManager's plain reads go to the replica.
          const context = contextValue as RequestContext;
          context.db = target;
          readingLike(context.em, target);
        },
      });
    },
  };
}

/** Apollo's codes for requests it refuses before running anything: the client's errors, never the server's. */
const APOLLO_REFUSALS = new Set([
  'BAD_REQUEST',
  'GRAPHQL_PARSE_FAILED',
  'OPERATION_RESOLUTION_FAILURE',
  'PERSISTED_QUERY_NOT_FOUND',
  'PERSISTED_QUERY_NOT_SUPPORTED',
]);

/** What a client must send for Apollo's CSRF prevention to let a GET (or a simple POST) through. */
const PREFLIGHT_ISSUE = {
  field: 'apollo-require-preflight',
  in: 'header',
  message: 'send this header (any value) or x-apollo-operation-name, or a content-type other than a form or text/plain',
};

/**
 * Apollo's refusal of the request itself (a GET mutation: 405 with `Allow`; its CSRF prevention, a
 * missing query, an unknown operation name, a syntax error: 400) in the envelope's codes, or null
 * for any other error. Apollo's own status and headers stay; nothing is logged, since anyone may send these.
 */
function apolloRefusal(formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError | null {
  const raw = error as { originalError?: unknown; extensions?: { code?: unknown; http?: { status?: number } } };
  // Apollo wraps graphql-js's own refusal (an unknown operation name) but never an error a resolver threw.
  const wrapped = raw.originalError as Error | undefined;
  if ((wrapped && wrapped.name !== 'GraphQLError') || !APOLLO_REFUSALS.has(String(raw.extensions?.code ?? formatted.extensions?.code)))
    return null;
  if (raw.extensions?.http?.status === 405)
    return { message: 'A mutation is sent with POST; GET runs queries only.', extensions: { code: 'method_not_allowed', details: null } };
  const csrf = /Cross-Site Request Forgery/.test(formatted.message);
  return {
    message: formatted.message,
    locations: formatted.locations,
    extensions: { code: 'invalid_request', details: csrf ? [PREFLIGHT_ISSUE] : null },
  };
}

/**
 * Errors carry the envelope's code and details; Apollo's refusals of a request get ours; its
 * validation errors keep theirs; unexpected ones are logged and hidden.
 */
function formatError(formatted: GraphQLFormattedError, error: unknown, logger: Logger): GraphQLFormattedError {
  const refusal = apolloRefusal(formatted, error);
  if (refusal) return refusal;
  const original = (error as { originalError?: unknown }).originalError;
  const classified = classifyError(error as GraphQLError);
  if (classified.code === 'invalid_request' && formatted.extensions?.code && formatted.extensions.code !== 'BAD_USER_INPUT' && !original) {
    return formatted;
  }
  if (classified.unexpected) logger.error({ err: original ?? error }, 'graphql resolver failed');
  return {
    message: classified.message,
    locations: formatted.locations,
    path: formatted.path,
    extensions: { code: classified.code, details: classified.details },
  };
}

/**
 * Headers the services set for a one-field answer (e.g. an ETag); a database outage answers HTTP 503 (with
 * Retry-After), from the same error path as every door.
 */
function httpFromContext(): ApolloServerPlugin<BaseContext> {
  return {
    requestDidStart() {
      return Promise.resolve({
        willSendResponse({ errors, response, contextValue, operation }) {
          // A one-field operation's answer carries the headers its service set (e.g. an ETag).
          const set = (contextValue as Partial<RequestContext>).responseHeaders;
          if (set && operation?.selectionSet.selections.length === 1)
            for (const [name, value] of Object.entries(set)) response.http.headers.set(name.toLowerCase(), value);
          const outage = errors?.find((e) => classifyError(e).code === 'unavailable');
          if (!outage) return Promise.resolve();
          const answer = errorAnswer(outage, () => undefined); // formatError has logged it
          response.http.status = answer.status;
          for (const [name, value] of Object.entries(answer.headers)) response.http.headers.set(name.toLowerCase(), value);
          return Promise.resolve();
        },
      });
    },
  };
}
