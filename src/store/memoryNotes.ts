/** Statements on memory_notes: a note's reads, its PUT and delete (with revision, quota slot and embedding work), the index, backlinks. */
import { MEMORY_QUOTA } from '../plans.js';
import { pgArray, sql, type SqlTarget } from '../db/sql.js';
import { ENQUEUE_EMBEDDING, UNEMBED_DELETED } from './embeddings.js';
import { nearKeysParam } from './noteNearKeys.js';

/**
 * When the note of row `t` was last read or written: the later of its row's time (its last write
 * or import) and its memory_note_access row's (reads touch that narrow row, not the note's).
 */
export const ACCESSED_AT = (t: string) =>
  `greatest(${t}.accessed_at, (select a.accessed_at from memory_note_access a where a.note_id = ${t}.id))`;
const STORED_COLUMNS = 'id, workspace_id, path, kind, body, links, tags, version, created_at, updated_at';
/** A note's columns from row `t` of memory_notes, its access time included (as `accessed_at`). */
const NOTE_COLUMNS_OF = (t: string) => `${STORED_COLUMNS.replace(/(\w+)/g, `${t}.$1`)}, ${ACCESSED_AT(t)} as accessed_at`;
const NOTE_COLUMNS = `${STORED_COLUMNS}, accessed_at`;
/**
 * SQL: an instant as JSON's ISO text (what wks_iso gives), written out in the statement: a call of
 * the SQL function, which cannot be inlined (to_char is stable, the function immutable), parsed and
 * planned its body again on every execution, four times per PUT.
 */
const isoText = (instant: string) => `to_char(${instant} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
/**
 * SQL: the note of row `t` as REST returns it, for the `object` of its events (see
 * wks_event_payload); NOTE_PREVIOUS: what an update changed (`cur`: the row before, `n`: after).
 */
const noteJson = (t: string) =>
  `jsonb_build_object('id', ${t}.id, 'workspaceId', ${t}.workspace_id, 'path', ${t}.path, 'kind', ${t}.kind, 'body', ${t}.body,
     'links', to_jsonb(${t}.links), 'tags', to_jsonb(${t}.tags), 'version', ${t}.version, 'createdAt', ${isoText(`${t}.created_at`)},
     'updatedAt', ${isoText(`${t}.updated_at`)}, 'accessedAt', ${isoText(`${t}.accessed_at`)})`;
const NOTE_PREVIOUS = `jsonb_build_object('version', cur.version, 'updatedAt', ${isoText('cur.updated_at')})
     || case when cur.kind is distinct from n.kind then jsonb_build_object('kind', cur.kind) else '{}' end
     || case when cur.body is distinct from n.body then jsonb_build_object('body', cur.body) else '{}' end
     || case when cur.links is distinct from n.links then jsonb_build_object('links', to_jsonb(cur.links)) else '{}' end
     || case when cur.tags is distinct from n.tags then jsonb_build_object('tags', to_jsonb(cur.tags)) else '{}' end`;
const ENTRY_COLUMNS = `n.path, n.kind, n.tags, octet_length(n.body) as size, n.updated_at, ${ACCESSED_AT('n')} as accessed_at`;

/** A row of memory_notes (NOTE_COLUMNS), with what PUT_NOTE adds. */
export interface NoteRow {
  id: number;
  workspace_id: string;
  path: string;
  kind: string;
  body: string;
  links: string[];
  tags: string[];
  version: number;
  created_at: string;
  updated_at: string;
  accessed_at: string;
  action?: string;
  /** The write queued the note for embedding. */
  queued?: boolean;
}

/**
 * What a note's PUT (UPDATE_NOTE or PUT_NOTE) returns of the note it wrote: what the database
 * decided. The rest of the note is the written values (the body of a 4 KB note would otherwise come
 * back on every PUT).
 */
export type PutNoteRow = Pick<NoteRow, 'id' | 'version' | 'created_at' | 'updated_at' | 'accessed_at' | 'action' | 'queued'>;

/** An index entry row (ENTRY_COLUMNS). */
export interface EntryRow {
  path: string;
  kind: string;
  tags: string[];
  size: string;
  updated_at: string;
  accessed_at: string;
}

/** SQL for a plan's memory-note quota (null: unlimited), from MEMORY_QUOTA. */
const QUOTA_OF = (plan: string) =>
  `case ${plan} ${Object.entries(MEMORY_QUOTA)
    .map(([p, n]) => `when '${p}' then ${n ?? 'null'}`)
    .join(' ')} end`;

// The parts of PUT_NOTE, one rule each, so the quota, the revision or the embedding queue is changed in its own part.
/** `cur`: the note at the path as it stands, locked for the rest of the statement (none: a create). */
const CURRENT = `cur as (
              select id, version, kind, body, links, tags, written_by_key_id, updated_at, ${ACCESSED_AT('memory_notes')} as accessed_at from memory_notes
               where workspace_id = :workspace and path = :path for update)`;

/**
 * `upd`: the update, when one is allowed (`:may_update`) and the preconditions hold (If-Match and
 * If-None-Match versions): the next version, and the row with its event's action and payload (the
 * new object and the previous one). The access time carries over.
 */
const UPDATE = `upd as (
              update memory_notes n set kind = :kind, body = :body, links = :links::text[], tags = :tags::text[],
                     version = cur.version + 1, written_by_key_id = :key, updated_at = :now, near_keys = :near_keys::int[],
                     accessed_at = cur.accessed_at
                from cur
               where n.id = cur.id and :may_update
                 and (:match::int[] is null or cur.version = any(:match::int[]))
                 and not coalesce(cur.version = any(:none_match::int[]), false)
              returning ${NOTE_COLUMNS.replace(/(\w+)/g, 'n.$1')}, 'memory.note.updated' as action,
                        wks_event_payload(${noteJson('n')}, ${NOTE_PREVIOUS}) as payload)`;

/** `kept`: the replaced state kept as a revision, when the update happened and history is on (`:keep` > 0). */
const KEEP_REVISION = `kept as (
              insert into memory_note_revisions (workspace_id, path, version, kind, body, links, tags, written_by_key_id, written_at, replaced_by_key_id, replaced_at)
              select :workspace, :path, cur.version, cur.kind, cur.body, cur.links, cur.tags, cur.written_by_key_id, cur.updated_at, :key, :now
                from cur where exists (select 1 from upd) and :keep::int > 0)`;

/** `trimmed`: the path's revisions beyond the newest `:keep` dropped. */
const TRIM_REVISIONS = `trimmed as (
              delete from memory_note_revisions
               where workspace_id = :workspace and path = :path and version <= (select version from upd) - :keep::int - 1)`;

/**
 * `plan`: a create only (`:may_create`, no note at the path): the organization's quota by its plan,
 * under a share lock, so a plan change waits for the creates in flight.
 */
const PLAN_QUOTA = `plan as (
              select ${QUOTA_OF('o.plan')} as quota from organizations o
               where o.id = :organization and :may_create and not exists (select 1 from cur) for share)`;

/** `slot`: a slot taken in memory_usage when the plan has a quota; none past it (nothing is then inserted, and the service answers 409). */
const QUOTA_SLOT = `slot as (
              insert into memory_usage as u (workspace_id, used) select :workspace, 1 from plan where quota is not null
              on conflict (workspace_id) do update set used = u.used + 1 where u.used < (select quota from plan)
              returning used)`;

/** `ins`: the create: its version continues the path's history (a note made again after a delete), with the event's action and payload. */
const INSERT = `ins as (
              insert into memory_notes (workspace_id, path, kind, body, links, tags, version, written_by_key_id, created_at, updated_at, accessed_at, near_keys)
              select :workspace, :path, :kind, :body, :links::text[], :tags::text[],
                     coalesce((select max(r.version) from memory_note_revisions r where r.workspace_id = :workspace and r.path = :path), 0) + 1,
                     :key, :now, :now, :now, :near_keys::int[]
                from plan where quota is null or exists (select 1 from slot)
              returning ${NOTE_COLUMNS}, 'memory.note.created' as action, wks_event_payload(${noteJson('memory_notes')}, null) as payload)`;

/**
 * `queued`: embedding work for a note whose body or tags changed, or a new one (`withCreate`: the
 * statement has `ins`), when `:embed` and the workspace's notes are embedded.
 */
const queueEmbedding = (withCreate: boolean) =>
  `queued as (${ENQUEUE_EMBEDDING(
    'note',
    `select w.id, w.workspace_id
                 from (select n.id, n.workspace_id from upd n, cur where cur.body is distinct from n.body or cur.tags is distinct from n.tags
                       ${withCreate ? 'union all select id, workspace_id from ins' : ''}) w
                where :embed and exists (select 1 from embedding_stamps s where s.workspace_id = :workspace and s.notes_embedded)`,
  )} returning 1)`;

/** What both forms of a note's PUT return of the note they wrote (see PutNoteRow), with the event's action and payload. */
const PUT_RESULT = {
  actionColumn: 'action',
  payloadColumn: 'payload',
  // The payload (the body once or twice) goes into the event, not back to the service; nor do the
  // note's path, kind, body, links and tags, which are the values the service sent (see PutNoteRow).
  returning: 'id, version, created_at, updated_at, accessed_at, action, queued',
};

/**
 * The PUT of an existing note only (prepared once per connection as 'memory_note_update'): PUT_NOTE
 * without its create. PostgreSQL sets up every part of a statement on each execution, whether it
 * runs or not; the create's insert (with the search vector's expression and five indexes) and the
 * quota's parts were a tenth of an update's database CPU. The service runs this first, and PUT_NOTE
 * when it wrote nothing and a create is allowed.
 */
export const UPDATE_NOTE = {
  with: [CURRENT, UPDATE, KEEP_REVISION, TRIM_REVISIONS, queueEmbedding(false)].join(',\n            '),
  write: 'select *, exists (select 1 from queued) as queued from upd',
  ...PUT_RESULT,
  name: 'memory_note_update',
};

/**
 * The PUT of a note, for auditedWrite (prepared once per connection as 'memory_note_put'): updates
 * the note at the path and keeps the replaced state as a revision (trimming the oldest beyond
 * `:keep`), or creates it (taking a quota slot in memory_usage under a share lock on the
 * organization), and queues embedding work; each row carries its event's action and payload.
 */
export const PUT_NOTE = {
  // The parts in order: each reads only parts named before it (one statement, one snapshot; the text is joined once, at load).
  with: [CURRENT, UPDATE, KEEP_REVISION, TRIM_REVISIONS, PLAN_QUOTA, QUOTA_SLOT, INSERT, queueEmbedding(true)].join(',\n            '),
  write: 'select *, exists (select 1 from queued) as queued from upd union all select *, exists (select 1 from queued) from ins',
  ...PUT_RESULT,
  name: 'memory_note_put',
};

/** What one PUT of a note writes, and on which conditions (PUT_NOTE's values before encoding). */
export interface NoteWrite {
  workspaceId: string;
  organizationId: string;
  keyId: string | null;
  note: { path: string; kind: string; body: string; links: string[]; tags: string[] };
  now: Date;
  /** Update only a note at one of these versions (null: at any version). */
  match: number[] | null;
  /** Never update a note at one of these versions. */
  noneMatch: number[] | null;
  mayUpdate: boolean;
  mayCreate: boolean;
  /** The body's band keys (null: none computed). */
  nearKeys: number[] | null;
  /** Replaced revisions kept per note (0: none). */
  keep: number;
  /** Queue changed notes for embedding (when the workspace's notes are embedded). */
  embed: boolean;
}

/** PUT_NOTE's (and UPDATE_NOTE's) named values for a write. */
export function putNoteValues(w: NoteWrite): Record<string, unknown> {
  return {
    workspace: w.workspaceId,
    path: w.note.path,
    kind: w.note.kind,
    body: w.note.body,
    links: pgArray(w.note.links),
    tags: pgArray(w.note.tags),
    key: w.keyId,
    now: w.now,
    match: versionsParam(w.match),
    none_match: versionsParam(w.noneMatch),
    may_update: w.mayUpdate,
    may_create: w.mayCreate,
    organization: w.organizationId,
    near_keys: w.nearKeys && nearKeysParam(w.nearKeys),
    keep: w.keep,
    embed: w.embed,
  };
}

/**
 * The delete of a note, for auditedWrite: removes it (at a version of `:match`, if not null), keeps
 * its last state as a revision, frees its quota slot and drops its embedding; each row carries its
 * event's payload.
 */
export const DELETE_NOTE = {
  with: `deleted as (
          delete from memory_notes where workspace_id = :workspace and path = :path and (:match::int[] is null or version = any(:match::int[]))
          returning ${NOTE_COLUMNS_OF('memory_notes')}, written_by_key_id),
        kept as (
          insert into memory_note_revisions (workspace_id, path, version, kind, body, links, tags, written_by_key_id, written_at, replaced_by_key_id, replaced_at, deleted)
          select :workspace, :path, version, kind, body, links, tags, written_by_key_id, updated_at, :key, :now, true from deleted where :keep::int > 0),
        freed as (update memory_usage set used = greatest(used - 1, 0) where workspace_id = :workspace and exists (select 1 from deleted)),
        ${UNEMBED_DELETED('note')}`,
  write: `select id, wks_event_payload(${noteJson('deleted')}, null) as payload from deleted`,
  payloadColumn: 'payload',
  returning: 'id',
};

/** What one delete of a note writes, and on which condition (DELETE_NOTE's values before encoding). */
export interface NoteDelete {
  workspaceId: string;
  path: string;
  /** Delete only a note at one of these versions (null: at any version). */
  match: number[] | null;
  keyId: string | null;
  now: Date;
  /** Keep the last state as a revision (0: not). */
  keep: number;
}

/** DELETE_NOTE's named values for a delete. */
export function deleteNoteValues(d: NoteDelete): Record<string, unknown> {
  return { workspace: d.workspaceId, path: d.path, match: versionsParam(d.match), key: d.keyId, now: d.now, keep: d.keep };
}

/** Versions as an int[] literal (null: none). */
function versionsParam(versions: number[] | null): string | null {
  return versions === null ? null : pgArray(versions.map(String));
}

/** The text of readNote, built once (sql's text caches then find the same string, its hash kept). */
const READ_NOTE = `select ${NOTE_COLUMNS_OF('n')} from memory_notes n where n.workspace_id = ? and n.path = ?`;

/** The note at a path of a workspace, its access time included: a plain read (a replica may serve it). */
export async function readNote(db: SqlTarget, workspaceId: string, path: string): Promise<NoteRow | undefined> {
  const [row] = await sql<NoteRow>(db, READ_NOTE, [workspaceId, path], 'memory_note_read');
  return row;
}

/** One note's latest read, as a process gathered it. */
export interface NoteAccess {
  noteId: number;
  workspaceId: string;
  at: Date;
}

/**
 * Records reads' access times in one statement: each note's memory_note_access row advances to the
 * time given (never back: a HOT update of a narrow row). Notes deleted since are skipped; one
 * deleted while this statement runs fails it on the foreign key (the caller tries once more).
 */
export async function recordNoteAccesses(db: SqlTarget, accesses: readonly NoteAccess[]): Promise<void> {
  await sql(
    db,
    `insert into memory_note_access as a (note_id, workspace_id, accessed_at)
     select u.note_id, u.workspace_id, u.at
       from unnest(?::int[], ?::uuid[], ?::timestamptz[]) as u(note_id, workspace_id, at)
       join memory_notes n on n.id = u.note_id and n.workspace_id = u.workspace_id
      where n.accessed_at < u.at
     on conflict (note_id) do update set accessed_at = greatest(a.accessed_at, excluded.accessed_at)`,
    [
      pgArray(accesses.map((a) => String(a.noteId))),
      pgArray(accesses.map((a) => a.workspaceId)),
      pgArray(accesses.map((a) => a.at.toISOString())),
    ],
  );
}

/** The version of the note at a path, or null when there is none. */
export async function noteVersion(db: SqlTarget, workspaceId: string, path: string): Promise<number | null> {
  const [row] = await sql<{ version: number }>(db, 'select version from memory_notes where workspace_id = ? and path = ?', [
    workspaceId,
    path,
  ]);
  return row ? row.version : null;
}

/** Whether a note lives at a path. */
export async function noteExists(db: SqlTarget, workspaceId: string, path: string): Promise<boolean> {
  const [live] = await sql(db, 'select 1 from memory_notes where workspace_id = ? and path = ?', [workspaceId, path]);
  return live !== undefined;
}

/** Which notes the index lists: below a directory-like prefix, with a tag, of a kind, after a path (null: any). */
export interface EntryFilter {
  prefix: string | null;
  tag: string | null;
  kind: string | null;
  after: string | null;
}

/** Index entries of a workspace's notes matching `filter`, by path, at most `limit`. */
export async function listEntries(db: SqlTarget, workspaceId: string, filter: EntryFilter, limit: number): Promise<EntryRow[]> {
  const params: unknown[] = [workspaceId];
  let where = 'n.workspace_id = ?';
  if (filter.prefix !== null) {
    // Directory-like: the prefix itself or anything below it ("/" + 1 = "0" in the C collation).
    where += ` and (n.path = ? or (n.path >= ? and n.path < ?))`;
    params.push(filter.prefix, `${filter.prefix}/`, `${filter.prefix}0`);
  }
  if (filter.tag !== null) {
    where += ' and n.tags @> array[?]::text[]';
    params.push(filter.tag);
  }
  if (filter.kind !== null) {
    where += ' and n.kind = ?';
    params.push(filter.kind);
  }
  if (filter.after !== null) {
    where += ' and n.path > ?';
    params.push(filter.after);
  }
  params.push(limit);
  return sql<EntryRow>(db, `select ${ENTRY_COLUMNS} from memory_notes n where ${where} order by n.path limit ?`, params);
}

/**
 * Index entries of the notes whose links contain `path`, by path (at most 200). `links <> '{}'`
 * (implied by the containment) lets the planner use the links index, which holds linking notes only.
 */
export async function listBacklinks(db: SqlTarget, workspaceId: string, path: string): Promise<EntryRow[]> {
  return sql<EntryRow>(
    db,
    `select ${ENTRY_COLUMNS} from memory_notes n
      where n.workspace_id = ? and n.links <> '{}' and n.links @> array[?]::text[] order by n.path limit 200`,
    [workspaceId, path],
  );
}
