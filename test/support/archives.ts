import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { gzip, gzipSync } from 'node:zlib';
import { RECORD_TYPES } from '../../src/archive/recordTypes.js';

/** One record line of an archive. */
export interface RecordLine {
  type: string;
  data: Record<string, unknown>;
}

const T = '2026-11-20T10:00:00.000+00:00';
const ORDER = new Map(RECORD_TYPES.map((t, i) => [t.type, i]));

/**
 * A gzip archive of `records` (put in the format's type order) with a header and a trailer whose
 * counts and SHA-256 are right, so an attack passes the checksum and reaches the check it targets.
 */
export function buildArchive(records: RecordLine[], options: ArchiveOptions = {}): Buffer {
  return gzipSync(archiveText(records, options), { level: 1 });
}

/** buildArchive with the compression on the thread pool: a large archive does not hold this process (and the service in it) for seconds. */
export async function buildArchiveAsync(records: RecordLine[], options: ArchiveOptions = {}): Promise<Buffer> {
  return promisify(gzip)(archiveText(records, options), { level: 1 });
}

/** What buildArchive may be told besides the records. */
export interface ArchiveOptions {
  header?: Record<string, unknown>;
  workspace?: Record<string, unknown>;
  /** Lines written as given after the records (still covered by the checksum). */
  extra?: string[];
  organizationId?: string;
  /** Raw JSON text put in place of a string value (e.g. nesting too deep to build as an object). */
  replace?: [string, string];
}

function archiveText(records: RecordLine[], options: ArchiveOptions): Buffer {
  const sorted = [...records].sort((a, b) => (ORDER.get(a.type) ?? 99) - (ORDER.get(b.type) ?? 99));
  const counts: Record<string, number> = {};
  for (const r of sorted) counts[r.type] = (counts[r.type] ?? 0) + 1;
  const header = {
    format: 'wks-archive',
    version: 1,
    workspace: { id: 'source', name: 'Imported', organizationId: options.organizationId ?? 'elsewhere', ...options.workspace },
    createdAt: T,
    counts,
    ...options.header,
  };
  const texts = [JSON.stringify(header), ...sorted.map((r) => JSON.stringify(r)), ...(options.extra ?? [])];
  const [placeholder, raw] = options.replace ?? [];
  const lines = texts.map((l) => Buffer.from(`${placeholder ? l.replace(JSON.stringify(placeholder), raw!) : l}\n`));
  const hash = createHash('sha256');
  for (const line of lines) hash.update(line);
  const trailer = Buffer.from(`${JSON.stringify({ type: 'trailer', counts, sha256: hash.digest('hex') })}\n`);
  return Buffer.concat([...lines, trailer]);
}

/** Valid records of each type (refs numbered by the caller), each with `over` applied. */
export const rec = {
  section: (ref: number, over: Record<string, unknown> = {}): RecordLine => ({
    type: 'section',
    data: {
      key: `section-${ref}`,
      label: `Section ${ref}`,
      visibility: 'public',
      position: ref - 1,
      api_tag: null,
      created_at: T,
      ref,
      ...over,
    },
  }),
  article: (ref: number, over: Record<string, unknown> = {}): RecordLine => ({
    type: 'article',
    data: {
      section_id: 1,
      slug: `article-${ref}`,
      title: `Article ${ref}`,
      markdown: 'Some text.',
      status: 'DRAFT',
      visibility: 'public',
      position: ref - 1,
      version: 1,
      created_at: T,
      updated_at: T,
      published_at: null,
      api_operation_key: null,
      api_operation_hash: null,
      api_state: null,
      api_method: null,
      api_path: null,
      ref,
      ...over,
    },
  }),
  gapGroup: (ref: number, over: Record<string, unknown> = {}): RecordLine => ({
    type: 'content_gap_group',
    data: {
      label: `Question ${ref}?`,
      centroid: [],
      report_count: 1,
      search_count: 0,
      first_seen: T,
      last_seen: T,
      nearest_article_slug: null,
      resolved_at: null,
      ref,
      ...over,
    },
  }),
  proposal: (ref: number, over: Record<string, unknown> = {}): RecordLine => ({
    type: 'proposal',
    data: {
      kind: 'new',
      status: 'open',
      article_slug: null,
      base_version: null,
      section: 'section-1',
      title: 'A draft',
      markdown: 'Draft text.',
      summary: 'Adds a page',
      agent_key_id: null,
      member_id: null,
      reviewed_by: null,
      reviewed_at: null,
      reason: null,
      created_at: T,
      gap_group_id: null,
      ref,
      ...over,
    },
  }),
  changelog: (ref: number, over: Record<string, unknown> = {}): RecordLine => ({
    type: 'changelog_entry',
    data: {
      author: 'key',
      title: `Entry ${ref}`,
      markdown: 'Changed.',
      status: 'draft',
      tags: [],
      created_at: T,
      updated_at: T,
      published_at: null,
      ref,
      ...over,
    },
  }),
  note: (ref: number, over: Record<string, unknown> = {}): RecordLine => ({
    type: 'memory_note',
    data: {
      path: `notes/${ref}`,
      kind: 'note',
      body: `Note ${ref}`,
      links: [],
      tags: [],
      created_at: T,
      updated_at: T,
      accessed_at: T,
      version: 1,
      written_by_key_id: null,
      ref,
      ...over,
    },
  }),
  noteRevision: (path: string, version: number, over: Record<string, unknown> = {}): RecordLine => ({
    type: 'memory_note_revision',
    data: {
      path,
      version,
      kind: 'note',
      body: 'Before',
      links: [],
      tags: [],
      written_by_key_id: null,
      written_at: T,
      replaced_by_key_id: null,
      replaced_at: T,
      deleted: false,
      ...over,
    },
  }),
  /** An upload of `bytes`, claiming what a genuine one would unless `over` says otherwise. */
  upload: (id: string, bytes: Buffer, over: Record<string, unknown> = {}): RecordLine => ({
    type: 'upload',
    data: {
      id,
      content_type: 'image/png',
      extension: 'png',
      size: bytes.length,
      width: 1,
      height: 1,
      sha256: createHash('sha256').update(bytes).digest('hex'),
      data: bytes.toString('base64'),
      created_at: T,
      ...over,
    },
  }),
};

/** POSTs an archive body with the admin token (or `token`, or none). */
export async function postArchive(base: string, path: string, bytes: Buffer, token: string | null) {
  const headers: Record<string, string> = { 'content-type': 'application/gzip' };
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await fetch(`${base}${path}`, { method: 'POST', headers, body: new Uint8Array(bytes) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
}
