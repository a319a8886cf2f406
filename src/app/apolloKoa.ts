import { Readable } from 'node:stream';
import { HeaderMap, type ApolloServer, type BaseContext, type HTTPGraphQLRequest } from '@apollo/server';
import type { Context } from 'koa';

/** The context of one operation, made from the Koa request it arrived on. */
export type KoaContextFunction<T extends BaseContext> = (ctx: Context) => Promise<T>;

/** The request's headers as Apollo reads them (a repeated header joined with `, `, as HTTP allows). */
function headersOf(ctx: Context): HeaderMap {
  const headers = new HeaderMap();
  for (const [name, value] of Object.entries(ctx.headers)) {
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  return headers;
}

/**
 * Answers a GraphQL request at Koa's `ctx` with Apollo Server (started): the body the middleware
 * before it parsed (`ctx.request.body`: JSON, or graphql-upload's operations), the query string of a
 * GET, and Apollo's answer as is (status, headers, a complete body or a stream of incremental parts).
 * Our own few lines over `executeHTTPGraphQLRequest` instead of a Koa integration package, whose
 * releases now require a newer Node than the one this service supports.
 */
export async function answerWithApollo<T extends BaseContext>(
  apollo: ApolloServer<T>,
  ctx: Context,
  context: KoaContextFunction<T>,
): Promise<void> {
  const httpGraphQLRequest: HTTPGraphQLRequest = {
    method: ctx.method.toUpperCase(),
    headers: headersOf(ctx),
    search: ctx.search,
    body: (ctx.request as { body?: unknown }).body,
  };
  const { body, headers, status } = await apollo.executeHTTPGraphQLRequest({ httpGraphQLRequest, context: () => context(ctx) });
  for (const [name, value] of headers) ctx.set(name, value);
  if (status !== undefined) ctx.status = status;
  if (body.kind === 'complete') {
    ctx.body = body.string;
    return;
  }
  // Incremental delivery (@defer, @stream): each part is sent as it is ready.
  ctx.body = Readable.from(body.asyncIterator);
}
