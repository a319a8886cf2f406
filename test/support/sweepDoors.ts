import {
  getNamedType,
  getNullableType,
  isInputObjectType,
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLInputField,
  type GraphQLSchema,
} from 'graphql';
import type { TestApp } from './app.js';
import { headerText, jsonText, urlText } from './hostile.js';
import { operationFor, rootFields, sampleValue } from './introspect.js';
import { png } from './images.js';
import { SAMPLE_BODIES } from './samples.js';

// The targets of the sweep (test/sweep.test.ts): every field of every operation of each door, read
// from what the service serves (the OpenAPI document, GraphQL introspection, MCP's tools/list). A
// target builds the request that puts one hostile value into its field, with valid values (the
// lane's own objects) everywhere else, and judges the answer.

/** What one lane of the sweep owns: a tenant with an object of every kind the operations name. */
export interface Lane {
  key: string;
  organizationId: string;
  workspaceId: string;
  entryId: number;
  proposalId: number;
  groupId: number;
  pageSlug: string;
}

/** A request as sent, and what came back. */
export interface Exchange {
  request: string;
  status: number;
  body: unknown;
}

/** How an answer was judged: refused (a 4xx, an error result), and what is wrong with it, if anything. */
export interface Verdict {
  refused: boolean;
  problem: string | null;
}

/** One field of one operation of one door. */
export interface Target {
  door: 'rest' | 'graphql' | 'mcp';
  operation: string;
  field: string;
  /** The operation may write to the lane's workspace (or its search log): a refused call must leave it as it was. */
  writes: boolean;
  send(app: TestApp, lane: Lane, value: unknown, seed: number): Promise<Exchange>;
  judge(exchange: Exchange): Verdict;
}

/** Operations whose only write is the search log. */
const SEARCHES = new Set(['search', 'memory_search', 'searchMemory']);

/** The value every operation gets for a field of this name, in the lane's workspace (objects that exist, so the service runs to the end). */
function named(lane: Lane, graphqlAdmin = false): Record<string, unknown> {
  return {
    workspace: '-',
    workspaceId: lane.workspaceId,
    organizationId: lane.organizationId,
    slug: 'shared',
    path: 'fuzz/note',
    q: 'x',
    section: 'docs',
    kind: 'note',
    version: 1,
    group: lane.groupId,
    from: 1,
    days: 7,
    limit: 5,
    first: 5,
    email: 'nobody@example.com',
    reason: 'r',
    question: 'Q?',
    url: 'https://hooks.example/x',
    // Ids of other kinds name nothing: the admin token's mutations then change nothing that exists.
    ...(graphqlAdmin ? { id: '00000000-0000-4000-8000-000000000000', memberId: '00000000-0000-4000-8000-000000000000' } : {}),
  };
}

const ENVELOPE_CODES = new Set([
  'invalid_request',
  'unauthorized',
  'permission_denied',
  'plan_required',
  'two_factor_required',
  'not_found',
  'method_not_allowed',
  'conflict',
  'memory_quota_exceeded',
  'precondition_failed',
  'payload_too_large',
  'uri_too_long',
  'headers_too_large',
  'rate_limited',
  'not_modified',
]);

/** What is wrong with an error envelope answered with `status`, or null. */
export function envelopeProblem(body: unknown, status: number): string | null {
  const error = (body as { error?: Record<string, unknown> } | null)?.error;
  if (!error || typeof error !== 'object') return 'no error envelope';
  if (!ENVELOPE_CODES.has(String(error.code))) return `code ${String(error.code)}`;
  if (error.status !== status) return `envelope status ${String(error.status)} ≠ HTTP ${status}`;
  if (typeof error.message !== 'string' || !error.message) return 'no message';
  if (!(error.details === null || typeof error.details === 'object')) return 'details neither null nor structured';
  return null;
}

// ---------------------------------------------------------------- REST, from the served OpenAPI document

interface DocParameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  example?: unknown;
  $ref?: string;
}
interface DocOperation {
  operationId: string;
  parameters?: DocParameter[];
  requestBody?: { content: Record<string, { schema: Record<string, unknown>; example?: unknown }> };
}
type OpenApiDoc = { paths: Record<string, Record<string, DocOperation>>; components: { parameters: Record<string, DocParameter> } };

/** The properties a JSON body may have (the union of its variants'). */
function bodyProperties(schema: Record<string, unknown>): string[] {
  const variants = (schema.oneOf ?? schema.anyOf ?? [schema]) as Record<string, unknown>[];
  return [...new Set(variants.flatMap((v) => Object.keys((v.properties ?? {}) as object)))];
}

/** Every field of every operation of the served OpenAPI document: parameters, body properties, the body as a whole. */
export function restTargets(doc: OpenApiDoc): Target[] {
  const targets: Target[] = [];
  for (const [template, operations] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(operations)) {
      const params = (op.parameters ?? []).map((p) => (p.$ref ? doc.components.parameters[p.$ref.split('/').pop()!] : p));
      const json = op.requestBody?.content['application/json'];
      const upload = op.requestBody?.content['multipart/form-data'];
      const fields = [
        ...params.map((p) => `${p.in}:${p.name}`),
        ...(json ? ['body', ...bodyProperties(json.schema).map((f) => `body:${f}`)] : []),
        ...(upload ? ['upload:file', 'upload:filename'] : []),
      ];
      for (const field of fields) {
        const writes = method !== 'get' || SEARCHES.has(op.operationId);
        targets.push({
          door: 'rest',
          operation: op.operationId,
          field,
          writes,
          send: (app, lane, value) => sendRest(app, lane, { method: method.toUpperCase(), template, op, params, field }, value),
          judge: judgeRest,
        });
      }
    }
  }
  return targets;
}

interface RestShape {
  method: string;
  template: string;
  op: DocOperation;
  params: DocParameter[];
  field: string;
}

async function sendRest(app: TestApp, lane: Lane, shape: RestShape, value: unknown): Promise<Exchange> {
  const { method, template, op, params, field } = shape;
  const [where, name] = field.split(':') as [string, string | undefined];
  const base = named(lane);
  const pathValue: Record<string, unknown> = { ...base, id: lane.entryId };
  if (op.operationId.startsWith('openapi_') && template.includes('{slug}')) pathValue.slug = lane.pageSlug;
  let path = template;
  for (const p of params.filter((x) => x.in === 'path')) {
    const v = where === 'path' && name === p.name ? value : (pathValue[p.name] ?? p.example);
    path = path.replace(`{${p.name}}`, urlText(v));
  }
  const query = params
    .filter((p) => p.in === 'query' && ((where === 'query' && name === p.name) || p.required || p.name === 'path' || p.name === 'q'))
    .map((p) => `${p.name}=${urlText(where === 'query' && name === p.name ? value : (base[p.name] ?? p.example))}`);
  const headers: Record<string, string> = {};
  if (where === 'header') headers[name!] = headerText(value);
  const url = `/api/v1${path}${query.length ? `?${query.join('&')}` : ''}`;
  const request = `${method} ${url} ${JSON.stringify(headers)}`;
  if (op.requestBody?.content['multipart/form-data']) {
    const form = new FormData();
    const text = typeof value === 'string' ? value : jsonText(value);
    const file = where === 'upload' && name === 'file' ? new Blob([text]) : new Blob([new Uint8Array(png(1, 1))], { type: 'image/png' });
    form.set('file', file, where === 'upload' && name === 'filename' ? text.slice(0, 4096) : 'pixel.png');
    const res = await app.api(method, url, { key: lane.key, form, headers });
    return { request: `${request} multipart ${field}=${text.slice(0, 200)}`, status: res.status, body: res.body };
  }
  let rawBody: string | undefined;
  if (op.requestBody) {
    const sample: Record<string, unknown> = { ...(SAMPLE_BODIES[op.operationId] ?? {}) };
    if (op.operationId === 'proposals_create') sample.article = 'shared';
    rawBody = where === 'body' ? jsonText(name ? { ...sample, [name]: value } : value) : JSON.stringify(sample);
  }
  const res = await app.api(method, url, {
    key: lane.key,
    rawBody,
    headers: rawBody === undefined ? headers : { ...headers, 'content-type': 'application/json' },
  });
  return { request: `${request} ${(rawBody ?? '').slice(0, 300)}`, status: res.status, body: res.body };
}

function judgeRest({ status, body }: Exchange): Verdict {
  if (status >= 500) return { refused: true, problem: `HTTP ${status}` };
  if (status < 400) return { refused: false, problem: null };
  return { refused: true, problem: envelopeProblem(body, status) };
}

// ---------------------------------------------------------------- GraphQL, from introspection

/** Where a hostile value goes: an argument, or one field of an argument's input object. */
interface GraphQLSpot {
  arg: GraphQLArgument;
  inner?: GraphQLInputField;
}

/** Every argument of every root query and mutation (but file uploads), and every field of their input objects. */
export function graphqlTargets(schema: GraphQLSchema, adminToken: string): Target[] {
  const targets: Target[] = [];
  for (const field of rootFields(schema)) {
    const mutation = schema.getMutationType()?.getFields()[field.name] === field;
    const inWorkspace = field.args.some((a) => a.name === 'workspace');
    const spots: GraphQLSpot[] = field.args.flatMap((arg) => {
      const type = getNamedType(arg.type);
      return [{ arg }, ...(isInputObjectType(type) ? Object.values(type.getFields()).map((inner) => ({ arg, inner })) : [])];
    });
    for (const spot of spots) {
      targets.push({
        door: 'graphql',
        operation: field.name,
        field: spot.inner ? `${spot.arg.name}.${spot.inner.name}` : spot.arg.name,
        writes: inWorkspace && (mutation || SEARCHES.has(field.name)),
        send: (app, lane, value) => sendGraphQL(app, lane, schema, field, spot, value, inWorkspace ? lane.key : adminToken),
        judge: judgeGraphQL,
      });
    }
  }
  return targets;
}

async function sendGraphQL(
  app: TestApp,
  lane: Lane,
  schema: GraphQLSchema,
  field: GraphQLField<unknown, unknown>,
  spot: GraphQLSpot,
  value: unknown,
  bearer: string,
): Promise<Exchange> {
  const base = named(lane, bearer !== lane.key);
  // An Int id is one of the lane's own: its changelog entry, its proposal, its gap group.
  const intIds: Record<string, unknown> = {
    approveProposal: lane.proposalId,
    rejectProposal: lane.proposalId,
    resolveContentGapGroup: lane.groupId,
  };
  const variables: Record<string, unknown> = {};
  for (const arg of field.args) {
    const isInt = getNamedType(arg.type).name === 'Int';
    const own = arg.name === 'id' && isInt ? { id: intIds[field.name] ?? lane.entryId } : {};
    variables[arg.name] = sampleValue(arg.name, arg.type, { ...base, ...own });
  }
  if (spot.inner) {
    const inner = getNullableType(spot.arg.type);
    const object = (variables[spot.arg.name] ?? {}) as Record<string, unknown>;
    variables[spot.arg.name] = isInputObjectType(inner) ? { ...object, [spot.inner.name]: value } : value;
  } else variables[spot.arg.name] = value;
  const query = operationFor(schema, field);
  const body = jsonText({ query, variables });
  const res = await fetch(`${app.url}/graphql`, {
    method: 'POST',
    headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
    body,
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // judged below: a GraphQL answer is JSON
  }
  return { request: `POST /graphql ${body.slice(0, 400)}`, status: res.status, body: parsed };
}

function judgeGraphQL({ status, body }: Exchange): Verdict {
  if (status >= 500) return { refused: true, problem: `HTTP ${status}` };
  const answer = body as { data?: Record<string, unknown> | null; errors?: { message?: unknown; extensions?: { code?: unknown } }[] };
  if (!answer || typeof answer !== 'object') return { refused: true, problem: 'not JSON' };
  if (!answer.errors?.length) return { refused: false, problem: status === 200 ? null : `HTTP ${status} without errors` };
  for (const error of answer.errors) {
    const code = String(error.extensions?.code);
    if (code === 'internal' || code === 'unavailable' || code === 'undefined') return { refused: true, problem: `code ${code}` };
    if (typeof error.message !== 'string') return { refused: true, problem: 'error without a message' };
  }
  return { refused: answer.data?.r === undefined || answer.data?.r === null, problem: null };
}

// ---------------------------------------------------------------- MCP, from tools/list

interface ToolShape {
  name: string;
  inputSchema: { properties: Record<string, unknown> };
}

/** The tool rows that read only (their route is a GET): a refused call of any other may not write. */
export function mcpTargets(tools: ToolShape[], readOnly: Set<string>): Target[] {
  return tools.flatMap((tool) =>
    Object.keys(tool.inputSchema.properties).map((field): Target => ({
      door: 'mcp',
      operation: tool.name,
      field,
      writes: !readOnly.has(tool.name) || SEARCHES.has(tool.name),
      send: (app, lane, value, seed) => sendMcp(app, lane, tool, field, value, seed % 2 === 1),
      judge: judgeMcp,
    })),
  );
}

const MODERN_META = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };

/** One tools/call, on the 2026-07-28 revision (`modern`: its headers and `_meta`) or as a stateless 2025-11-25 POST. */
async function sendMcp(app: TestApp, lane: Lane, tool: ToolShape, field: string, value: unknown, modern: boolean): Promise<Exchange> {
  const base = named(lane);
  const args: Record<string, unknown> = { ...(SAMPLE_BODIES[tool.name] ?? {}) };
  for (const name of Object.keys(tool.inputSchema.properties)) if (name in base && name !== 'workspace') args[name] ??= base[name];
  if ('id' in tool.inputSchema.properties) args.id = lane.entryId;
  if (tool.name.startsWith('openapi_') && 'slug' in tool.inputSchema.properties) args.slug = lane.pageSlug;
  if (tool.name === 'proposals_create') args.article = 'shared';
  if (tool.name === 'uploads_create') Object.assign(args, { file: png(1, 1).toString('base64'), filename: 'pixel.png' });
  for (const name of Object.keys(args)) if (!(name in tool.inputSchema.properties)) delete args[name];
  args[field] = value;
  const params = { name: tool.name, arguments: args, ...(modern ? { _meta: MODERN_META } : {}) };
  const body = jsonText({ jsonrpc: '2.0', id: 1, method: 'tools/call', params });
  const headers: Record<string, string> = {
    authorization: `Bearer ${lane.key}`,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    ...(modern ? { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': tool.name } : {}),
  };
  const res = await fetch(`${app.url}/mcp`, { method: 'POST', headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // judged below
  }
  return { request: `POST /mcp (${modern ? '2026-07-28' : '2025-11-25'}) ${body.slice(0, 400)}`, status: res.status, body: parsed };
}

function judgeMcp({ status, body }: Exchange): Verdict {
  if (status >= 500) return { refused: true, problem: `HTTP ${status}` };
  const message = body as { jsonrpc?: string; error?: { code?: unknown; message?: unknown }; result?: any } | null;
  if (status >= 400 && message && 'error' in message && !('jsonrpc' in message))
    return { refused: true, problem: envelopeProblem(message, status) };
  if (!message || message.jsonrpc !== '2.0') return { refused: true, problem: 'not a JSON-RPC answer' };
  if (message.error) {
    const ok = typeof message.error.code === 'number' && typeof message.error.message === 'string' && message.error.code !== -32603;
    return { refused: true, problem: ok ? null : `JSON-RPC error ${JSON.stringify(message.error).slice(0, 200)}` };
  }
  if (!message.result?.isError) return { refused: false, problem: null };
  const error = message.result.structuredContent;
  return { refused: true, problem: envelopeProblem(error, (error?.error?.status as number) ?? 0) ?? statusProblem(error?.error?.status) };
}

function statusProblem(status: unknown): string | null {
  return typeof status === 'number' && status >= 400 && status < 500 ? null : `tool error status ${String(status)}`;
}
