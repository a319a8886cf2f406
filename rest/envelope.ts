import type { ErrorCode } from '../src/errors.js';

/** The only place where an envelope code becomes an HTTP status. */
export const STATUS_BY_CODE: Record<ErrorCode, number> = {
  invalid_request: 400,
  unauthorized: 401,
  permission_denied: 403,
  plan_required: 403,
  two_factor_required: 403,
  not_found: 404,
  conflict: 409,
  memory_quota_exceeded: 409,
  precondition_failed: 412,
  rate_limited: 429,
  internal: 500,
  unavailable: 503,
};

/** `{ error: { code, message, status, details } }` of SPEC "Errors". */
export interface Envelope {
  error: { code: string; message: string; status: number; details: unknown };
}

/** Builds the envelope and its HTTP status for a code. */
export function envelope(code: string, message: string, details: unknown = null): { status: number; body: Envelope } {
  const status = STATUS_BY_CODE[code as ErrorCode] ?? 500;
  return { status, body: { error: { code, message, status, details: details ?? null } } };
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
          description: 'null, or for 400 a list of {field, message, in} naming each bad field; for 403 permission_denied {missing: [...]}; other codes document their own object.',
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
  404: '`not_found`: the object does not exist or the key cannot reach it (including other organizations\' workspaces).',
  409: 'A conflict with the current state (`conflict`, `memory_quota_exceeded`).',
  412: '`precondition_failed`: the `If-Match` ETag does not match the current version.',
  429: '`rate_limited`: too many requests; wait for `Retry-After` seconds.',
  500: '`internal`: the server failed; nothing was changed.',
  503: '`unavailable`: the database is unreachable; retry later.',
};
