import { schemaOf } from '../../src/contract/jsonSchema.js';
import { RULES } from '../../src/contract/rules.js';
import { jsonBody, PAGE_QUERY, paramOf, type ParamDef, type Route } from '../routeDefinition.js';

const pathQuery: Record<string, ParamDef> = {
  path: paramOf(RULES.notePath, 'Note path, e.g. `runbooks/deploy`. Case-sensitive; one leading/trailing "/" is ignored.', {
    required: true,
  }),
};

const PATH_RULES =
  '"/"-separated segments; no empty, "." or ".." segment; no control characters. ' +
  'Normalised (Unicode NFC, surrounding whitespace and leading/trailing "/" removed); case-sensitive.';

/** Shared workspace memory, endpoints 5–9. */
export const MEMORY_ROUTES: Route[] = [
  {
    name: 'memory_list_notes',
    method: 'GET',
    path: '/workspaces/{workspace}/memory',
    operation: 'ListMemoryNotes',
    tag: 'Memory',
    summary: 'List the index of memory notes',
    description:
      'Index entries (path, kind, tags, size in bytes, updatedAt, accessedAt — no bodies), sorted by path (byte order). Cursor-paginated like the changelog.',
    permissions: ['memory.read'],
    query: {
      prefix: paramOf(RULES.notePrefix, 'Directory-like prefix: `ops` matches `ops` and `ops/…`, not `opsx`.'),
      tag: paramOf(RULES.tag, 'Only notes carrying this tag.'),
      kind: paramOf(RULES.noteKindFilter, 'Only notes of this kind.'),
      ...PAGE_QUERY(RULES.pageLimit),
    },
    status: 200,
    list: true,
  },
  {
    name: 'memory_get_note',
    method: 'GET',
    path: '/workspaces/{workspace}/memory/note',
    operation: 'GetMemoryNote',
    tag: 'Memory',
    summary: 'Read a memory note',
    description: 'The note at `path`; reading it advances `accessedAt`. 404 when no note has that path.',
    permissions: ['memory.read'],
    query: pathQuery,
    status: 200,
  },
  {
    name: 'memory_put_note',
    method: 'PUT',
    path: '/workspaces/{workspace}/memory/note',
    operation: 'PutMemoryNote',
    tag: 'Memory',
    summary: 'Create or update a memory note',
    description:
      'Creates the note when `path` is new, updates it when it exists (`id` and `createdAt` stay). Creating a new path counts against the plan quota ' +
      '(free 200, pro 10,000, enterprise unlimited notes per workspace): over it, 409 `memory_quota_exceeded` with `details: {limit, usage, plan}`. ' +
      `Updating an existing path is always allowed. Paths: ${PATH_RULES}`,
    permissions: ['memory.write'],
    body: jsonBody({
      variable: 'input',
      required: ['path', 'body', 'kind', 'links', 'tags'],
      properties: {
        path: schemaOf(RULES.notePath, { description: PATH_RULES }),
        body: schemaOf(RULES.noteBody, { description: 'Markdown.' }),
        kind: schemaOf(RULES.noteKind, {
          description: 'A short token: letters, digits, ".", "_", "-" (e.g. `note`, `decision`, `runbook`).',
        }),
        links: schemaOf(RULES.noteLinks, {
          description: 'Paths of related notes (normalised like `path`) or URLs. Duplicates are dropped.',
        }),
        tags: schemaOf(RULES.noteTags, { description: 'Tags, trimmed; duplicates dropped.' }),
      },
    }),
    status: 200,
    extraErrors: [409],
  },
  {
    name: 'memory_delete_note',
    method: 'DELETE',
    path: '/workspaces/{workspace}/memory/note',
    operation: 'DeleteMemoryNote',
    tag: 'Memory',
    summary: 'Delete a memory note',
    description:
      'Deletes the note at `path` and frees its quota slot. Answers `{ "path": "<normalised path>", "deleted": true }`; 404 when no note has that path.',
    permissions: ['memory.write'],
    query: pathQuery,
    status: 200,
  },
  {
    name: 'memory_search',
    method: 'GET',
    path: '/workspaces/{workspace}/memory/search',
    operation: 'SearchMemory',
    tag: 'Memory',
    summary: 'Full-text search of memory notes',
    description:
      'PostgreSQL full-text search over path segments, tags and body (English stemming; web-search syntax: words, "quoted phrases", `-excluded`, `or`). ' +
      'Hits are ranked (path > tags > body), each with a snippet: the stored text escaped as HTML, with matches in `<mark>…</mark>` and no other markup. ' +
      'Cursor-paginated.',
    permissions: ['memory.read'],
    query: {
      q: paramOf(RULES.query, 'The query (must not be blank).', { required: true }),
      ...PAGE_QUERY(RULES.searchLimit),
    },
    status: 200,
    list: true,
  },
];
