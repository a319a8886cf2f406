import type { Permission } from '../src/auth/permissions.js';
import { PermissionDeniedError, type DomainError } from '../src/errors.js';
import { EVENT_TYPES } from '../src/webhooks/events.js';
import type { CompiledRoute } from './compile.js';
import { ENVELOPE_SCHEMA, STATUS_DESCRIPTIONS } from '../src/http/envelope.js';
import { exampleOf, STORY } from './examples.js';
import type { JsonSchema } from './jsonSchema.js';
import { variableOf, type BodyDef, type HeaderDef, type ParamDef, type Route } from './routeDefinition.js';

export const API_PREFIX = '/api/v1';

/** The served OpenAPI 3.1 document, generated from the compiled route table. */
export function buildOpenApi(routes: CompiledRoute[], info: { version: string }): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const statuses = new Set<number>();
  for (const compiled of routes) {
    compiled.errors.forEach((status) => statuses.add(status));
    paths[compiled.route.path] ??= {};
    paths[compiled.route.path][compiled.route.method.toLowerCase()] = operationOf(compiled);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Workspace Knowledge Service',
      version: info.version,
      description: DESCRIPTION,
      contact: { name: 'Workspace Knowledge Service maintainers' },
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    servers: [{ url: API_PREFIX }],
    security: [{ bearerAuth: [] }],
    tags: [...new Set(routes.map((c) => c.route.tag))].map((name) => ({ name, description: TAG_DESCRIPTIONS[name] ?? name })),
    paths,
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'An agent key (`svc_pat_…`), shown once when created.' },
      },
      schemas: { Error: ENVELOPE_SCHEMA },
      responses: errorResponses(statuses),
      parameters: { IdempotencyKey: IDEMPOTENCY_KEY },
    },
  };
}

/** Example values that differ by group (a status is a changelog, article or proposal status). */
const TAG_EXAMPLE_VALUES: Record<string, Record<string, unknown>> = {
  Articles: { status: 'STABLE' },
  Search: { id: null },
  Sections: { key: 'guides' },
  // The edit proposed of "Getting started" at its version 4.
  Proposals: { status: 'open', kind: 'edit', baseVersion: 4, section: null, title: null, markdown: STORY.proposedMarkdown, reason: null },
  'API reference': {
    status: 'STABLE',
    version: '1.4.0',
    title: 'List pets',
    slug: 'get-pets',
    state: 'generated',
    path: '/pets',
    section: 'pets',
    key: 'pets',
    label: 'Pets',
    tag: 'pets',
  },
  Uploads: { id: 'q3V9xT0bLr8mZ2aKf5JwNg', url: '/uploads/q3V9xT0bLr8mZ2aKf5JwNg.png', width: 640, height: 360, size: 48213 },
  Changelog: { title: 'Faster search', markdown: 'Search answers in under 30 ms at 10,000 articles.', tag: 'search' },
};

/** The example values of a row: its own over its group's (examples.ts has the general ones). */
function exampleValues(route: Route): Record<string, unknown> {
  return { ...TAG_EXAMPLE_VALUES[route.tag], ...route.exampleValues };
}

/** What each group of endpoints is for (the tags of the route table). */
const TAG_DESCRIPTIONS: Record<string, string> = {
  Changelog: 'Release notes of the product the workspace documents: drafts, publishing, and the public list agents read.',
  Memory:
    'Shared memory of the agents of a workspace: notes at "/"-separated paths with kinds, tags and links, versioned, with history, search and a quota.',
  Search: 'One search over articles and the changelog: full text, by meaning, or both fused.',
  'Content gaps':
    'Questions the docs did not answer: reported by agents or found by zero-result searches, grouped, and turned into draft proposals.',
  Articles: 'The documentation: articles in sections, with a sidebar tree, history, diffs and restore.',
  Sections: 'The groups of articles of the sidebar, in order.',
  Proposals: 'Edits and new drafts agents propose; editors approve or reject them.',
  Uploads: 'Images for articles, served from a public, unguessable URL.',
  'API reference': 'An OpenAPI spec attached to the workspace, and the reference pages generated and kept in sync from it.',
  Workspace: "The workspace's guidance for agents: how its administrators ask agents to use it (also in MCP's instructions and /llms.txt).",
};

const DESCRIPTION =
  'REST interface to a documentation and knowledge workspace. Every request carries `Authorization: Bearer svc_pat_…`. ' +
  '`{workspace}` is a workspace id, or `-` for the workspace a key is bound to. Errors use one envelope: ' +
  '`{"error":{"code","message","status","details"}}`.\n\n' +
  `Every successful mutation emits an outbound webhook event (Standard Webhooks signing, body \`{type, timestamp, data}\`): ${EVENT_TYPES.map((t) => `\`${t}\``).join(', ')}.`;

const IDEMPOTENCY_KEY = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  schema: { type: 'string', minLength: 1, maxLength: 255 },
  description:
    'Makes the call safe to retry: per agent key and workspace, a request with a given key runs at most once for 24 h; a retry gets the stored ' +
    'status and body (with `Idempotent-Replayed: true`). The same key with a different request, or while the first is still running, is a 409. ' +
    'Answers with 409, 429 or 5xx are not stored, so those can be retried with the same key.',
};

/** One operation of the document: its parameters, body, responses and permissions. */
function operationOf(compiled: CompiledRoute): Record<string, unknown> {
  const { route } = compiled;
  const requestBody = requestBodyOf(route);
  return {
    operationId: route.name,
    tags: [route.tag],
    summary: route.summary,
    description: `${route.description}\n\nPermissions: ${compiled.permissionsText.replace(/\.$/, '')}.`,
    parameters: parametersOf(compiled),
    ...(requestBody ? { requestBody } : {}),
    responses: responsesOf(compiled),
    'x-permissions': compiled.permissions,
  };
}

function parametersOf(compiled: CompiledRoute): unknown[] {
  const { route } = compiled;
  const params = (where: 'path' | 'query' | 'header', defs: Record<string, ParamDef | HeaderDef>) =>
    Object.entries(defs).map(([name, def]) => ({
      name,
      in: where,
      required: where === 'path' || Boolean(def.required),
      description: def.description,
      schema: def.schema,
      example: 'example' in def ? def.example : exampleOf(def.schema, variableOf(name, def), exampleValues(route)),
    }));
  return [
    ...params('path', compiled.pathParams),
    ...params('query', route.query ?? {}),
    ...params('header', route.headers ?? {}),
    ...(route.method === 'GET' ? [] : [{ $ref: '#/components/parameters/IdempotencyKey' }]),
  ];
}

function requestBodyOf(route: Route): Record<string, unknown> | null {
  if (route.body) {
    const schema = documentedBodySchema(route.body);
    return {
      required: true,
      description: route.body.description,
      content: {
        'application/json': {
          schema,
          example: route.body.example ?? exampleOf(route.body.variants ? schema : route.body.schema, '', exampleValues(route)),
        },
      },
    };
  }
  if (!route.upload) return null;
  const { field } = route.upload;
  const schema = {
    type: 'object',
    required: [field],
    additionalProperties: false,
    properties: { [field]: { type: 'string', format: 'binary', contentMediaType: 'application/octet-stream' } },
  };
  return {
    required: true,
    description: route.upload.description,
    content: { 'multipart/form-data': { schema, example: { [field]: '' } } },
  };
}

/** The body's schema as documented: its variants as `oneOf` closed objects, or the schema itself. */
function documentedBodySchema(body: BodyDef): JsonSchema {
  if (!body.variants) return body.schema;
  const all = body.schema.properties;
  return {
    oneOf: body.variants.map((v) => ({
      title: v.title,
      description: v.description,
      type: 'object',
      additionalProperties: false,
      required: v.required,
      ...(v.oneOfRequired ? { anyOf: v.oneOfRequired.map((p) => ({ required: [p] })) } : {}),
      properties: Object.fromEntries(v.properties.map((p) => [p, all[p]])),
    })),
  };
}

function responsesOf(compiled: CompiledRoute): Record<string, unknown> {
  const { route } = compiled;
  const headers: Record<string, unknown> = Object.fromEntries(
    Object.entries(route.responseHeaders ?? {}).map(([name, h]) => [name, { description: h.description, schema: { type: 'string' } }]),
  );
  if (route.list) {
    headers.Link = { description: 'RFC 8288 link to the next page (`rel="next"`), absent on the last page.', schema: { type: 'string' } };
  }
  const responses: Record<string, unknown> = {
    [String(route.status)]: {
      description: route.summary,
      ...(Object.keys(headers).length ? { headers } : {}),
      content: {
        'application/json': {
          schema: compiled.responseSchema,
          example: route.responseExample ?? exampleOf(compiled.responseSchema, route.list ? 'items' : '', exampleValues(route)),
        },
      },
    },
  };
  if (route.method === 'GET' && route.headers?.['if-none-match']) {
    responses['304'] = {
      description: 'Not modified: the `If-None-Match` ETag is still current. No body.',
      headers: { ETag: { description: 'The current ETag (the one sent).', schema: { type: 'string' } } },
    };
  }
  for (const status of compiled.errors) responses[String(status)] = { $ref: `#/components/responses/Error${status}` };
  return responses;
}

function errorResponses(statuses: Set<number>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const status of [...statuses].sort()) {
    out[`Error${status}`] = {
      description: STATUS_DESCRIPTIONS[status] ?? `Error ${status}`,
      ...(status === 429 ? { headers: { 'Retry-After': { description: 'Seconds to wait.', schema: { type: 'integer' } } } } : {}),
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' }, example: errorExample(status) } },
    };
  }
  return out;
}

/** An error envelope as a client sees it for a status. */
function errorExample(status: number): Record<string, unknown> {
  const [code, message, details] = ERROR_EXAMPLES[status] ?? ['internal', 'The server failed; nothing was changed.', null];
  return { error: { code, message, status, details } };
}

/** A permission that exists (typed), so the example names one a client could be missing. */
const EXAMPLE_PERMISSION: Permission = 'article.update';
const fromError = (error: DomainError): [string, string, unknown] => [error.code, error.message, error.details];

const ERROR_EXAMPLES: Record<number, [string, string, unknown]> = {
  400: ['invalid_request', 'title: must not be empty', [{ field: 'title', message: 'must not be empty', in: 'body' }]],
  401: ['unauthorized', 'Missing or invalid agent key.', null],
  403: fromError(new PermissionDeniedError([EXAMPLE_PERMISSION])),
  404: ['not_found', 'Article not found.', null],
  405: ['method_not_allowed', 'PATCH is not allowed here; use GET, PUT, DELETE.', null],
  409: ['conflict', 'The article changed since the proposal was made.', null],
  412: ['precondition_failed', 'The memory note is at another version.', { etag: '"v4"' }],
  413: ['payload_too_large', 'The body is larger than this endpoint accepts (1048576 bytes).', null],
  414: ['uri_too_long', 'The URL is longer than 8192 bytes.', null],
  429: ['rate_limited', 'Too many requests; retry after 12 seconds.', { limit: 600, windowSeconds: 60, retryAfterSeconds: 12 }],
  431: ['headers_too_large', 'The request headers are larger than 16 KiB.', null],
  503: ['unavailable', 'The database is unreachable; retry later.', null],
};
