/**
 * Documents as connectors read them (ChatGPT's connectors and deep research, basic-memory's pair):
 * search results named `{ id, title, url }` and `fetch` by such an id answering
 * `{ id, title, text, url, metadata }`. An id is `article:<slug>`, `note:<path>` or
 * `changelog:<id>`; `url` is the document's page in the console, absolute. A text longer than the
 * cap (FETCH_MAX_CHARS, default 100,000 characters; Claude cuts a tool result at about 150,000) is
 * cut at a paragraph, and `metadata` says where to fetch on.
 */
import type { Scope } from '../auth/authorize.js';
import type { RequestContext } from '../context.js';
import { invalidField, NotFoundError } from '../errors.js';
import type { FetchedDocument, FetchMetadata } from '../types/documents.js';
import { publishedChangelogEntry } from '../store/changelog.js';
import { getArticle } from './articles.js';
import { getNote } from './memoryNotes.js';

/** The kinds of document an id names. */
export const DOCUMENT_KINDS = ['article', 'note', 'changelog'] as const;
export type DocumentKind = (typeof DOCUMENT_KINDS)[number];

/** The kind an id names (`article:…`), or null for none of them. */
export function kindOfId(id: unknown): DocumentKind | null {
  if (typeof id !== 'string') return null;
  const kind = id.slice(0, id.indexOf(':'));
  return (DOCUMENT_KINDS as readonly string[]).includes(kind) ? (kind as DocumentKind) : null;
}

/** A document's id. */
export const documentId = (kind: DocumentKind, key: string | number) => `${kind}:${key}`;

/**
 * A document's page in the console: the workspace named in the address, so the link opens the
 * right workspace whichever one the browser chose last.
 */
export function documentUrl(origin: string, workspaceId: string, kind: DocumentKind, key: string | number): string {
  const page = kind === 'note' ? 'notes' : kind === 'article' ? 'articles' : 'changelog';
  return `${origin}/console/#/ws/${workspaceId}/${page}/${encodeURIComponent(String(key))}`;
}

interface Whole {
  title: string;
  text: string;
  metadata: Omit<FetchMetadata, 'offset' | 'totalChars' | 'truncated' | 'nextOffset' | 'readOn'>;
}

/** A document by id, its text from `offset` (characters) up to the cap, cut at a paragraph. 404 for what the caller may not read. */
export async function fetchDocument(
  ctx: RequestContext,
  scope: Scope,
  args: { id: string; offset?: number | null },
): Promise<FetchedDocument> {
  const kind = kindOfId(args.id);
  const key = kind ? args.id.slice(kind.length + 1) : '';
  if (!kind || !key) throw invalidField('id', 'must be article:<slug>, note:<path> or changelog:<id>, as search results name documents');
  const whole = await wholeDocument(ctx, scope, kind, key);
  const chars = Array.from(whole.text);
  const offset = args.offset ?? 0;
  if (offset > chars.length) throw invalidField('offset', `is past the end of the text (${chars.length} characters)`);
  const end = cutAt(chars, offset, ctx.documents.maxChars);
  const truncated = end < chars.length;
  return {
    id: args.id,
    title: whole.title,
    text: chars.slice(offset, end).join(''),
    url: documentUrl(ctx.origin, scope.workspaceId, kind, key),
    metadata: {
      ...whole.metadata,
      offset,
      totalChars: chars.length,
      truncated,
      nextOffset: truncated ? end : null,
      readOn: truncated
        ? `The text goes on for ${chars.length - end} more characters: call fetch with {"id": ${JSON.stringify(args.id)}, "offset": ${end}}.`
        : null,
    },
  };
}

/**
 * Where a piece from `offset` ends: the end of the text when it fits in `max` characters, else the
 * last paragraph break (a blank line) within them, else the last line break, else `max` itself.
 */
export function cutAt(chars: string[], offset: number, max: number): number {
  if (chars.length - offset <= max) return chars.length;
  const limit = offset + max;
  let line = -1;
  for (let i = limit - 1; i > offset; i--) {
    if (chars[i] !== '\n') continue;
    if (chars[i - 1] === '\n') return i + 1;
    if (line < 0) line = i + 1;
  }
  return line > 0 ? line : limit;
}

async function wholeDocument(ctx: RequestContext, scope: Scope, kind: DocumentKind, key: string): Promise<Whole> {
  if (kind === 'article') {
    const a = await getArticle(ctx, scope, key);
    return {
      title: a.title,
      text: a.markdown,
      metadata: { type: kind, key: a.slug, version: a.version, status: a.status, section: a.sectionKey, updatedAt: a.updatedAt },
    };
  }
  if (kind === 'note') {
    const n = await getNote(ctx, scope, key);
    return {
      title: n.path,
      text: n.body,
      metadata: { type: kind, key: n.path, version: n.version, status: null, section: n.kind, updatedAt: n.updatedAt },
    };
  }
  const id = /^[1-9]\d{0,9}$/.test(key) ? Number(key) : NaN;
  const entry = id <= 2_147_483_647 ? await publishedChangelogEntry(ctx.db, scope.workspaceId, id) : undefined;
  if (!entry) throw new NotFoundError('Changelog entry');
  return {
    title: entry.title,
    text: entry.markdown,
    metadata: { type: kind, key, version: null, status: entry.status, section: null, updatedAt: new Date(entry.updated_at) },
  };
}
