import { NEAR_LIMIT, NEAR_MIN_TRIGRAMS, NEAR_THRESHOLD } from '../../src/services/nearDuplicates.js';
import { memoryQuotasInWords } from '../../src/plans.js';
import { schemaOf } from '../../src/contract/jsonSchema.js';
import { RULES } from '../../src/contract/rules.js';
import { DELETED_HISTORY_DAYS } from '../../src/services/noteHistory.js';
import { NOTE_REVISIONS_KEPT } from '../../src/services/memoryNotes.js';
import { DeleteMemoryNote } from '../../schema/operations/DeleteMemoryNote.js';
import { GetMemoryNote } from '../../schema/operations/GetMemoryNote.js';
import { ListMemoryNotes } from '../../schema/operations/ListMemoryNotes.js';
import { MemoryNoteHistory } from '../../schema/operations/MemoryNoteHistory.js';
import { MemoryNoteRevision } from '../../schema/operations/MemoryNoteRevision.js';
import { PutMemoryNote } from '../../schema/operations/PutMemoryNote.js';
import { SearchMemory } from '../../schema/operations/SearchMemory.js';
import { EXPLAIN_PARAM, fullTextRule, HYBRID_RULE, PAGES_RULE, RANKING_HEADERS } from './search.js';
import { defineRoute, headerOf, jsonBody, PAGE_QUERY, paramOf, versionEtagHeader, type Route } from '../routeDefinition.js';

const pathQuery = {
  path: paramOf(RULES.notePath, 'Note path, e.g. `runbooks/deploy`. Case-sensitive; one leading/trailing "/" is ignored.', {
    required: true,
  }),
};

const noteEtag = versionEtagHeader('The note\'s version ("v<version>"); send it back in `If-Match` to change only that version.');

const ifMatch = headerOf(
  RULES.ifMatch,
  'Change the note only at this version: an ETag from GET or PUT ("v<version>"), several comma-separated, or `*` (any existing note). ' +
    'Otherwise 412 `precondition_failed`, `details.etag` naming the current version (null when no note has the path).',
  'ifMatch',
);

const PATH_RULES =
  '"/"-separated segments; no empty, "." or ".." segment; no control characters. ' +
  'Normalised (Unicode NFC, surrounding whitespace and leading/trailing "/" removed); case-sensitive.';

/** Shared workspace memory, endpoints 5–9. */
export const MEMORY_ROUTES: Route[] = [
  defineRoute({
    name: 'memory_list_notes',
    method: 'GET',
    path: '/workspaces/{workspace}/memory',
    operation: ListMemoryNotes,
    tag: 'Memory',
    summary: 'List the index of memory notes',
    description:
      'Index entries (path, kind, tags, size in bytes, updatedAt, accessedAt — no bodies), sorted by path (byte order). Cursor-paginated like the changelog.',
    query: {
      prefix: paramOf(RULES.notePrefix, 'Directory-like prefix: `ops` matches `ops` and `ops/…`, not `opsx`.'),
      tag: paramOf(RULES.tag, 'Only notes carrying this tag.'),
      kind: paramOf(RULES.noteKindFilter, 'Only notes of this kind.'),
      // The page after a note that sorts before the example's.
      ...PAGE_QUERY(RULES.pageLimit, ['runbooks/backup']),
    },
    status: 200,
    list: true,
  }),
  defineRoute({
    name: 'memory_get_note',
    method: 'GET',
    path: '/workspaces/{workspace}/memory/note',
    operation: GetMemoryNote,
    tag: 'Memory',
    summary: 'Read a memory note',
    description:
      'The note at `path`; reading it advances `accessedAt`. 404 when no note has that path. ' +
      'The `ETag` header names its version; with `If-None-Match` naming it, 304 without a body.',
    query: pathQuery,
    headers: {
      'if-none-match': headerOf(
        RULES.ifNoneMatch,
        'An ETag you hold: 304 (no body) while the note is still at that version.',
        'ifNoneMatch',
        // The example reads the note it just wrote: it holds no older version.
        { example: undefined },
      ),
    },
    responseHeaders: noteEtag,
    status: 200,
  }),
  defineRoute({
    name: 'memory_put_note',
    method: 'PUT',
    path: '/workspaces/{workspace}/memory/note',
    operation: PutMemoryNote,
    tag: 'Memory',
    summary: 'Create or update a memory note',
    description:
      'Creates the note when `path` is new, updates it when it exists (`id` and `createdAt` stay). Creating a new path counts against the plan quota ' +
      `(${memoryQuotasInWords()} notes per workspace): over it, 409 \`memory_quota_exceeded\` with \`details: {limit, usage, plan}\`. ` +
      `Updating an existing path is always allowed. Paths: ${PATH_RULES} ` +
      `Every change raises \`version\` by one and keeps the replaced state in the note's history (the last ${NOTE_REVISIONS_KEPT}). ` +
      'Optimistic concurrency: `If-Match` applies the write only to the version it names (never creates); `If-None-Match: *` only creates. ' +
      'A condition that does not hold is 412 `precondition_failed` with the current ETag in `details.etag`, and nothing changes. ' +
      `When the write creates a new path whose body is very close to existing notes (trigram similarity ≥ ${NEAR_THRESHOLD}, bodies of at least ` +
      `${NEAR_MIN_TRIGRAMS} distinct trigrams), the answer adds \`similar: [{path, score}]\` (closest first, at most ${NEAR_LIMIT}) so the agent can merge ` +
      'instead of keeping a duplicate; the write happens either way, and `similar` is absent otherwise, and always for a key without `memory.read`.',
    headers: {
      // The example creates the note (`If-None-Match: *`); `If-Match` would need one to exist.
      'if-match': { ...ifMatch, example: undefined },
      'if-none-match': headerOf(
        RULES.ifNoneMatch,
        '`*`: create only (412 when a note has the path). ETags: 412 when the note is at one of them.',
        'ifNoneMatch',
        { example: '*' },
      ),
    },
    responseHeaders: noteEtag,
    omitWhenNull: ['similar'],
    // Created with no note like it: no `similar`.
    exampleValues: { similar: undefined },
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
    extraErrors: [409, 412],
  }),
  defineRoute({
    name: 'memory_delete_note',
    method: 'DELETE',
    path: '/workspaces/{workspace}/memory/note',
    operation: DeleteMemoryNote,
    tag: 'Memory',
    summary: 'Delete a memory note',
    description:
      'Deletes the note at `path` and frees its quota slot. Answers `{ "path": "<normalised path>", "deleted": true }`; 404 when no note has that path. ' +
      `Its last state stays in the note's history for ${DELETED_HISTORY_DAYS} days. With \`If-Match\`, only the version it names is deleted (else 412).`,
    query: pathQuery,
    headers: { 'if-match': ifMatch },
    status: 200,
    extraErrors: [412],
  }),
  defineRoute({
    name: 'memory_note_history',
    method: 'GET',
    path: '/workspaces/{workspace}/memory/note/history',
    operation: MemoryNoteHistory,
    tag: 'Memory',
    summary: "List a memory note's history",
    description:
      'The states of the note that later writes replaced or a delete removed, newest first (`version`, kind, tags, links, size, who wrote and ' +
      'replaced it, when; ' +
      `no bodies: read one revision for that). Each note keeps its last ${NOTE_REVISIONS_KEPT}; a deleted note's history stays readable for ` +
      `${DELETED_HISTORY_DAYS} days. ` +
      'Empty for a note never changed; 404 when the path has neither a note nor readable history. Revisions never count against the note quota. ' +
      'Cursor-paginated.',
    // The page after version 2: the example's note was deleted at version 1.
    query: { ...pathQuery, ...PAGE_QUERY(RULES.pageLimit, [2]) },
    status: 200,
    list: true,
  }),
  defineRoute({
    name: 'memory_note_revision',
    method: 'GET',
    path: '/workspaces/{workspace}/memory/note/revisions/{version}',
    operation: MemoryNoteRevision,
    tag: 'Memory',
    summary: 'Read one revision of a memory note',
    description: 'A replaced state of the note at `path`, with its body. 404 when the path has no readable revision of that version.',
    pathParams: { version: paramOf(RULES.version, 'The version the state had (its ETag was "v<version>").') },
    query: pathQuery,
    status: 200,
  }),
  defineRoute({
    name: 'memory_search',
    method: 'GET',
    path: '/workspaces/{workspace}/memory/search',
    operation: SearchMemory,
    tag: 'Memory',
    summary: 'Search memory notes',
    description:
      "Search over path segments, tags and body, each hit with a snippet: the stored text escaped as HTML, with the question's words in " +
      `\`<mark>…</mark>\` and no other markup. ${fullTextRule(['path', 'tag'])}` +
      '`mode=semantic` ranks by embedding similarity of the path, tags and body (score: cosine similarity), falling back to full text when the ' +
      "embedder is unavailable, notes still wait for embeddings (a workspace's first search by meaning queues all its notes), or nothing clears " +
      'the similarity floor; ' +
      `\`mode=hybrid\` ${HYBRID_RULE}, falling back to full text when embeddings cannot be used. ${PAGES_RULE}` +
      '`X-Search-Ranking` says which ranking was used and `X-Search-Fallback` why it fell back. Cursor-paginated.',
    query: {
      q: paramOf(RULES.query, 'The query (must not be blank).', { required: true }),
      mode: {
        schema: { type: 'string', enum: ['fulltext', 'semantic', 'hybrid'] },
        description: 'fulltext (default), semantic, or hybrid.',
      },
      explain: EXPLAIN_PARAM,
      // The first page (offset 0).
      ...PAGE_QUERY(RULES.searchLimit, [0]),
    },
    responseHeaders: RANKING_HEADERS,
    exampleValues: {
      q: 'roll back a deploy',
      snippet:
        '<mark>Deploy</mark>\n\n1. Merge to `main`.\n2. Watch the pipeline; <mark>roll</mark> <mark>back</mark> with `<mark>deploy</mark> --previous` ' +
        'if checks fail',
      // Not asked for (`explain=false`).
      explain: undefined,
    },
    status: 200,
    list: true,
  }),
];
