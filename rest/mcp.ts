/**
 * `POST /mcp`: a stateless Model Context Protocol server (Streamable HTTP) whose tools are the REST
 * endpoints, answering both protocol revisions on one endpoint: 2025-11-25 clients (the
 * `initialize` handshake, as before) and 2026-07-28 clients (`server/discover`, no handshake, the
 * protocol version and capabilities in each request's `_meta`, the `Mcp-Method`/`Mcp-Name` headers,
 * cache hints on list results). A call runs the endpoint's route through the same runRoute on
 * either revision — same validation, permission checks, audit trail and webhooks.
 */
import { createMcpHandler, isLegacyRequest, Server, type AuthInfo, type McpRequestContext } from '@modelcontextprotocol/server';
import { NodeStreamableHTTPServerTransport, toWebRequest } from '@modelcontextprotocol/node';
import type { Context } from 'koa';
import type { CompiledRoute } from './compile.js';
import { BODY_LIMITS } from '../src/contract/rules.js';
import { DomainError, InvalidRequestError, UnauthorizedError } from '../src/errors.js';
import type { GraphQLBackend } from './handler.js';
import { readText } from '../src/http/body.js';
import { parseJsonText } from '../src/http/json.js';
import { buildTools, toolError, toRouteInput, toToolResult, type ToolDef } from './mcpTools.js';
import { listResources, parseResourceUri, readerOf, readResource, RESOURCE_TEMPLATES, type RunRow } from './mcpResources.js';
import { OpenStreams, Rechecks, serveLegacyStream, serveListen, type CallerNow } from './mcpListen.js';
import { readerAs, SharedChecks } from './sharedChecks.js';
import type { AgentPrincipal, LivePort, Principal } from '../src/context.js';
import type { ResourceSubscriptionPort } from '../src/services/resourceSubscriptions.js';
import { ProtocolError, ResourceNotFoundError } from '@modelcontextprotocol/server';
import { errorOutput, runRoute } from './run.js';
import type { Middleware } from '../src/http/middleware.js';

export type { ToolDef } from './mcpTools.js';

/**
 * What an agent reads first: one paragraph of at most 512 characters (some hosts read no further),
 * then the details, then the workspace's own guidance (see McpOptions.guidanceOf).
 */
export const MCP_FIRST_PARAGRAPH =
  'A documentation workspace: articles in sidebar sections, a changelog, API-reference pages and shared memory notes. ' +
  'Search before answering from the docs; report questions the docs cannot answer with content_gaps_report. Keep ' +
  'memory notes small, linked, and update an existing path rather than writing a near-duplicate. Edits go through ' +
  'proposals_create unless you may edit directly. "workspace" defaults to "-", your key\'s workspace.';

const MCP_DETAILS = [
  'Memory notes (memory_* tools) are Markdown notes addressed by file-like paths (e.g. "runbooks/deploy") that ' +
    'agents share across runs: read the index first.',
  'Use search (full text, or semantic=true) before answering from the docs. When the docs cannot answer a ' +
    'question, call content_gaps_report with the question as asked (no names, e-mail addresses or secrets) and the ' +
    'slug of the closest article.',
  'Org-wide keys must pass a workspace id as "workspace".',
].join('\n');

/** The lines around the workspace's guidance in the instructions: what lies between them is the workspace's text, not the server's. */
export const GUIDANCE_OPEN = '<workspace-guidance>';
export const GUIDANCE_CLOSE = '</workspace-guidance>';

/**
 * The server's instructions: the fixed first paragraph, the details, and the workspace's guidance
 * if it has any, between GUIDANCE_OPEN and GUIDANCE_CLOSE so that a host (and the model) can tell
 * where the workspace's words end and the server's resume. Nothing in the guidance can close the
 * block early: any `<workspace-guidance` or `</workspace-guidance` in it loses its `<`.
 */
export function mcpInstructions(guidance: string | null): string {
  const parts = [MCP_FIRST_PARAGRAPH, MCP_DETAILS];
  if (guidance)
    parts.push(
      `Guidance from this workspace's administrators (their words, not this server's) follows, between ${GUIDANCE_OPEN} and ` +
        `${GUIDANCE_CLOSE}:\n${GUIDANCE_OPEN}\n${withoutDelimiters(guidance)}\n${GUIDANCE_CLOSE}`,
    );
  return parts.join('\n\n');
}

/** Markers that would open or close the guidance block (any case, slashes or spaces between), disarmed as `&lt;…`. */
const DELIMITER = /<[\s/]*workspace-guidance/gi;

/** The guidance with every look-alike of the block's delimiters disarmed (one linear pass: one quantifier, over characters the word cannot start with). */
function withoutDelimiters(guidance: string): string {
  return guidance.replace(DELIMITER, (match) => `&lt;${match.slice(1)}`);
}

/** 2026-07-28 cache hints: the tool list depends on the caller's permissions (private); guidance may change (a minute). */
const CACHE_HINTS = {
  'tools/list': { ttlMs: 300_000, cacheScope: 'private' as const },
  'server/discover': { ttlMs: 60_000, cacheScope: 'private' as const },
};

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
  /** The guidance of the caller's workspace for agents (null: none, or an org-wide key), read for the instructions. */
  guidanceOf?(ctx: Context): Promise<string | null>;
  /** The caller as its credential resolves now (a stream asks before each delivery: a revoked key is `invalid`). */
  principalNow(ctx: Context): Promise<Principal>;
  /** 2025-11-25 clients' resource subscriptions, kept with the credential. */
  subscriptions: ResourceSubscriptionPort;
}

/** MCP methods that only read (besides notifications, which nothing answers). */
const READ_METHODS = new Set([
  'initialize',
  'server/discover',
  'ping',
  'tools/list',
  'resources/list',
  'resources/templates/list',
  'resources/read',
]);
/** Methods whose result carries the instructions. */
const INSTRUCTED = new Set(['initialize', 'server/discover']);

/**
 * Whether a JSON-RPC message to this server only reads: `initialize`, `server/discover`, `ping`,
 * `tools/list`, a notification, or a `tools/call` of a tool whose route row is a GET (`methodOf`:
 * a tool's row method, undefined for no such tool). Anything else may write. A request carries one
 * message (batches are refused).
 */
export function mcpMessageReads(message: unknown, methodOf: (tool: string) => string | undefined): boolean {
  const { method, params } = (message ?? {}) as { method?: unknown; params?: { name?: unknown } | null };
  if (typeof method !== 'string') return false;
  if (READ_METHODS.has(method) || method.startsWith('notifications/')) return true;
  return method === 'tools/call' && typeof params?.name === 'string' && methodOf(params.name) === 'GET';
}

/** One request's caller, handed to the per-request server (through the SDK's pass-through AuthInfo on 2026-07-28). */
interface McpCall {
  ctx: Context;
  permissions: ReadonlySet<string>;
  contextValue: Awaited<ReturnType<GraphQLBackend['createContext']>>;
  agentKeyId: string;
  instructions: string;
  /** The caller as its credential stands at each moment a stream asks. */
  now: CallerNow;
}

/**
 * The MCP middleware: authenticates (the caller was authenticated by the key or token middleware
 * before), reads one JSON-RPC message within BODY_LIMITS.mcp, and serves it on the revision it
 * speaks, with a server made for this caller (its tools, its workspace's guidance).
 */
export function createMcpMiddleware(
  routes: CompiledRoute[],
  backend: GraphQLBackend,
  options: McpOptions,
): { middleware: Middleware; tools: ToolDef[]; streams: OpenStreams } {
  const tools = buildTools(routes);
  const byName = new Map(tools.map((t) => [t.tool.name, t]));
  const streams = new OpenStreams();
  const rechecks = new Rechecks();
  const serverFor = (call: McpCall) => mcpServer(call, tools, byName, backend, options);
  const checks = new SharedChecks();
  const nowOf = (ctx: Context) => callerNow(ctx, backend, options, byName, checks);
  const listenDeps = (contextValue: McpCall['contextValue']) => ({
    live: (contextValue as unknown as { live: LivePort }).live,
    subscriptions: options.subscriptions,
    open: streams,
    rechecks,
  });
  const modern = createMcpHandler(({ authInfo }: McpRequestContext) => serverFor((authInfo?.extra as { call: McpCall }).call), {
    legacy: 'reject',
    onerror: () => undefined, // a refused request is answered to its client; nothing to log
  });
  const middleware: Middleware = async (ctx, next) => {
    if (ctx.path !== '/mcp') return next();
    const permissions = options.permissionsOf(ctx);
    if (!permissions) throw new UnauthorizedError(WWW_AUTHENTICATE);
    if (ctx.method === 'GET' && (ctx.get('accept') || '').includes('text/event-stream')) {
      const contextValue = await backend.createContext(ctx, true);
      const caller = { ...nowOf(ctx), holder: backend.agentKeyId(ctx)!, bound: boundWorkspace(ctx) };
      return serveLegacyStream(ctx, caller, listenDeps(contextValue));
    }
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
    const method = (body as { method?: unknown }).method;
    const guidance = INSTRUCTED.has(method as string) ? await options.guidanceOf?.(ctx) : null;
    const call: McpCall = {
      ctx,
      permissions,
      contextValue,
      agentKeyId: backend.agentKeyId(ctx)!,
      instructions: mcpInstructions(guidance ?? null),
      now: nowOf(ctx),
    };
    const request = await toWebRequest(ctx.req, body);
    if (await isLegacyRequest(request, body)) return serveLegacy(ctx, serverFor(call), body);
    const authInfo: AuthInfo = { token: '', clientId: call.agentKeyId, scopes: [...permissions], extra: { call } };
    if (method === 'subscriptions/listen') {
      const caller = { ...call.now, holder: call.agentKeyId, bound: boundWorkspace(ctx), authInfo };
      return serveListen(ctx, body as Parameters<typeof serveListen>[1], caller, () => serverFor(call), listenDeps(contextValue));
    }
    const answer = await modern.fetch(request, { authInfo, parsedBody: body });
    ctx.status = answer.status;
    answer.headers.forEach((value, name) => ctx.set(name, value));
    ctx.body = answer.body ? Buffer.from(await answer.arrayBuffer()) : '';
  };
  return { middleware, tools, streams };
}

/** The workspace the caller's credential is bound to (null: an org-wide key). */
function boundWorkspace(ctx: Context): string | null {
  return (ctx.state.principal as AgentPrincipal | undefined)?.boundWorkspaceId ?? null;
}

/**
 * The caller as its credential resolves at each moment a stream asks: its permissions (null once it
 * is no longer valid), and whether it may read a resource (the REST row that reads it, run as it).
 */
function callerNow(
  ctx: Context,
  backend: GraphQLBackend,
  options: McpOptions,
  byName: Map<string, ToolDef>,
  checks: SharedChecks,
): CallerNow {
  const credential = ctx.get('authorization');
  const fresh = async (occasion?: string): Promise<AgentPrincipal | null> => {
    const principal = await checks.once(occasion, `credential ${credential}`, () => options.principalNow(ctx));
    if (principal.kind !== 'agent') return null;
    ctx.state.principal = principal;
    return principal;
  };
  const permissions: CallerNow['permissions'] = async (occasion) => ((await fresh(occasion)) ? options.permissionsOf(ctx) : null);
  const mayRead: CallerNow['mayRead'] = async (uri, occasion) => {
    const ref = parseResourceUri(uri);
    const principal = ref && (await fresh(occasion));
    if (!ref || !principal) return false;
    return checks.once(occasion, `read ${uri} as ${readerAs(principal)}`, async () => {
      const [name, input] = readerOf(ref);
      const contextValue = await backend.createContext(ctx, true);
      const out = await runRoute(byName.get(name)!.compiled, backend, contextValue, backend.agentKeyId(ctx)!, input);
      return out.status === 200;
    });
  };
  return {
    credential,
    permissions,
    mayRead,
    verdict: (uri, occasion) =>
      checks.once(occasion, `verdict ${credential} ${uri ?? ''}`, async () => {
        const now = await permissions(occasion);
        return now && { permissions: now, readable: uri !== null && (await mayRead(uri, occasion)) };
      }),
  };
}

/** A 2025-11-25 request: the stateless Streamable HTTP transport answering one JSON response, as the v1 SDK did. */
async function serveLegacy(ctx: Context, server: Server, body: unknown): Promise<void> {
  const transport = new NodeStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  ctx.respond = false;
  ctx.res.on('close', () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(ctx.req, ctx.res, body);
}

/** A server for one caller: the tools its permissions allow, in the route table's order, and the instructions. */
function mcpServer(call: McpCall, tools: ToolDef[], byName: Map<string, ToolDef>, backend: GraphQLBackend, options: McpOptions): Server {
  // The low-level server: arguments are checked by each route's own schemas (400 envelopes naming the field), not the SDK's.
  const server = new Server(
    { name: 'workspace-knowledge-service', version: options.version },
    {
      capabilities: { tools: { listChanged: true }, resources: { subscribe: true, listChanged: true } },
      instructions: call.instructions,
      cacheHints: CACHE_HINTS,
    },
  );
  const runRow: RunRow = (name, input) => runRoute(byName.get(name)!.compiled, backend, call.contextValue, call.agentKeyId, input);
  const workspace = (call.ctx.state.principal as AgentPrincipal | undefined)?.boundWorkspaceId ?? null;
  server.setRequestHandler('resources/list', (request) => listResources(workspace, call.permissions, runRow, request.params?.cursor));
  server.setRequestHandler('resources/templates/list', () => ({ resourceTemplates: RESOURCE_TEMPLATES }));
  server.setRequestHandler('resources/read', (request) => readResource(request.params.uri, runRow));
  // 2025-11-25: a subscription is kept with the credential; its GET /mcp stream delivers it.
  server.setRequestHandler('resources/subscribe', async (request) => {
    const { uri } = request.params;
    const ref = parseResourceUri(uri);
    if (!ref || !(await call.now.mayRead(uri))) throw new ResourceNotFoundError(uri, `No resource at ${uri} that this key may read.`);
    if (!(await options.subscriptions.add(call.agentKeyId, ref.workspace, uri)))
      throw new ProtocolError(
        -32603,
        'rate_limited: this key holds the most resource subscriptions a key may hold; unsubscribe from one first.',
      );
    return {};
  });
  server.setRequestHandler('resources/unsubscribe', async (request) => {
    await options.subscriptions.remove(call.agentKeyId, request.params.uri);
    return {};
  });
  server.setRequestHandler('tools/list', () => ({
    tools: tools.filter((t) => t.compiled.permissions.every((p) => call.permissions.has(p))).map((t) => t.tool),
  }));
  server.setRequestHandler('tools/call', async (request) => {
    const def = byName.get(request.params.name);
    if (!def) return toolError(errorOutput(new DomainError('not_found', `No tool named "${request.params.name}".`), ignore));
    const input = toRouteInput(def, request.params.arguments ?? {});
    if ('error' in input) return toolError(errorOutput(new InvalidRequestError(input.error, input.issues), ignore));
    const out = await runRoute(def.compiled, backend, call.contextValue, call.agentKeyId, input);
    if (def.compiled.route.method !== 'GET') await options.recordWrite?.(call.ctx);
    return toToolResult(def, out);
  });
  return server;
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
 * undefined: malformed JSON is a parse error with HTTP 400, a message nested past JSON_MAX_DEPTH
 * (anywhere: `arguments`, `_meta`) an invalid request with HTTP 400, before anything reads it, and
 * a batch is refused (the 2025-06-18 revision of MCP dropped batching, and one request is one
 * charge against the rate limit).
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
  const parsed = parseJsonText(text);
  // Too deep is refused before parsing (nothing of it is read, not even its id): the message as a whole is invalid.
  if (!parsed.ok)
    return parsed.reason === 'syntax'
      ? refuse(PARSE_ERROR, `Parse error: the message ${parsed.message}`)
      : refuse(INVALID_REQUEST, `Invalid Request: the message ${parsed.message}.`);
  const message = parsed.value;
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
