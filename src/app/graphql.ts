import { ApolloServer, type ApolloServerPlugin, type BaseContext } from '@apollo/server';
import { ApolloServerPluginCacheControlDisabled, ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import {
  ApolloServerPluginLandingPageLocalDefault,
  ApolloServerPluginLandingPageProductionDefault,
} from '@apollo/server/plugin/landingPage/default';
import { koaMiddleware } from '@as-integrations/koa';
import type { GraphQLError, GraphQLFormattedError, GraphQLSchema } from 'graphql';
import { graphqlUploadKoa } from 'graphql-upload-minimal';
import type { Logger } from 'pino';
import { errorAnswer } from '../http/envelope.js';
import { UPLOAD_LIMITS } from '../contract/rules.js';
import type { RequestContext } from '../context.js';
import { classifyError } from '../errors.js';
import type { RateLimiter } from '../rateLimit.js';
import type { ContextFactory } from './context.js';
import type { GraphQLExplorer } from './explorer.js';
import { armor, graphqlJsonBody, rootFieldRateLimit } from './graphqlLimits.js';
import type { Middleware } from '../http/middleware.js';

interface GraphQLOptions {
  schema: GraphQLSchema;
  limiter: RateLimiter;
  logger: Logger;
  createContext: ContextFactory;
  /** What GET /graphql shows a browser; Apollo serves only its own pages (GraphiQL is served before it). */
  explorer: GraphQLExplorer;
}

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
      // No cache hints are used; without this plugin Apollo wraps every field resolver of the shared
      // schema (which REST executes too).
      ApolloServerPluginCacheControlDisabled(),
      ...(limits.plugins as unknown as ApolloServerPlugin<BaseContext>[]),
      landingPage(options.explorer),
    ],
    formatError: (formatted, error) => formatError(formatted, error, options.logger),
  });
  await apollo.start();
  const handler = koaMiddleware(apollo, { context: ({ ctx }) => options.createContext(ctx, false) });
  // GraphQL multipart requests (uploads) go through graphql-upload first, JSON bodies through our reader; then Apollo.
  const uploads = graphqlUploadKoa({ maxFileSize: UPLOAD_LIMITS.maxBytes, maxFiles: 1 });
  const middleware: Middleware = async (ctx, next) => {
    if (ctx.path !== '/graphql') return next();
    const run = (): Promise<void> => handler(ctx, next) as Promise<void>;
    if (ctx.is('multipart/form-data')) await uploads(ctx, run);
    else await graphqlJsonBody(ctx, run);
  };
  return { middleware, stop: () => apollo.stop() };
}

/** Apollo's landing page for the chosen explorer: Sandbox, the production page, or none. */
function landingPage(explorer: GraphQLExplorer): ApolloServerPlugin<BaseContext> {
  if (explorer === 'sandbox') return ApolloServerPluginLandingPageLocalDefault({ embed: true });
  if (explorer === 'apollo-production') return ApolloServerPluginLandingPageProductionDefault({ footer: false });
  return ApolloServerPluginLandingPageDisabled();
}

/** Errors carry the envelope's code and details; Apollo's own parse and validation errors keep theirs; unexpected ones are logged and hidden. */
function formatError(formatted: GraphQLFormattedError, error: unknown, logger: Logger): GraphQLFormattedError {
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
