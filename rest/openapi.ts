import { EVENT_TYPES } from '../src/webhooks/events.js';
import type { CompiledRoute } from './compile.js';
import { ENVELOPE_SCHEMA, STATUS_DESCRIPTIONS } from './envelope.js';
import type { JsonSchema } from './jsonSchema.js';
import type { ParamDef, Route } from './routeDefinition.js';

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
    info: { title: 'Workspace Knowledge Service', version: info.version, description: DESCRIPTION },
    servers: [{ url: API_PREFIX }],
    security: [{ bearerAuth: [] }],
    tags: [...new Set(routes.map((c) => c.route.tag))].map((name) => ({ name })),
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
    description: `${route.description}\n\nPermissions: ${route.permissions.map((p) => `\`${p}\``).join(', ')}.`,
    parameters: parametersOf(compiled),
    ...(requestBody ? { requestBody } : {}),
    responses: responsesOf(compiled),
    'x-permissions': route.permissions,
  };
}

function parametersOf(compiled: CompiledRoute): unknown[] {
  const { route } = compiled;
  const params = (where: 'path' | 'query' | 'header', defs: Record<string, ParamDef>) =>
    Object.entries(defs).map(([name, def]) => ({
      name,
      in: where,
      required: where === 'path' || Boolean(def.required),
      description: def.description,
      schema: def.schema,
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
    return {
      required: true,
      description: route.body.description,
      content: { 'application/json': { schema: route.body.schema as JsonSchema } },
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
  return { required: true, description: route.upload.description, content: { 'multipart/form-data': { schema } } };
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
      content: { 'application/json': { schema: compiled.responseSchema } },
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
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
    };
  }
  return out;
}
