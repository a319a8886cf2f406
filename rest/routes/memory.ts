import { LIMITS } from '../../src/limits.js';
import { PAGE_QUERY, type ParamDef, type Route } from '../route.js';

const pathQuery: Record<string, ParamDef> = {
  path: {
    schema: { type: 'string', minLength: 1, maxLength: LIMITS.memoryPathBytes },
    required: true,
    description: 'Note path, e.g. `runbooks/deploy`. Case-sensitive; one leading/trailing "/" is ignored.',
  },
};

const PATH_RULES =
  '"/"-separated segments; no empty, "." or ".." segment; no control characters; at most 512 bytes in UTF-8. ' +
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
    description: 'Index entries (path, kind, tags, size in bytes, updatedAt, accessedAt — no bodies), sorted by path (byte order). Cursor-paginated like the changelog.',
    permissions: ['memory.read'],
    query: {
      prefix: { schema: { type: 'string', maxLength: LIMITS.memoryPathBytes }, description: 'Directory-like prefix: `ops` matches `ops` and `ops/…`, not `opsx`.' },
      tag: { schema: { type: 'string', maxLength: LIMITS.tagLength }, description: 'Only notes carrying this tag.' },
      kind: { schema: { type: 'string', maxLength: 32 }, description: 'Only notes of this kind.' },
      ...PAGE_QUERY(LIMITS.pageMax, LIMITS.pageDefault),
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
    body: {
      variable: 'input',
      schema: {
        type: 'object',
        additionalProperties: false,
        required: ['path', 'body', 'kind', 'links', 'tags'],
        properties: {
          path: { type: 'string', minLength: 1, maxLength: LIMITS.memoryPathBytes, description: PATH_RULES },
          body: { type: 'string', maxLength: LIMITS.memoryBodyBytes, description: 'Markdown, at most 16,384 bytes in UTF-8 (16 KiB).' },
          kind: { type: 'string', pattern: LIMITS.memoryKindPattern, description: 'A short token: letters, digits, ".", "_", "-"; at most 32 characters (e.g. `note`, `decision`, `runbook`).' },
          links: {
            type: 'array',
            maxItems: LIMITS.memoryLinkCount,
            items: { type: 'string', minLength: 1, maxLength: LIMITS.memoryLinkBytes },
            description: `Paths of related notes (normalised like \`path\`) or URLs; at most ${LIMITS.memoryLinkCount}, each at most ${LIMITS.memoryLinkBytes} bytes. Duplicates are dropped.`,
          },
          tags: {
            type: 'array',
            maxItems: LIMITS.tagCount,
            items: { type: 'string', minLength: 1, maxLength: LIMITS.tagLength },
            description: `At most ${LIMITS.tagCount} tags of 1–${LIMITS.tagLength} characters; trimmed, duplicates dropped.`,
          },
        },
      },
    },
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
    description: 'Deletes the note at `path` and frees its quota slot. Answers `{ "path": "<normalised path>", "deleted": true }`; 404 when no note has that path.',
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
      'Hits are ranked (path > tags > body), each with a snippet whose matches are wrapped in `<mark>…</mark>`. Cursor-paginated.',
    permissions: ['memory.read'],
    query: {
      q: { schema: { type: 'string', minLength: 1, maxLength: LIMITS.searchQueryLength }, required: true, description: 'The query (must not be blank).' },
      ...PAGE_QUERY(LIMITS.searchPageMax, LIMITS.searchPageDefault),
    },
    status: 200,
    list: true,
  },
];
