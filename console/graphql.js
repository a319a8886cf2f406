// The console's GraphQL over HTTP: one POST /graphql per operation, with the session's cookie and CSRF token,
// its first error turned into an exception the screens show as it is.
/* global fetch */
import { refusalInWords } from './refusals.js';
import { session } from './session.js';

/** A GraphQL answer's first error (`errors[0].message`), with its code and HTTP status. */
export class GraphQLRequestError extends Error {
  constructor(message, code = null, status = 0) {
    super(message);
    this.name = 'GraphQLRequestError';
    this.code = code;
    this.status = status;
  }
}

let onUnauthorized = () => {};
/** Calls `handler(message)` when the service refuses the sign-in (401), e.g. to sign out. */
export function whenUnauthorized(handler) {
  onUnauthorized = handler;
}

/**
 * Runs one GraphQL operation and returns its `data`; throws a GraphQLRequestError carrying
 * `errors[0].message` when the answer has errors (or no JSON at all).
 */
export async function gql(query, variables = {}) {
  let res;
  try {
    res = await fetch('/graphql', {
      method: 'POST',
      // The client name tells the console's requests from other GraphQL clients in the service's analytics (door `console`).
      headers: {
        'content-type': 'application/json',
        accept: 'application/json',
        'x-csrf-token': session.csrf ?? '',
        'apollographql-client-name': 'wks-console',
      },
      body: JSON.stringify({ query, variables }),
      credentials: 'same-origin',
      cache: 'no-store',
    });
  } catch {
    throw new GraphQLRequestError('The service cannot be reached. Check the connection and try again.', 'network');
  }
  let body;
  try {
    body = await res.json();
  } catch {
    throw new GraphQLRequestError(`The service answered HTTP ${res.status} without a GraphQL answer.`, 'http', res.status);
  }
  const error = body?.errors?.[0];
  if (error) {
    const code = error.extensions?.code ?? null;
    if (code === 'unauthorized' || res.status === 401) onUnauthorized(error.message);
    // A refusal by role says who may do it, rather than the permission's name alone.
    const words = code === 'permission_denied' ? refusalInWords(error.extensions?.details?.missing, session.current?.member?.role) : null;
    throw new GraphQLRequestError(words ?? error.message ?? 'The request failed.', code, res.status);
  }
  if (!body?.data) throw new GraphQLRequestError(`The service answered HTTP ${res.status} without data.`, 'http', res.status);
  return body.data;
}
