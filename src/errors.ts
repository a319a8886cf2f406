import { GraphQLError } from 'graphql';

/** The envelope codes clients rely on; rest/envelope.ts maps each to its HTTP status. */
export type ErrorCode =
  | 'not_modified'
  | 'invalid_request'
  | 'unauthorized'
  | 'permission_denied'
  | 'plan_required'
  | 'two_factor_required'
  | 'not_found'
  | 'conflict'
  | 'memory_quota_exceeded'
  | 'precondition_failed'
  | 'payload_too_large'
  | 'uri_too_long'
  | 'headers_too_large'
  | 'method_not_allowed'
  | 'rate_limited'
  | 'unavailable'
  | 'internal';

/** Where a REST request carried a field. */
export type FieldLocation = 'path' | 'query' | 'header' | 'body';

/** A field-level problem reported in `details` of a 400 (`in` says where, for REST's parameters and body). */
export interface FieldIssue {
  field: string;
  message: string;
  in?: FieldLocation;
}

/** An expected failure of a domain rule; its code is part of the public contract. */
export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: unknown = null,
    /** Response headers the refusal needs (`Allow` on a 405, `WWW-Authenticate` on /mcp's 401). */
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/**
 * 304: the representation the client holds (its `If-None-Match`) is still current. Not a failure:
 * REST answers 304 with the ETag and no body; GraphQL reports the code.
 */
export class NotModifiedError extends DomainError {
  constructor(readonly etag: string) {
    super('not_modified', `Not modified: ${etag} is still current.`, { etag }, { ETag: etag });
  }
}

/**
 * 412: an If-Match / If-None-Match condition does not hold; `details.etag` is the current ETag
 * (null when the resource does not exist), so the client can fetch it again and retry.
 */
export class PreconditionFailedError extends DomainError {
  constructor(what: string, current: string | null) {
    super(
      'precondition_failed',
      current
        ? `The ${what} has changed: its current ETag is ${current}. Fetch it again and retry.`
        : `The ${what} does not exist, so the condition cannot hold.`,
      { etag: current },
    );
  }
}

/** 400: the request is malformed; `details` lists the offending fields. */
export class InvalidRequestError extends DomainError {
  constructor(message: string, issues: FieldIssue[] | null = null) {
    super('invalid_request', message, issues);
  }
}

/** 400 for one named field. */
export function invalidField(field: string, message: string): InvalidRequestError {
  return new InvalidRequestError(`${field}: ${message}`, [{ field, message }]);
}

/** 401: one body for a missing, malformed, unknown, expired or revoked key. */
export class UnauthorizedError extends DomainError {
  constructor(wwwAuthenticate?: string) {
    super(
      'unauthorized',
      'A valid API key is required: send "Authorization: Bearer <key>".',
      null,
      wwwAuthenticate ? { 'WWW-Authenticate': wwwAuthenticate } : {},
    );
  }
}

/** 403: the key (after the role ceiling) lacks permissions. */
export class PermissionDeniedError extends DomainError {
  constructor(missing: string[], message?: string) {
    super('permission_denied', message ?? `This key lacks the permission(s): ${missing.join(', ')}.`, { missing });
  }
}

/** 403: the organization's plan does not allow the operation. */
export class PlanRequiredError extends DomainError {
  constructor(what: string, plans: string[], current: string) {
    super('plan_required', `${what} requires the ${plans.join(' or ')} plan.`, { requiredPlans: plans, currentPlan: current });
  }
}

/** 403: the org requires two-factor and the key's admin/owner member has not enabled it. */
export class TwoFactorRequiredError extends DomainError {
  constructor(message?: string) {
    super(
      'two_factor_required',
      message ?? 'This organization requires admins and owners to enable two-factor authentication before their keys can be used.',
    );
  }
}

/** The two-factor refusal of a person: an admin or owner of such an organization signed in without a second factor. */
export const PERSON_TWO_FACTOR_MESSAGE =
  'This organization requires admins and owners to sign in with two-factor authentication: ' +
  'sign in through the identity provider with a second factor (a sign-in link is one factor).';

/** 404: absent or unreachable; the message never says which. */
export class NotFoundError extends DomainError {
  constructor(what = 'The requested object') {
    super('not_found', `${what} was not found.`);
  }
}

/** 409: a conflicting state (e.g. a duplicate). */
export class ConflictError extends DomainError {
  constructor(message: string, details: unknown = null) {
    super('conflict', message, details);
  }
}

export interface ClassifiedError {
  code: ErrorCode;
  message: string;
  details: unknown;
  /** true when the cause was unexpected and must be logged, never shown. */
  unexpected: boolean;
}

const INTERNAL_MESSAGE = 'The server failed to process the request.';

/** Sorts any error (raised while executing GraphQL, or anywhere in a request) into a public code, message and details. */
export function classifyError(raw: GraphQLError | Error): ClassifiedError {
  // A GraphQLError from another copy of graphql (e.g. a CommonJS plugin) is still a GraphQLError.
  const error =
    raw instanceof GraphQLError || raw.name === 'GraphQLError'
      ? (raw as GraphQLError)
      : new GraphQLError(raw.message, { originalError: raw });
  const original = unwrap(error);
  if (original instanceof DomainError) {
    return { code: original.code, message: original.message, details: original.details, unexpected: false };
  }
  if (original && isUniqueViolation(original)) {
    return { code: 'conflict', message: 'An object with the same unique key already exists.', details: null, unexpected: false };
  }
  if (original && isConnectionFailure(original)) {
    return {
      code: 'unavailable',
      message: 'The database is unavailable; retry shortly.',
      details: { retryAfterSeconds: 1 },
      unexpected: true,
    };
  }
  const code = error.extensions?.code;
  // graphql-js leaves parse/validation/variable-coercion errors without a code and without a path.
  if (!original && (code === undefined || code === 'BAD_USER_INPUT' || code === 'GRAPHQL_VALIDATION_FAILED') && !error.path) {
    return { code: 'invalid_request', message: error.message, details: null, unexpected: false };
  }
  return { code: 'internal', message: INTERNAL_MESSAGE, details: null, unexpected: true };
}

/** The error a GraphQLError wraps, if any (GraphQL errors from another copy of graphql count as GraphQL errors). */
function unwrap(error: GraphQLError): Error | undefined {
  const isGraphQL = (e: unknown): e is GraphQLError => e instanceof GraphQLError || (e instanceof Error && e.name === 'GraphQLError');
  let current: unknown = error.originalError;
  while (isGraphQL(current) && current.originalError) current = current.originalError;
  return isGraphQL(current) ? undefined : (current as Error | undefined);
}

/** SQLSTATEs that say the server this connection reached is gone, going, or not the primary any more. */
const LOST_STATES = new Set([
  '25006', // read_only_sql_transaction: a write reached a read-only server (demoted primary, or a standby behind the address)
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now (starting up, shutting down, in recovery)
  '08000',
  '08001', // no host of a multi-host URL serves (hostPicking.ts)
  '08003',
  '08006',
  '08P01', // PgBouncer: "server conn crashed?"
]);
const LOST_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
const LOST_MESSAGE =
  /Connection terminated|terminating connection|the database system is (starting up|shutting down|in recovery)|timeout expired/i;

/** One connection ended by the server's own rule (idle_session_timeout, idle_in_transaction_session_timeout), or a statement cancelled: not a lost primary. */
const OWN_STATES = new Set(['57P05', '25P03', '57014']);

/** Whether a database error says the primary was lost (see LOST_STATES): the reason to look for it again. */
export function signalsLostPrimary(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: string }).code;
  if (code && OWN_STATES.has(code)) return false;
  if (code && (LOST_STATES.has(code) || LOST_CODES.has(code))) return true;
  return LOST_MESSAGE.test(error.message);
}

/**
 * What else drivers and pools say when no connection serves the request, besides a lost primary
 * (signalsLostPrimary): no connection could be had in time, the server ended this session by its
 * own rule, or the socket was cut under a statement (the failover watch cuts those on a primary
 * that is gone).
 */
const UNAVAILABLE = new RegExp(
  [
    'timeout exceeded when trying to connect',
    'Timeout acquiring a connection',
    'Client has encountered a connection error',
    'Client was closed and is not queryable',
    'terminating connection',
    'Transaction query already complete',
  ].join('|'),
  'i',
);
const UNAVAILABLE_CODES = new Set(['ENOENT', 'ERR_STREAM_DESTROYED', 'ERR_STREAM_WRITE_AFTER_END', 'ERR_SOCKET_CLOSED']);

/** A unique-constraint violation, from the ORM or from node-postgres. */
export function isUniqueViolation(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  return error.name === 'UniqueConstraintViolationException' || (error as { code?: string }).code === '23505';
}

/** An error that says the database could not be reached or was lost: a 503 with Retry-After, never a 500. */
function isConnectionFailure(error: Error): boolean {
  const code = (error as { code?: string }).code;
  return (
    signalsLostPrimary(error) ||
    error.name === 'ConnectionException' ||
    error.name === 'KnexTimeoutError' ||
    UNAVAILABLE_CODES.has(code ?? '') ||
    UNAVAILABLE.test(error.message)
  );
}
