import { GraphQLError } from 'graphql';
import { classifyError, DomainError, type ErrorCode } from '../errors.js';

/** The only place where an envelope code becomes an HTTP status. */
const STATUS_BY_CODE: Record<ErrorCode, number> = {
  not_modified: 304,
  invalid_request: 400,
  unauthorized: 401,
  permission_denied: 403,
  plan_required: 403,
  two_factor_required: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  memory_quota_exceeded: 409,
  precondition_failed: 412,
  payload_too_large: 413,
  uri_too_long: 414,
  rate_limited: 429,
  headers_too_large: 431,
  internal: 500,
  unavailable: 503,
};

/** The error envelope every door answers: `{ error: { code, message, status, details } }`. */
export interface Envelope {
  error: { code: string; message: string; status: number; details: unknown };
}

/** Builds the envelope and its HTTP status for a code. */
export function envelope(code: string, message: string, details: unknown = null): { status: number; body: Envelope } {
  const status = STATUS_BY_CODE[code as ErrorCode] ?? 500;
  return { status, body: { error: { code, message, status, details: details ?? null } } };
}

/** Any error as an answer: status, headers and envelope. */
export interface ErrorAnswer {
  status: number;
  headers: Record<string, string>;
  body: Envelope;
}

/**
 * The one path from an error to an answer, for every door: domain errors keep their code,
 * anything unexpected is logged and becomes a bland `internal`; the status comes from
 * STATUS_BY_CODE, and this is the only place `Retry-After` is set (from the seconds a refusal
 * names in its details, or 1 s while the database is unavailable).
 */
export function errorAnswer(error: unknown, log: (error: unknown) => void): ErrorAnswer {
  let code = 'internal';
  let message = 'The server failed to process the request.';
  let details: unknown = null;
  const headers: Record<string, string> = {};
  // A domain error thrown in a resolver arrives wrapped by GraphQL; its headers (Allow, ETag, …) still apply.
  const domain = error instanceof GraphQLError && error.originalError instanceof DomainError ? error.originalError : error;
  if (domain instanceof DomainError) {
    ({ code, message, details } = domain);
    Object.assign(headers, domain.headers);
  } else if (error instanceof Error) {
    const classified = classifyError(error);
    if (classified.unexpected) log(error instanceof GraphQLError ? (error.originalError ?? error) : error);
    ({ code, message, details } = classified);
  } else {
    log(error);
  }
  const retryAfter = code === 'unavailable' ? 1 : retryAfterOf(details);
  if (retryAfter) headers['Retry-After'] = String(retryAfter);
  const { status, body } = envelope(code, message, details);
  return { status, headers, body };
}

/** Seconds a refusal asks the client to wait (rate limits, an Idempotency-Key still in flight), if any. */
function retryAfterOf(details: unknown): number | null {
  const d = details as { retryAfterSeconds?: unknown; retryAfter?: unknown } | null;
  const seconds = d?.retryAfterSeconds ?? d?.retryAfter;
  return typeof seconds === 'number' && seconds > 0 ? seconds : null;
}

/** The JSON Schema of the envelope, for the OpenAPI document. */
export const ENVELOPE_SCHEMA = {
  type: 'object',
  required: ['error'],
  additionalProperties: false,
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message', 'status', 'details'],
      additionalProperties: false,
      properties: {
        code: { type: 'string', description: 'Stable machine-readable code, e.g. invalid_request, not_found.' },
        message: { type: 'string', description: 'Human-readable explanation.' },
        status: { type: 'integer', description: 'Equals the HTTP status.' },
        details: {
          description:
            'null, or for 400 a list of {field, message, in} naming each bad field; for 403 permission_denied {missing: ' +
            '[...]}; other codes document their own object.',
        },
      },
    },
  },
} as const;

/** What each error status means, for the OpenAPI document. */
export const STATUS_DESCRIPTIONS: Record<number, string> = {
  400: '`invalid_request`: a parameter or the body is not valid; `details` names each field.',
  401: '`unauthorized`: key missing, malformed, unknown, expired or revoked.',
  403: '`permission_denied` (details.missing lists the permissions), `plan_required`, or `two_factor_required`.',
  404: "`not_found`: the object does not exist or the key cannot reach it (including other organizations' workspaces).",
  409: 'A conflict with the current state (`conflict`, `memory_quota_exceeded`).',
  405: '`method_not_allowed`: the path exists, the method does not (`Allow` lists the methods).',
  412: '`precondition_failed`: the `If-Match` ETag does not match the current version.',
  413: '`payload_too_large`: the body is larger than this endpoint accepts.',
  414: '`uri_too_long`: the URL (path and query) is longer than 8 KiB.',
  429: '`rate_limited`: too many requests; wait for `Retry-After` seconds.',
  431: '`headers_too_large`: the request headers are larger than 16 KiB (the connection is closed).',
  500: '`internal`: the server failed; nothing was changed.',
  503: '`unavailable`: the database is unreachable; retry later.',
};
