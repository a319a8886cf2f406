/**
 * Articles and memory notes as MCP resources, with stable URIs (docs/mcp.md):
 *
 *   wks://workspaces/{workspace}/articles/{slug}
 *   wks://workspaces/{workspace}/notes/{path}        (the path's own slashes kept: notes/runbooks/deploy)
 *
 * `resources/list` pages through what the caller may read of its key's workspace (articles, then
 * notes), `resources/templates/list` gives the two templates, and `resources/read` reads one. Each
 * runs the REST row that reads the same thing (articles_tree, memory_list_notes, articles_get,
 * memory_get_note) through runRoute, so permissions, visibility and the audit of reads are the
 * REST door's own.
 */
import {
  ProtocolError,
  ResourceNotFoundError,
  type ListResourcesResult,
  type ListResourceTemplatesResult,
  type ReadResourceResult,
  type Resource,
} from '@modelcontextprotocol/server';
import type { RouteInput, RouteOutput } from './run.js';

const SCHEME = 'wks://workspaces/';
/** Resources a `resources/list` page holds. */
export const RESOURCES_PAGE = 100;

/** A resource's kind and key: an article's slug, a note's path. */
export interface ResourceRef {
  workspace: string;
  kind: 'article' | 'note';
  key: string;
}

/** The URI of an article or a note. */
export function resourceUri(workspace: string, kind: ResourceRef['kind'], key: string): string {
  const encoded = kind === 'note' ? key.split('/').map(encodeURIComponent).join('/') : encodeURIComponent(key);
  return `${SCHEME}${workspace}/${kind === 'note' ? 'notes' : 'articles'}/${encoded}`;
}

/** What a URI names, or null when it names nothing of ours. */
export function parseResourceUri(uri: string): ResourceRef | null {
  if (!uri.startsWith(SCHEME)) return null;
  const match = /^([^/]+)\/(articles|notes)\/(.+)$/.exec(uri.slice(SCHEME.length));
  if (!match) return null;
  try {
    const key = match[2] === 'notes' ? match[3].split('/').map(decodeURIComponent).join('/') : decodeURIComponent(match[3]);
    return { workspace: decodeURIComponent(match[1]), kind: match[2] === 'notes' ? 'note' : 'article', key };
  } catch {
    return null; // a malformed escape
  }
}

export const RESOURCE_TEMPLATES: ListResourceTemplatesResult['resourceTemplates'] = [
  {
    uriTemplate: 'wks://workspaces/{workspace}/articles/{slug}',
    name: 'article',
    title: 'An article',
    description: 'An article of a workspace, as Markdown (restricted ones only for keys of members who may see them).',
    mimeType: 'text/markdown',
  },
  {
    uriTemplate: 'wks://workspaces/{workspace}/notes/{+path}',
    name: 'memory-note',
    title: 'A memory note',
    description: 'A memory note of a workspace by its path (its slashes kept), as Markdown (needs memory.read).',
    mimeType: 'text/markdown',
  },
];

/** Runs a REST row in process for the caller: its answer (an error envelope's status ≥ 400). */
export type RunRow = (name: string, input: RouteInput) => Promise<RouteOutput>;

const input = (workspace: string, query: Record<string, unknown> = {}, params: Record<string, string> = {}): RouteInput => ({
  params: { workspace, ...params },
  query,
  headers: {},
});

interface ListCursor {
  /** Articles: the offset in the sidebar's order; notes: the note index's cursor. */
  a?: number;
  n?: string | null;
}

/**
 * One page of the resources of the caller's workspace (`workspace`: its id; null for an org-wide
 * key, which lists none and reads by URI): the articles it may see in sidebar order, then the
 * memory notes when it may read them.
 */
export async function listResources(
  workspace: string | null,
  permissions: ReadonlySet<string>,
  run: RunRow,
  cursor: string | undefined,
): Promise<ListResourcesResult> {
  if (!workspace) return { resources: [] };
  const at = readCursor(cursor);
  const resources: Resource[] = [];
  if (at.a !== undefined && permissions.has('article.read')) {
    const tree = await run('articles_tree', input(workspace));
    if (tree.status >= 400) throw asProtocolError(tree);
    const articles = (tree.body as { articles: { slug: string; title: string; updatedAt: string }[] }[]).flatMap((s) => s.articles);
    for (const a of articles.slice(at.a, at.a + RESOURCES_PAGE))
      resources.push({ uri: resourceUri(workspace, 'article', a.slug), name: a.slug, title: a.title, mimeType: 'text/markdown' });
    if (at.a + RESOURCES_PAGE < articles.length) return { resources, nextCursor: writeCursor({ a: at.a + RESOURCES_PAGE }) };
  }
  if (!permissions.has('memory.read')) return { resources };
  const room = RESOURCES_PAGE - resources.length;
  if (room <= 0) return { resources, nextCursor: writeCursor({ n: null }) };
  const notes = await run('memory_list_notes', input(workspace, { limit: room, ...(at.n ? { cursor: at.n } : {}) }));
  if (notes.status >= 400) throw asProtocolError(notes);
  for (const n of notes.body as { path: string; size: number }[])
    resources.push({ uri: resourceUri(workspace, 'note', n.path), name: n.path, title: n.path, mimeType: 'text/markdown', size: n.size });
  return notes.nextCursor ? { resources, nextCursor: writeCursor({ n: notes.nextCursor }) } : { resources };
}

/** The REST row that reads a resource, and its input. */
export function readerOf(ref: ResourceRef): [string, RouteInput] {
  return ref.kind === 'article'
    ? ['articles_get', input(ref.workspace, {}, { slug: ref.key })]
    : ['memory_get_note', input(ref.workspace, { path: ref.key })];
}

/** One resource by URI: its Markdown. Unknown URIs, and what the caller may not read, are resource not found (the SDK's -32602 with the URI). */
export async function readResource(uri: string, run: RunRow): Promise<ReadResourceResult> {
  const ref = parseResourceUri(uri);
  if (!ref)
    throw new ResourceNotFoundError(uri, `No resource at ${uri}: URIs are wks://workspaces/{workspace}/articles/{slug} or …/notes/{path}.`);
  const out = await run(...readerOf(ref));
  if (out.status === 404) throw new ResourceNotFoundError(uri, `No resource at ${uri}.`);
  if (out.status >= 400) throw asProtocolError(out);
  const body = out.body as { markdown?: string; body?: string; title?: string; version: number; updatedAt: string };
  return {
    contents: [
      {
        uri,
        mimeType: 'text/markdown',
        text: ref.kind === 'article' ? body.markdown! : body.body!,
        _meta: { version: body.version, updatedAt: body.updatedAt, ...(body.title ? { title: body.title } : {}) },
      },
    ],
  };
}

/** JSON-RPC's invalid params, for a refused request (the envelope in `data`). */
const INVALID_PARAMS = -32602;

/** A REST error envelope as a JSON-RPC error: its code and message, the envelope in `data`. */
export function asProtocolError(out: RouteOutput): ProtocolError {
  const { error } = out.body as { error: { code: string; message: string } };
  return new ProtocolError(out.status === 400 ? INVALID_PARAMS : -32603, `${error.code}: ${error.message}`, out.body);
}

function readCursor(cursor: string | undefined): ListCursor {
  if (!cursor) return { a: 0 };
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as ListCursor;
    if (typeof parsed === 'object' && parsed && (Number.isInteger(parsed.a) || 'n' in parsed)) return parsed;
  } catch {
    // fall through
  }
  throw new ProtocolError(INVALID_PARAMS, 'Invalid params: the cursor is not one resources/list gave.');
}

const writeCursor = (c: ListCursor) => Buffer.from(JSON.stringify(c), 'utf8').toString('base64url');
