/**
 * The agent tools of MCP, one per route-table row: their definitions (input schema from the row's
 * own parameter and body schemas), how a call's arguments become the row's input, and how the
 * row's answer becomes a tool result. Both protocol revisions serve the same tools.
 */
import { Readable } from 'node:stream';
import type { CallToolResult, Tool } from '@modelcontextprotocol/server';
import type { Upload } from 'graphql-upload-minimal';
import type { CompiledRoute } from './compile.js';
import type { JsonSchema } from './jsonSchema.js';
import type { RouteInput, RouteOutput } from './run.js';
import { sha256Hex, uploadValue } from './uploadValue.js';

/** One agent tool: the MCP view of one route-table row. */
export interface ToolDef {
  tool: Tool;
  compiled: CompiledRoute;
  /** Where each argument goes. */
  args: Record<string, { in: 'path' | 'query' | 'header' | 'body' | 'upload' | 'idempotency'; name: string }>;
}

/** Builds one tool per route: its input schema comes from the row's own parameter and body schemas. */
export function buildTools(routes: CompiledRoute[]): ToolDef[] {
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
      add(def.variable, { ...def.schema, description: def.description }, { in: 'header', name }, Boolean(def.required));
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
    for (const [alias, name] of Object.entries(route.toolAliases ?? {})) {
      const own = properties[name];
      if (!own) throw new Error(`tool ${route.name}: alias "${alias}" names no argument "${name}"`);
      add(alias, { ...own, description: `The same as ${name} (send one of them).` }, args[name], false);
      if (required.includes(name)) required.splice(required.indexOf(name), 1);
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
      description: `${route.summary}. ${route.description} (REST: ${route.method} /api/v1${route.path}; needs ${compiled.permissionsText.replace(/\.$/, '')}.)`,
      inputSchema: { type: 'object', properties: properties as Tool['inputSchema']['properties'], required, additionalProperties: false },
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

/** A tool call's arguments as the row's input, or the 400 naming unknown arguments and arguments that must be text. */
export function toRouteInput(
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
  const twice = Object.entries(def.compiled.route.toolAliases ?? {}).filter(([alias, name]) => alias in args && name in args);
  if (twice.length)
    return {
      error: `Send one of ${twice.map(([alias, name]) => `${name} or ${alias}`).join(', ')}, not both.`,
      issues: twice.map(([alias, name]) => ({ field: alias, message: `is the same as ${name}, which was sent too` })),
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
  else if (uploadDef) input.body = async () => ({ upload: typeof file === 'string' ? await toUpload(file, filename) : undefined });
  return input;
}

/** The row's answer as a tool result: structured content beside its JSON text; an error envelope as an error result. */
export function toToolResult(def: ToolDef, out: RouteOutput): CallToolResult {
  if (out.status >= 400) return toolError(out);
  if (out.status === 304) {
    // Not an error: what the agent holds is current.
    const notModified = { notModified: true, etag: out.headers.ETag ?? null };
    return { content: [{ type: 'text', text: JSON.stringify(notModified) }], structuredContent: notModified };
  }
  const structured = def.compiled.route.list
    ? { items: out.body, nextCursor: out.nextCursor, ...out.extra }
    : Array.isArray(out.body)
      ? { items: out.body }
      : (out.body as Record<string, unknown>);
  return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured };
}

/** An error envelope as a tool error result: the code and message, then the envelope. */
export function toolError(out: RouteOutput): CallToolResult {
  const error = (out.body as { error: { code: string; message: string } }).error;
  return {
    isError: true,
    content: [
      { type: 'text', text: `${error.code}: ${error.message}` },
      { type: 'text', text: JSON.stringify(out.body) },
    ],
    structuredContent: out.body,
  };
}

/** A base64 tool argument as the `Upload` a multipart request would give (decoded only once the caller is authorized). */
async function toUpload(base64: string, filename: string): Promise<Upload> {
  const bytes = Buffer.from(base64, 'base64');
  return uploadValue({ digest: await sha256Hex(bytes), filename, fieldName: 'file', open: () => Readable.from([bytes]) });
}
