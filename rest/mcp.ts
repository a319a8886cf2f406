import { uploadValue } from './uploadValue.js';
import { Readable } from 'node:stream';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { Upload } from 'graphql-upload-minimal';
import type { Context } from 'koa';
import type { CompiledRoute } from './compile.js';
import { BODY_LIMITS } from '../src/contract/rules.js';
import { DomainError, InvalidRequestError, UnauthorizedError } from '../src/errors.js';
import type { GraphQLBackend } from './handler.js';
import { readText } from '../src/http/body.js';
import type { JsonSchema } from './jsonSchema.js';
import { errorOutput, runRoute, type RouteInput, type RouteOutput } from './run.js';
import type { Middleware } from '../src/http/middleware.js';

/** One agent tool: the MCP view of one route-table row. */
export interface ToolDef {
  tool: Tool;
  compiled: CompiledRoute;
  /** Where each argument goes. */
  args: Record<string, { in: 'path' | 'query' | 'header' | 'body' | 'upload' | 'idempotency'; name: string }>;
}

const MCP_INSTRUCTIONS = [
  'This server is a documentation workspace: articles in sidebar sections, a changelog, API-reference pages ' +
    'generated from an OpenAPI spec, and shared memory notes.',
  'Memory notes (memory_* tools) are Markdown notes addressed by file-like paths (e.g. "runbooks/deploy") that ' +
    'agents share across runs: read the index first, keep notes small and linked, and update an existing path ' +
    'rather than creating near-duplicates.',
  'Use search (full text, or semantic=true) before answering from the docs. When the docs cannot answer a ' +
    'question, call content_gaps_report with the question as asked (no names, e-mail addresses or secrets) and the ' +
    'slug of the closest article.',
  'Changes to articles go through proposals_create for editor review unless you are allowed to edit directly. The "workspace" argument defaults to ' +
    '"-" (your key\'s workspace); org-wide keys must pass a workspace id.',
].join('\n');

/** Builds one tool per route: its input schema comes from the row's own parameter and body schemas. */
function buildTools(routes: CompiledRoute[]): ToolDef[] {
  return routes.map((compiled) => {
    const { route } = compiled;
    const properties: Record<string, JsonSchema> = {};
    const required: string[] = [];
    const args: ToolDef['args'] = {};
    const add = (name: string, schema: JsonSchema, where: ToolDef['args'][string], isRequired: boolean) => {
      if (properties[name]) throw new Error(`tool ${route.name}: argument "${name}" is defined twice`);
      properties[name] = schema;
      args[name] = where;
      if (isRequired) required.push(name);
    };
    for (const [name, def] of Object.entries(compiled.pathParams)) {
      const schema =
        name === 'workspace'
          ? {
              ...def.schema,
              default: '-',
              description: 'Workspace id; defaults to "-", the workspace your key is bound to (org-wide keys must pass an id).',
            }
          : { ...def.schema, description: def.description };
      add(name, schema, { in: 'path', name }, name !== 'workspace');
    }
    for (const [name, def] of Object.entries(route.query ?? {}))
      add(name, { ...def.schema, description: def.description }, { in: 'query', name }, Boolean(def.required));
    for (const [name, def] of Object.entries(route.headers ?? {}))
      add(def.variable ?? name, { ...def.schema, description: def.description }, { in: 'header', name }, Boolean(def.required));
    if (route.body) {
      const bodyRequired = new Set((route.body.schema.required as string[] | undefined) ?? []);
      for (const [name, schema] of Object.entries(route.body.schema.properties))
        add(name, schema, { in: 'body', name }, bodyRequired.has(name));
    }
    if (route.upload) {
      add(
        route.upload.field,
        {
          type: 'string',
          contentEncoding: 'base64',
          description: 'The image bytes, base64-encoded (PNG, JPEG, WebP or GIF; at most 10 MiB).',
        },
        { in: 'upload', name: route.upload.field },
        true,
      );
      add(
        'filename',
        { type: 'string', maxLength: 255, description: 'Original file name (informational).' },
        { in: 'upload', name: 'filename' },
        false,
      );
    }
    if (route.method !== 'GET')
      add(
        'idempotencyKey',
        { type: 'string', minLength: 1, maxLength: 255, description: 'Makes a retried call run at most once (24 h).' },
        { in: 'idempotency', name: 'idempotency-key' },
        false,
      );
    const readOnly = route.method === 'GET';
    const tool: Tool = {
      name: route.name,
      title: route.summary,
      description: `${route.summary}. ${route.description} (REST: ${route.method} /api/v1${route.path}; needs ${compiled.permissions.join(', ')}.)`,
      inputSchema: { type: 'object', properties, required, additionalProperties: false },
      annotations: {
        title: route.summary,
        readOnlyHint: readOnly,
        destructiveHint: route.method === 'DELETE' || route.method === 'PUT' || route.method === 'PATCH',
        idempotentHint: readOnly || route.method === 'PUT' || route.method === 'DELETE',
        openWorldHint: false,
      },
    };
    return { tool, compiled, args };
  });
}

export interface McpOptions {
  version: string;
  /** Effective permissions of the authenticated agent (key AND role ceiling), or null when not an agent. */
  permissionsOf(ctx: Context): ReadonlySet<string> | null;
  /** Refuses a tool call at the HTTP level before it runs (an OAuth token whose scopes lack the tool's permissions: 403 `insufficient_scope`). */
  refuseCall?(ctx: Context, permissions: readonly string[]): void;
  /** The request only reads (see mcpMessageReads): called before its context is made (with a read replica, its reads may go there). */
  routeRead?(ctx: Context): Promise<unknown>;
  /** A tool that may write has run: called before its answer is sent (the transport sends it itself, before the request unwinds). */
  recordWrite?(ctx: Context): Promise<void>;
}

/** MCP methods that only read (besides notifications, which nothing answers). */
const READ_METHODS = new Set(['initialize', 'ping', 'tools/list']);

/**
 * Whether a JSON-RPC message to this server only reads: `initialize`, `ping`, `tools/list`, a
 * notification, or a `tools/call` of a tool whose route row is a GET (`methodOf`: a tool's row
 * method, undefined for no such tool). Anything else may write. A request carries one message
 * (batches are refused).
 */
export function mcpMessageReads(message: unknown, methodOf: (tool: string) => string | undefined): boolean {
  const { method, params } = (message ?? {}) as { method?: unknown; params?: { name?: unknown } | null };
  if (typeof method !== 'string') return false;
  if (READ_METHODS.has(method) || method.startsWith('notifications/')) return true;
  return method === 'tools/call' && typeof params?.name === 'string' && methodOf(params.name) === 'GET';
}

/**
 * `POST /mcp`: a stateless Model Context Protocol server (Streamable HTTP) whose tools are the REST
 * endpoints. A call runs the endpoint's route through the same runRoute — same validation,
 * permission checks, audit trail and webhooks. `tools/list` shows the tools the key may use.
 */
export function createMcpMiddleware(
  routes: CompiledRoute[],
  backend: GraphQLBackend,
  options: McpOptions,
): { middleware: Middleware; tools: ToolDef[] } {
  const tools = buildTools(routes);
  const byName = new Map(tools.map((t) => [t.tool.name, t]));
  const middleware: Middleware = async (ctx, next) => {
    if (ctx.path !== '/mcp') return next();
    const permissions = options.permissionsOf(ctx);
    if (!permissions) throw new UnauthorizedError(WWW_AUTHENTICATE);
    if (ctx.method !== 'POST') {
      throw new DomainError('method_not_allowed', 'This MCP server is stateless: send JSON-RPC requests with POST.', null, {
        Allow: 'POST',
      });
    }
    const body = await readMessage(ctx);
    if (body === undefined) return;
    const called = calledTool(body, byName);
    if (called) options.refuseCall?.(ctx, called.compiled.permissions);
    if (mcpMessageReads(body, (name) => byName.get(name)?.compiled.route.method)) await options.routeRead?.(ctx);
    const contextValue = await backend.createContext(ctx, true);
    const agentKeyId = backend.agentKeyId(ctx)!;
    const server = new Server(
      { name: 'workspace-knowledge-service', version: options.version },
      { capabilities: { tools: {} }, instructions: MCP_INSTRUCTIONS },
    );
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: tools.filter((t) => t.compiled.permissions.every((p) => permissions.has(p))).map((t) => t.tool),
    }));
    server.setRequestHandler(CallToolRequestSchema, async (request) => {
      const def = byName.get(request.params.name);
      if (!def) return toolError(errorOutput(new DomainError('not_found', `No tool named "${request.params.name}".`), ignore));
      const input = toRouteInput(def, request.params.arguments ?? {});
      if ('error' in input) return toolError(errorOutput(new InvalidRequestError(input.error, input.issues), ignore));
      const out = await runRoute(def.compiled, backend, contextValue, agentKeyId, input);
      if (def.compiled.route.method !== 'GET') await options.recordWrite?.(ctx);
      return toToolResult(def, out);
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    ctx.respond = false;
    ctx.res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(ctx.req, ctx.res, body);
  };
  return { middleware, tools };
}

/** Domain errors are expected: nothing to log. */
const ignore = () => undefined;

const WWW_AUTHENTICATE =
  'Bearer realm="workspace-knowledge-service", error="invalid_token", error_description="An agent key (svc_pat_...) is required"';

/** JSON-RPC error codes of the transport. */
const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;

/**
 * Reads one JSON-RPC message of at most BODY_LIMITS.mcp bytes (room for a 10 MiB image in
 * base64; past it, the 413 is thrown). Answers JSON-RPC's own errors itself and returns
 * undefined: malformed JSON is a parse error with HTTP 400, a batch is refused (the 2025-06-18
 * revision of MCP dropped batching, and one request is one charge against the rate limit).
 */
async function readMessage(ctx: Context): Promise<unknown> {
  const text = await readText(
    ctx,
    BODY_LIMITS.mcp,
    (limit) => new DomainError('payload_too_large', `An MCP message may be at most ${limit} bytes.`, { limit }),
  );
  const refuse = (code: number, message: string) => {
    ctx.status = 400;
    ctx.body = { jsonrpc: '2.0', id: null, error: { code, message } };
    return undefined;
  };
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch (error) {
    return refuse(PARSE_ERROR, `Parse error: ${(error as Error).message}`);
  }
  if (Array.isArray(message))
    return refuse(INVALID_REQUEST, 'Invalid Request: JSON-RPC batches are not supported; send one message per request.');
  if (!message || typeof message !== 'object') return refuse(INVALID_REQUEST, 'Invalid Request: a JSON-RPC message is an object.');
  return message;
}

/** The tool a `tools/call` message names, if it is one of ours. */
function calledTool(message: unknown, byName: Map<string, ToolDef>): ToolDef | undefined {
  const { method, params } = message as { method?: unknown; params?: { name?: unknown } };
  return method === 'tools/call' && typeof params?.name === 'string' ? byName.get(params.name) : undefined;
}

function toRouteInput(
  def: ToolDef,
  args: Record<string, unknown>,
): RouteInput | { error: string; issues: { field: string; message: string }[] } {
  const unknown = Object.keys(args).filter((k) => !def.args[k]);
  if (unknown.length)
    return {
      error: `Unknown argument(s): ${unknown.join(', ')}.`,
      issues: unknown.map((field) => ({ field, message: 'is not a known argument' })),
    };
  // Path and header arguments travel as text on the other doors; anything but a string (or a number
  // for a numeric path id) is refused here rather than stringified into "[object Object]".
  const notText = Object.entries(args).filter(([name, value]) => {
    const where = def.args[name].in;
    if (where !== 'path' && where !== 'header' && where !== 'idempotency') return false;
    return !(typeof value === 'string' || (where === 'path' && typeof value === 'number' && Number.isFinite(value)));
  });
  if (notText.length)
    return {
      error: `Invalid argument(s): ${notText.map(([name]) => name).join(', ')}.`,
      issues: notText.map(([field]) => ({ field, message: 'must be a string' })),
    };
  const input: RouteInput = { params: { workspace: '-' }, query: {}, headers: {} };
  const json: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(args)) {
    const where = def.args[name];
    if (where.in === 'path') input.params[where.name] = String(value);
    else if (where.in === 'query') input.query[where.name] = value;
    else if (where.in === 'header' || where.in === 'idempotency') input.headers[where.name] = String(value);
    else if (where.in === 'body') json[where.name] = value;
  }
  const { body, upload: uploadDef } = def.compiled.route;
  const file = uploadDef ? args[uploadDef.field] : undefined;
  const filename = typeof args.filename === 'string' ? args.filename : 'upload';
  if (body) input.body = () => Promise.resolve({ json });
  else if (uploadDef) input.body = () => Promise.resolve({ upload: typeof file === 'string' ? toUpload(file, filename) : undefined });
  return input;
}

function toToolResult(def: ToolDef, out: RouteOutput): CallToolResult {
  if (out.status >= 400) return toolError(out);
  if (out.status === 304) {
    // Not an error: what the agent holds is current.
    const notModified = { notModified: true, etag: out.headers.ETag ?? null };
    return { content: [{ type: 'text', text: JSON.stringify(notModified) }], structuredContent: notModified };
  }
  const structured = def.compiled.route.list
    ? { items: out.body, nextCursor: out.nextCursor }
    : Array.isArray(out.body)
      ? { items: out.body }
      : (out.body as Record<string, unknown>);
  return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured };
}

function toolError(out: RouteOutput): CallToolResult {
  const error = (out.body as { error: { code: string; message: string } }).error;
  return {
    isError: true,
    content: [
      { type: 'text', text: `${error.code}: ${error.message}` },
      { type: 'text', text: JSON.stringify(out.body) },
    ],
    structuredContent: out.body as Record<string, unknown>,
  };
}

/** A base64 tool argument as the `Upload` a multipart request would give (decoded only once the caller is authorized). */
function toUpload(base64: string, filename: string): Upload {
  const bytes = Buffer.from(base64, 'base64');
  return uploadValue({ bytes, filename, fieldName: 'file', open: () => Readable.from([bytes]) });
}
