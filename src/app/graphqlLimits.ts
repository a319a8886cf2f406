import type { ApolloServerPlugin } from '@apollo/server';
import { HeaderMap } from '@apollo/server';
import { ApolloArmor } from '@escape.tech/graphql-armor';
import {
  getOperationAST,
  GraphQLError,
  Kind,
  type DocumentNode,
  type FragmentDefinitionNode,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import type { Context } from 'koa';
import { errorAnswer } from '../http/envelope.js';
import { readText } from '../http/body.js';
import { parseJsonText } from '../http/json.js';
import type { RequestContext } from '../context.js';
import { BODY_LIMITS } from '../contract/rules.js';
import { DomainError, InvalidRequestError } from '../errors.js';
import { rateLimitedError, type RateLimiter } from '../rateLimit.js';
import type { Middleware } from '../http/middleware.js';

/** Root fields an operation selects (aliases count apart, fragments are expanded, `__typename` is free). */
export function countRootFields(operation: OperationDefinitionNode, fragments: Record<string, FragmentDefinitionNode>): number {
  const seen = new Set<string>();
  const count = (set: SelectionSetNode): number => {
    let n = 0;
    for (const s of set.selections) {
      if (s.kind === Kind.FIELD) n += s.name.value === '__typename' ? 0 : 1;
      else if (s.kind === Kind.INLINE_FRAGMENT) n += count(s.selectionSet);
      else if (!seen.has(s.name.value) && fragments[s.name.value]) {
        seen.add(s.name.value);
        n += count(fragments[s.name.value].selectionSet);
      }
    }
    return n;
  };
  return count(operation.selectionSet);
}

/**
 * Root fields of the operation that runs: the one `operationName` names, else the document's only
 * operation (what graphql-js executes); 0 when none can run. Every GraphQL door charges this count,
 * so a cheap first operation cannot carry the cost of the named one.
 */
export function operationRootFields(document: DocumentNode, operationName: string | null | undefined): number {
  const operation = getOperationAST(document, operationName);
  if (!operation) return 0;
  const fragments: Record<string, FragmentDefinitionNode> = {};
  for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments[d.name.value] = d;
  return countRootFields(operation, fragments);
}

/**
 * Charges every root field of a GraphQL operation like one REST request (the HTTP request itself
 * was charged once already), so aliases cannot multiply what a key may do per window. Over the
 * limit: HTTP 429 with Retry-After and `extensions.code: rate_limited`, like REST.
 */
export function rootFieldRateLimit(limiter: RateLimiter): ApolloServerPlugin<RequestContext> {
  return {
    requestDidStart() {
      return Promise.resolve({
        async didResolveOperation({ contextValue, request, document }) {
          const principal = contextValue.principal;
          if (principal.kind !== 'agent') return;
          for (let extra = operationRootFields(document, request.operationName) - 1; extra > 0; extra--) {
            const result = await limiter.hit(principal.keyId);
            if (result.allowed) continue;
            const refusal = rateLimitedError(result, limiter.windowSeconds);
            const answer = errorAnswer(refusal, () => undefined);
            const headers = new HeaderMap(Object.entries(answer.headers).map(([name, value]) => [name.toLowerCase(), value]));
            throw new GraphQLError(refusal.message, { originalError: refusal, extensions: { http: { status: answer.status, headers } } });
          }
        },
      });
    },
  };
}

/**
 * Parses a GraphQL JSON body within the JSON body limit: 413 past it, 400 for malformed JSON, an
 * empty body or another content type (never a 5xx: Apollo's Koa integration answers 500 to a POST without a body).
 */
export const graphqlJsonBody: Middleware = async (ctx: Context, next) => {
  if (ctx.method !== 'POST') return next();
  if (!ctx.is('application/json', 'application/*+json'))
    throw new InvalidRequestError('A GraphQL POST is JSON (or multipart for uploads).', [
      { field: 'content-type', in: 'header', message: 'must be application/json' },
    ]);
  const text = await readText(
    ctx,
    BODY_LIMITS.json,
    (limit) => new DomainError('payload_too_large', `The body may be at most ${limit} bytes.`, { limit }),
  );
  if (!text.trim())
    throw new InvalidRequestError('The body is empty: send {"query": …}.', [{ field: 'body', in: 'body', message: 'is empty' }]);
  const parsed = parseJsonText(text);
  if (!parsed.ok)
    throw new InvalidRequestError(`The body ${parsed.message}`, [
      { field: 'body', message: parsed.reason === 'syntax' ? 'is not valid JSON' : parsed.message },
    ]);
  ctx.request.body = parsed.value as typeof ctx.request.body;
  await next();
};

/**
 * graphql-armor's token limit parses the document before Apollo does and turns any failure into an
 * unexpected error (HTTP 500): its syntax errors (and the token limit) are the client's, 400.
 */
function parseFailuresAreClientErrors(plugin: ApolloServerPlugin): ApolloServerPlugin {
  if (!plugin.unexpectedErrorProcessingRequest) return plugin;
  const original = plugin.unexpectedErrorProcessingRequest.bind(plugin);
  return {
    ...plugin,
    async unexpectedErrorProcessingRequest(context) {
      const { error } = context;
      if (error instanceof GraphQLError && !error.originalError && error.message.startsWith('Syntax Error'))
        throw new GraphQLError(error.message, {
          extensions: { code: 'GRAPHQL_PARSE_FAILED', http: { status: 400, headers: new HeaderMap() } },
        });
      await original(context);
    },
  };
}

/** One query cannot exhaust the server: depth, aliases, directives, tokens and cost are capped. */
export function armor() {
  const protection = new ApolloArmor({
    maxDepth: { n: 15, ignoreIntrospection: false },
    maxAliases: { n: 15 },
    maxDirectives: { n: 20 },
    maxTokens: { n: 3000 },
    costLimit: { maxCost: 20_000 },
    blockFieldSuggestion: { enabled: false },
  }).protect();
  return { ...protection, plugins: protection.plugins.map((p) => parseFailuresAreClientErrors(p as ApolloServerPlugin)) };
}
