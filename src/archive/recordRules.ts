/**
 * What each column of an archive record may hold: the API's input contract (RULES and its
 * checker) wherever the API takes the same value, the declared value sets for statuses, kinds and
 * states, RFC 3339 timestamps, and JSON types. Text derived from an attached OpenAPI spec (its
 * generated pages and sections) is bounded by the rule the spec itself was accepted under.
 */
import { checkRule, issueInside, stringIssue, textIssue } from '../contract/check.js';
import { RULES, type IntRule, type Rule, type StringRule } from '../contract/rules.js';
import { API_STATES, ARTICLE_STATUSES } from '../entities/Article.js';
import { CHANGELOG_STATUSES } from '../entities/ChangelogEntry.js';
import { PROPOSAL_KINDS, PROPOSAL_STATUSES } from '../entities/Proposal.js';
import { VISIBILITIES } from '../entities/Section.js';
import type { FieldIssue } from '../errors.js';
import { InvalidRequestError } from '../errors.js';
import { isUuid } from '../ids.js';
import { ARTICLE_CHANGE_ACTIONS } from '../services/articles.js';
import { normalizePath } from '../services/memoryPaths.js';
import { RawString } from './bounds.js';

/** What a column's value must be, before its rule: a JSON type (and null when nullable). */
type Kind = 'text' | 'int' | 'bool' | 'uuid' | 'strings' | 'json' | 'numbers' | 'ref' | 'derived' | 'bytes';

/** Facts about records read earlier that decide a later record's rules. */
export interface RecordFacts {
  /** Refs of articles generated from the spec (their revisions' text follows the spec's rule). */
  generatedArticles: Set<number>;
}

type Data = Record<string, unknown>;

interface Column {
  kind: Kind;
  rule?: Rule | ((data: Data, facts: RecordFacts) => Rule);
  nullable?: boolean;
  /** A check beyond the rule (run only on a value that passed it): what is wrong, or null. */
  check?: (value: never, field: string) => string | null;
}

/** One of the declared values (the bound is the longest of them). */
const oneOf = (values: readonly string[]): StringRule => ({
  kind: 'string',
  maxLength: Math.max(...values.map((v) => v.length)),
  oneOf: values,
});
/** A counter that later writes raise: half the rule's range stays free for them (a version of 2^31-1 could not be edited). */
const headroom = (rule: IntRule): IntRule => ({ ...rule, maximum: Math.floor(rule.maximum / 2) });

const text = (rule: Column['rule'], more: Partial<Column> = {}): Column => ({ kind: 'text', rule, ...more });
const optional = (column: Column): Column => ({ ...column, nullable: true });
const int = (rule: IntRule): Column => ({ kind: 'int', rule });
const bool: Column = { kind: 'bool' };
const time: Column = text(RULES.dateTime);
const version = int(headroom(RULES.version));
const counter = int(headroom(RULES.count));
const ref: Column = { kind: 'ref' };
/** A member or agent key id: kept only when it names one of the importing organization (see the import). */
const foreignId: Column = { kind: 'uuid', nullable: true };
/** Upload columns the import derives from the bytes: never read. */
const derived: Column = { kind: 'derived' };
/** Text the service derives from an attached spec: bounded as the spec is. */
const fromSpec = optional(text(RULES.spec));

/** The names the revision trigger records in `changed`. */
const REVISION_FIELDS = ['title', 'markdown', 'status', 'visibility', 'section', 'position', 'apiState'] as const;
/** A revision written when history began records the action `baseline`. */
const REVISION_ACTIONS = [...ARTICLE_CHANGE_ACTIONS, 'baseline'];
/** Links that name a URL scheme are kept as sent, like the note service keeps them. */
const URL_SCHEME = /^[a-z][a-z0-9+.-]*:/i;
/** An upload's id in its archive: what `/uploads/<id>.` links name. */
const UPLOAD_REF: StringRule = {
  kind: 'string',
  maxLength: 64,
  minLength: 16,
  pattern: { source: '^[A-Za-z0-9_-]{16,64}$', message: 'must be 16 to 64 letters, digits, "-" or "_"' },
};

/** A note path exactly as the note service stores it (normalised, no control characters or dot segments). */
function notePathIssue(value: string, field: string): string | null {
  try {
    return normalizePath(value, field) === value ? null : 'must be a normalised note path (no surrounding "/" or white space, NFC)';
  } catch (error) {
    if (!(error instanceof InvalidRequestError)) throw error;
    return ((error.details as FieldIssue[] | null) ?? [])[0]?.message ?? error.message;
  }
}

const notePath = text(RULES.notePath, { check: notePathIssue });
const noteLinks: Column = {
  kind: 'strings',
  rule: RULES.noteLinks,
  check: (links: string[], field) =>
    links.map((link) => (URL_SCHEME.test(link) ? null : notePathIssue(link, field))).find((issue) => issue) ?? null,
};
const noteTags: Column = {
  kind: 'strings',
  rule: RULES.noteTags,
  check: (tags: string[]) => (tags.every((t) => t.trim() === t && t !== '') ? null : 'must hold trimmed, non-blank tags'),
};

/** An article's title and Markdown follow the API's rules, a generated page's the spec's. */
const pageText = (own: Rule) => (data: Data) => (data.api_operation_key === null ? own : RULES.spec);
const revisionText = (own: Rule) => (data: Data, facts: RecordFacts) =>
  facts.generatedArticles.has(data.article_id as number) ? RULES.spec : own;

/** The columns of every record type (RECORD_TYPES lists the same names; a test keeps them equal). */
export const RECORD_COLUMNS: Record<string, Record<string, Column>> = {
  openapi_spec: {
    source: text(oneOf(['raw', 'url'])),
    url: optional(text(RULES.url)),
    raw: text(RULES.spec),
    title: fromSpec,
    version: fromSpec,
    openapi_version: fromSpec,
    operation_count: int(RULES.count),
    last_sync: { kind: 'json', rule: RULES.spec, nullable: true },
    last_sync_at: optional(time),
    last_sync_result: optional(text(oneOf(['ok', 'failed']))),
    last_sync_error: fromSpec,
    warnings: { kind: 'json', rule: RULES.spec },
    created_at: time,
  },
  section: {
    key: text(RULES.newSlug),
    // A section made for an OpenAPI tag is labelled with the tag.
    label: text((data) => (data.api_tag === null ? RULES.label : RULES.spec)),
    visibility: text(oneOf(VISIBILITIES)),
    position: int(RULES.position),
    api_tag: fromSpec,
    created_at: time,
  },
  article: {
    section_id: ref,
    slug: text(RULES.newSlug),
    title: text(pageText(RULES.title)),
    markdown: text(pageText(RULES.markdown)),
    status: text(oneOf(ARTICLE_STATUSES)),
    visibility: text(oneOf(VISIBILITIES)),
    position: int(RULES.position),
    version,
    created_at: time,
    updated_at: time,
    published_at: optional(time),
    api_operation_key: fromSpec,
    api_operation_hash: fromSpec,
    api_state: optional(text(oneOf(API_STATES))),
    api_method: fromSpec,
    api_path: fromSpec,
  },
  content_gap_group: {
    // A group is named by its first question.
    label: text(RULES.question),
    centroid: { kind: 'numbers' },
    report_count: counter,
    search_count: counter,
    first_seen: time,
    last_seen: time,
    nearest_article_slug: optional(text(RULES.articleRef)),
    resolved_at: optional(time),
  },
  proposal: {
    kind: text(oneOf(PROPOSAL_KINDS)),
    status: text(oneOf(PROPOSAL_STATUSES)),
    article_slug: optional(text(RULES.articleRef)),
    base_version: optional(version),
    section: optional(text(RULES.sectionKey)),
    title: optional(text(RULES.title)),
    markdown: optional(text(RULES.markdown)),
    summary: text(RULES.summary),
    agent_key_id: foreignId,
    member_id: foreignId,
    reviewed_by: foreignId,
    reviewed_at: optional(time),
    reason: optional(text(RULES.reason)),
    created_at: time,
    gap_group_id: ref,
  },
  article_revision: {
    article_id: ref,
    version,
    title: text(revisionText(RULES.title)),
    markdown: text(revisionText(RULES.markdown)),
    status: text(oneOf(ARTICLE_STATUSES)),
    visibility: text(oneOf(VISIBILITIES)),
    section_id: ref,
    position: int(RULES.position),
    restricted: bool,
    action: text(oneOf(REVISION_ACTIONS)),
    changed: { kind: 'strings', rule: { kind: 'list', maxItems: REVISION_FIELDS.length, items: oneOf(REVISION_FIELDS) } },
    summary: optional(text(RULES.summary)),
    agent_key_id: foreignId,
    member_id: foreignId,
    proposal_id: ref,
    restored_from: optional(version),
    created_at: time,
  },
  changelog_entry: {
    // The author is the writing key's name.
    author: text(RULES.name),
    title: text(RULES.title),
    markdown: text(RULES.markdown),
    status: text(oneOf(CHANGELOG_STATUSES)),
    tags: { kind: 'strings', rule: RULES.changelogTags },
    created_at: time,
    updated_at: time,
    published_at: optional(time),
  },
  memory_note: {
    path: notePath,
    kind: text(RULES.noteKind),
    body: text(RULES.noteBody),
    links: noteLinks,
    tags: noteTags,
    created_at: time,
    updated_at: time,
    accessed_at: time,
    version,
    written_by_key_id: foreignId,
  },
  memory_note_revision: {
    path: notePath,
    version,
    kind: text(RULES.noteKind),
    body: text(RULES.noteBody),
    links: noteLinks,
    tags: noteTags,
    written_by_key_id: foreignId,
    written_at: time,
    replaced_by_key_id: foreignId,
    replaced_at: time,
    deleted: bool,
  },
  content_gap_report: {
    question: optional(text(RULES.question)),
    slug: optional(text(RULES.reportSlug)),
    slug_known: bool,
    redacted: bool,
    agent_key_id: foreignId,
    group_id: ref,
    created_at: time,
  },
  upload: {
    id: text(UPLOAD_REF),
    content_type: derived,
    extension: derived,
    size: derived,
    width: derived,
    height: derived,
    sha256: derived,
    // Base64 of an image within the upload limits: decoded and checked by the import (contents.ts).
    data: { kind: 'bytes' },
    created_at: time,
  },
};

/** What is wrong with the value's JSON type, or null. */
function kindIssue(kind: Kind, value: unknown): string | null {
  switch (kind) {
    case 'text':
      return typeof value === 'string' ? textIssue(value) : 'must be a string';
    case 'int':
      return Number.isInteger(value) ? null : 'must be an integer';
    case 'bool':
      return typeof value === 'boolean' ? null : 'must be true or false';
    case 'uuid':
      return typeof value === 'string' && isUuid(value) ? null : 'must be a UUID';
    case 'strings':
      if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) return 'must be a list of strings';
      return value.map((v: string) => textIssue(v)).find((issue) => issue) ?? null;
    case 'numbers':
      return Array.isArray(value) && value.every((v) => typeof v === 'number' && Number.isFinite(v)) ? null : 'must be a list of numbers';
    case 'json':
      return issueInside(value, textIssue);
    case 'bytes':
      return typeof value === 'string' || value instanceof RawString ? null : 'must be a base64 string';
    case 'ref':
    case 'derived':
      return null;
  }
}

/** Everything wrong with a record's columns (its shape and refs are format.ts's), each issue naming `<type>[<position>].<column>`. */
export function recordIssues(type: string, position: number, data: Data, facts: RecordFacts): FieldIssue[] {
  const issues: FieldIssue[] = [];
  for (const [column, spec] of Object.entries(RECORD_COLUMNS[type])) {
    const value = data[column];
    const field = `${type}[${position}].${column}`;
    if (value === null && (spec.nullable || spec.kind === 'ref')) continue;
    const issue = value === null ? 'must not be null' : kindIssue(spec.kind, value);
    if (issue) {
      issues.push({ field, message: issue, in: 'body' });
      continue;
    }
    const rule = typeof spec.rule === 'function' ? spec.rule(data, facts) : spec.rule;
    const before = issues.length;
    if (rule) checkRule(rule, value, field, issues);
    const extra = issues.length === before ? spec.check?.(value as never, field) : null;
    if (extra) issues.push({ field, message: extra, in: 'body' });
  }
  for (const issue of issues) issue.in = 'body';
  return issues;
}

/** A workspace name (the archive's, or `?name=` on import) as the API takes it, and storable: what is wrong, or null. */
export function workspaceNameIssue(name: string): string | null {
  return stringIssue(RULES.name, name) ?? textIssue(name);
}

/** What is wrong with the header's workspace and time (its format, version and counts are format.ts's). */
export function headerIssues(header: { workspace: { id: string; name: string; organizationId: string }; createdAt: string }): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const name = workspaceNameIssue(header.workspace.name);
  if (name) issues.push({ field: 'header.workspace.name', message: name, in: 'body' });
  checkRule(RULES.id, header.workspace.id, 'header.workspace.id', issues);
  checkRule(RULES.id, header.workspace.organizationId, 'header.workspace.organizationId', issues);
  if (typeof header.createdAt !== 'string') issues.push({ field: 'header.createdAt', message: 'must be a string', in: 'body' });
  else checkRule(RULES.dateTime, header.createdAt, 'header.createdAt', issues);
  for (const issue of issues) issue.in = 'body';
  return issues;
}
