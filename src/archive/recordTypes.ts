/** The record types of the workspace archive (format.ts): which table each comes from and how its rows refer to each other. */

/**
 * One kind of record: its table, the columns of `data` (besides `ref`), whether records carry a
 * `ref` (their 1-based position among records of that type, which other records use instead of
 * database ids), and which columns hold refs to records of an earlier type.
 */
export interface RecordType {
  type: string;
  table: string;
  columns: readonly string[];
  ref: boolean;
  refs?: Readonly<Record<string, string>>;
  /** Keyset order of the export (a unique, import-stable order). */
  order: readonly string[];
  /** Columns of Markdown or note text in which `/uploads/<id>.` links are rewritten on import. */
  text?: readonly string[];
}

/** Every record type, in archive order: a type only refers to types before it. */
export const RECORD_TYPES: readonly RecordType[] = [
  {
    type: 'openapi_spec',
    table: 'api_specs',
    ref: false,
    order: ['id'],
    columns: [
      'source',
      'url',
      'raw',
      'title',
      'version',
      'openapi_version',
      'operation_count',
      'last_sync',
      'last_sync_at',
      'last_sync_result',
      'last_sync_error',
      'warnings',
      'created_at',
    ],
  },
  {
    type: 'section',
    table: 'sections',
    ref: true,
    order: ['id'],
    columns: ['key', 'label', 'visibility', 'position', 'api_tag', 'created_at'],
  },
  {
    type: 'article',
    table: 'articles',
    ref: true,
    order: ['id'],
    refs: { section_id: 'section' },
    text: ['markdown'],
    columns: [
      'section_id',
      'slug',
      'title',
      'markdown',
      'status',
      'visibility',
      'position',
      'version',
      'created_at',
      'updated_at',
      'published_at',
      'api_operation_key',
      'api_operation_hash',
      'api_state',
      'api_method',
      'api_path',
    ],
  },
  {
    type: 'content_gap_group',
    table: 'content_gap_groups',
    ref: true,
    order: ['id'],
    columns: ['label', 'centroid', 'report_count', 'search_count', 'first_seen', 'last_seen', 'nearest_article_slug', 'resolved_at'],
  },
  {
    type: 'proposal',
    table: 'proposals',
    ref: true,
    order: ['id'],
    refs: { gap_group_id: 'content_gap_group' },
    text: ['markdown'],
    columns: [
      'kind',
      'status',
      'article_slug',
      'base_version',
      'section',
      'title',
      'markdown',
      'summary',
      'agent_key_id',
      'member_id',
      'reviewed_by',
      'reviewed_at',
      'reason',
      'created_at',
      'gap_group_id',
    ],
  },
  {
    type: 'article_revision',
    table: 'article_revisions',
    ref: false,
    order: ['article_id', 'version'],
    refs: { article_id: 'article', section_id: 'section', proposal_id: 'proposal' },
    text: ['markdown'],
    columns: [
      'article_id',
      'version',
      'title',
      'markdown',
      'status',
      'visibility',
      'section_id',
      'position',
      'restricted',
      'action',
      'changed',
      'summary',
      'agent_key_id',
      'member_id',
      'proposal_id',
      'restored_from',
      'created_at',
    ],
  },
  {
    type: 'changelog_entry',
    table: 'changelog_entries',
    ref: true,
    order: ['id'],
    text: ['markdown'],
    columns: ['author', 'title', 'markdown', 'status', 'tags', 'created_at', 'updated_at', 'published_at'],
  },
  {
    type: 'memory_note',
    table: 'memory_notes',
    ref: true,
    order: ['id'],
    text: ['body'],
    columns: ['path', 'kind', 'body', 'links', 'tags', 'created_at', 'updated_at', 'accessed_at', 'version', 'written_by_key_id'],
  },
  {
    type: 'memory_note_revision',
    table: 'memory_note_revisions',
    ref: false,
    order: ['path', 'version'],
    text: ['body'],
    columns: [
      'path',
      'version',
      'kind',
      'body',
      'links',
      'tags',
      'written_by_key_id',
      'written_at',
      'replaced_by_key_id',
      'replaced_at',
      'deleted',
    ],
  },
  {
    type: 'content_gap_report',
    table: 'content_gap_reports',
    ref: true,
    order: ['id'],
    refs: { group_id: 'content_gap_group' },
    columns: ['question', 'slug', 'slug_known', 'redacted', 'agent_key_id', 'group_id', 'created_at'],
  },
  {
    type: 'upload',
    table: 'uploads',
    ref: false,
    order: ['created_at', 'sha256', 'id'],
    columns: ['id', 'content_type', 'extension', 'size', 'width', 'height', 'sha256', 'data', 'created_at'],
  },
];

export const TYPE_BY_NAME = new Map(RECORD_TYPES.map((t) => [t.type, t]));
