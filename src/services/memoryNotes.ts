import type { EntityManager } from '@mikro-orm/postgresql';
import type { Scope } from '../auth/authorize.js';
import { MEMORY_QUOTA } from '../plans.js';
import type { RequestContext } from '../context.js';
import { MemoryNote } from '../entities/MemoryNote.js';
import {
  DomainError,
  InvalidRequestError,
  isUniqueViolation,
  NotFoundError,
  NotModifiedError,
  PreconditionFailedError,
  type FieldIssue,
} from '../errors.js';
import { etagMatches, versionEtag, versionsNamed } from '../etag.js';
import { decodeCursor, pageSize, toPage, type Page } from '../pagination.js';
import { auditedWrite } from './audit.js';
import type { MemoryIndexEntry } from '../types/memory.js';
import { nearKeys, similarNotes, trigrams } from './nearDuplicates.js';
import { signalEmbeddingWork } from '../search/vectors.js';
import { normalizePath, trimSlashes } from './memoryPaths.js';
import {
  DELETE_NOTE,
  deleteNoteValues,
  listBacklinks,
  listEntries,
  noteVersion,
  PUT_NOTE,
  putNoteValues,
  UPDATE_NOTE,
  readNote,
  type EntryRow,
  type NoteRow,
  type PutNoteRow,
} from '../store/memoryNotes.js';
import { readPlan, recountUsage } from '../store/memoryUsage.js';
import { defaultOf } from '../config.js';
import { inTransaction } from '../store/unitOfWork.js';
import type { Permit, SimilarShown } from '../auth/policies.js';

export interface PutNoteInput {
  path: string;
  body: string;
  kind: string;
  links: string[];
  tags: string[];
}

/** Conditions of a write (HTTP If-Match / If-None-Match), on the note's ETag `"v<version>"`. */
export interface NoteConditions {
  ifMatch?: string | null;
  ifNoneMatch?: string | null;
}

/** How many replaced revisions each note keeps by default (MEMORY_HISTORY_KEPT; the oldest go first). */
export const NOTE_REVISIONS_KEPT = defaultOf('MEMORY_HISTORY_KEPT');

/** 409 when creating one more note would exceed the plan's quota. */
class MemoryQuotaExceededError extends DomainError {
  constructor(limit: number, usage: number, plan: string) {
    super(
      'memory_quota_exceeded',
      `The ${plan} plan holds at most ${limit} memory notes per workspace; delete a note or upgrade to create new paths (updating existing paths is ` +
        `always allowed).`,
      { limit, usage, plan },
    );
  }
}

/**
 * Creates the note at a new path or updates the existing one (a PUT of an existing path is an
 * update, never a second note): one statement, one round trip, with its audit and outbox events.
 * An update raises the version and keeps the replaced state as a revision (the oldest beyond
 * NOTE_REVISIONS_KEPT are dropped), in the same statement. A create continues the path's
 * versions after its last kept revision, so an ETag never names two states of one path.
 *
 * `If-Match` updates only the versions it names (`*`: any existing note) and never creates;
 * `If-None-Match: *` only creates (tags: updates unless the current version is named). A
 * condition that does not hold is a 412 with the current ETag, and nothing is written.
 *
 * A create on a plan with a quota takes a slot in `memory_usage.used` (incremented only while
 * below the limit) in the same statement, so the quota holds exactly across processes; the plan is
 * read from the organization row under a share lock, so a plan change waits for creates in flight
 * (see `recountMemoryUsage`). Unlimited plans keep no count, so their creates do not queue on one
 * row. If the path was created meanwhile, the insert's unique violation undoes the whole statement
 * and it runs again (then as an update).
 */
export async function putNote(
  ctx: RequestContext,
  scope: Scope,
  input: PutNoteInput,
  conditions: NoteConditions,
  permit: Permit<SimilarShown>,
): Promise<MemoryNote> {
  const note = validateNote(input);
  const match = conditions.ifMatch ? versionsNamed(conditions.ifMatch) : null;
  const noneMatch = conditions.ifNoneMatch ? versionsNamed(conditions.ifNoneMatch) : null;
  // Without the check, no keys: the housekeeping pass gives the note its keys once the check is on.
  const keys = ctx.memory.nearDuplicates ? nearKeys(scope.workspaceId, note.body) : null;
  for (let attempt = 0; ; attempt++) {
    try {
      const written = await writeNote(ctx, scope, note, match, noneMatch, keys);
      if (written?.queued) signalEmbeddingWork();
      // Other notes' paths and how close they are tell what those notes say: only for a key that may read them.
      if (written?.action === 'memory.note.created' && keys && permit({ similar: true })) {
        const similar = await similarNotes(ctx.db, scope.workspaceId, note.path, trigrams(note.body), keys);
        const created = writtenNote(scope.workspaceId, note, written);
        return similar.length ? { ...created, similar } : created;
      }
      if (written) return writtenNote(scope.workspaceId, note, written);
    } catch (error) {
      // Created by a concurrent request meanwhile: nothing was written; run again (an update now).
      if (!isUniqueViolation(error) || attempt >= 3) throw error;
      continue;
    }
    if (match !== null || noneMatch !== null) {
      // Nothing written: a condition may not hold. `If-None-Match: *` never reaches the update.
      const current = await noteVersion(ctx.db, scope.workspaceId, note.path);
      if (current !== null || match !== null)
        throw new PreconditionFailedError('memory note', current === null ? null : versionEtag(current));
    }
    // Neither updated nor created: the quota looks full. Count again before saying so (the
    // counter can only drift upwards, by a delete racing a plan change); try once more if that
    // freed a slot, or if the plan has meanwhile become unlimited.
    const { used, plan } = await inTransaction(ctx.em, async (em) => {
      const [counted] = await recountUsage(em, 'workspace', scope.workspaceId);
      return { used: Number(counted.used), plan: await readPlan(em, scope.agent.organizationId) };
    });
    const quota = MEMORY_QUOTA[plan];
    if (attempt < 3 && (quota === null || used < quota)) continue;
    throw new MemoryQuotaExceededError(quota ?? 0, used, plan);
  }
}

/**
 * One write of the note with its event (`memory.note.updated`, or `memory.note.created` when the
 * row says so): the note as written, or none when a condition or the quota held it back. `If-Match`
 * never creates, `If-None-Match: *` never updates. An existing note, the common PUT, is updated by
 * UPDATE_NOTE alone (one round trip); PUT_NOTE, which can also create, runs when that wrote nothing
 * and a create is allowed (it updates a note created meanwhile, so the race ends as before).
 */
async function writeNote(
  ctx: RequestContext,
  scope: Scope,
  note: PutNoteInput,
  match: number[] | 'any' | null,
  noneMatch: number[] | 'any' | null,
  keys: number[] | null,
): Promise<PutNoteRow | undefined> {
  const event = { action: 'memory.note.updated', targetType: 'memory_note', targetId: note.path, workspaceId: scope.workspaceId } as const;
  const values = putNoteValues({
    workspaceId: scope.workspaceId,
    organizationId: scope.agent.organizationId,
    keyId: scope.agent.keyId,
    note,
    now: new Date(),
    match: versionsListed(match),
    noneMatch: versionsListed(noneMatch),
    mayUpdate: noneMatch !== 'any',
    mayCreate: match === null,
    nearKeys: keys,
    keep: ctx.memory.historyKept,
    embed: ctx.memory.embeddings,
  });
  if (noneMatch !== 'any') {
    const [updated] = await auditedWrite<PutNoteRow>(ctx.db, ctx, event, UPDATE_NOTE, values);
    if (updated || match !== null) return updated;
  }
  const [written] = await auditedWrite<PutNoteRow>(ctx.db, ctx, event, PUT_NOTE, values);
  return written;
}

/** The versions a condition names; null when it names none in particular (absent, or `*`). */
function versionsListed(named: number[] | 'any' | null): number[] | null {
  return named === null || named === 'any' ? null : named;
}

/**
 * Counts the notes of an organization's workspaces into `memory_usage` again: unlimited plans
 * keep no count, so a change to a plan with a quota needs one. Call it in the transaction that
 * changes the plan, after the organization row was updated (creates in flight hold a share lock
 * on it, so they have finished).
 */
export async function recountMemoryUsage(em: EntityManager, organizationId: string): Promise<void> {
  await recountUsage(em, 'organization', organizationId);
}

/** The note a PUT wrote: the values it wrote (validated, as stored) with what the database decided. */
function writtenNote(workspaceId: string, note: PutNoteInput, row: PutNoteRow): MemoryNote {
  return plainNote(workspaceId, note, row, new Date(row.accessed_at));
}

/**
 * A note as GraphQL returns it: a plain object (no identity map or change tracking), for speed,
 * from its values and what the database keeps of it (one row, or the values a PUT sent beside the
 * row it wrote). Built field by field: spreading a PUT's values and row into one object first took
 * V8 ~10 µs per PUT (measured), this well under one.
 */
function plainNote(
  workspaceId: string,
  values: PutNoteInput,
  row: Pick<NoteRow, 'id' | 'version' | 'created_at' | 'updated_at'>,
  accessedAt: Date,
): MemoryNote {
  return {
    id: row.id,
    workspace: { id: workspaceId },
    path: values.path,
    kind: values.kind,
    body: values.body,
    links: values.links,
    tags: values.tags,
    version: row.version,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
    accessedAt,
  } as MemoryNote;
}

/**
 * Reads a note by path: one plain read (a replica may serve it). The read is recorded as the note's
 * access, written apart (services/noteAccess.ts); the answer shows it, and other answers within
 * about a second. With `ifNoneMatch` naming the current version, a 304 instead (the read still
 * counts as an access).
 */
export async function getNote(ctx: RequestContext, scope: Scope, rawPath: string, ifNoneMatch?: string | null): Promise<MemoryNote> {
  const note = await readNote(ctx.db, scope.workspaceId, normalizePath(rawPath));
  if (!note) throw new NotFoundError('Memory note');
  const stored = new Date(note.accessed_at);
  const accessedAt = ctx.memory.access?.touch(note.id, note.workspace_id, stored) ?? stored;
  if (ifNoneMatch && etagMatches(ifNoneMatch, versionEtag(note.version))) throw new NotModifiedError(versionEtag(note.version));
  return plainNote(note.workspace_id, note, note, accessedAt);
}

/**
 * Deletes a note by path (with `ifMatch`, only a version it names: else 412) and frees its quota
 * slot, keeping its last state as a revision: one statement with its events.
 */
export async function deleteNote(
  ctx: RequestContext,
  scope: Scope,
  rawPath: string,
  ifMatch?: string | null,
): Promise<{ path: string; deleted: true }> {
  const path = normalizePath(rawPath);
  const match = ifMatch ? versionsNamed(ifMatch) : null;
  const rows = await auditedWrite(
    ctx.db,
    ctx,
    { action: 'memory.note.deleted', targetType: 'memory_note', targetId: path, workspaceId: scope.workspaceId },
    DELETE_NOTE,
    deleteNoteValues({
      workspaceId: scope.workspaceId,
      path,
      match: versionsListed(match),
      keyId: scope.agent.keyId,
      now: new Date(),
      keep: ctx.memory.historyKept,
    }),
  );
  if (!rows.length) {
    const current = match === null ? null : await noteVersion(ctx.db, scope.workspaceId, path);
    if (current !== null) throw new PreconditionFailedError('memory note', versionEtag(current));
    throw new NotFoundError('Memory note');
  }
  return { path, deleted: true };
}

export interface IndexArgs {
  prefix?: string | null;
  tag?: string | null;
  kind?: string | null;
  limit?: number | null;
  cursor?: string | null;
}

/** The index: notes without bodies, sorted by path, filterable by directory prefix, tag and kind. */
export async function listNotes(ctx: RequestContext, scope: Scope, args: IndexArgs): Promise<Page<MemoryIndexEntry>> {
  const size = pageSize(args.limit);
  // A prefix of nothing but slashes lists everything.
  const prefix = args.prefix != null && trimSlashes(args.prefix) !== '' ? normalizePath(args.prefix, 'prefix') : null;
  const after = args.cursor ? decodeCursor<[string]>(args.cursor, ['string'])[0] : null;
  const filter = { prefix, tag: args.tag ?? null, kind: args.kind ?? null, after };
  const rows = await listEntries(ctx.db, scope.workspaceId, filter, size + 1);
  return toPage(rows.map(toEntry), size, (e) => [e.path]);
}

/** Notes whose `links` contain the given note's path (reading them needs `memory.read`, whichever way the note was reached). */
export async function backlinks(ctx: RequestContext, scope: Scope, path: string): Promise<MemoryIndexEntry[]> {
  const rows = await listBacklinks(ctx.db, scope.workspaceId, path);
  return rows.map(toEntry);
}

function toEntry(r: EntryRow): MemoryIndexEntry {
  return {
    path: r.path,
    kind: r.kind,
    tags: r.tags,
    size: Number(r.size),
    updatedAt: new Date(r.updated_at),
    accessedAt: new Date(r.accessed_at),
  };
}

/**
 * What a PUT body needs beyond its declared bounds (the input contract has checked lengths, sizes,
 * counts and the kind token before this runs): path rules and normalisation, links to notes
 * normalised like paths (URLs kept as sent), tags trimmed, duplicates dropped.
 */
function validateNote(input: PutNoteInput): PutNoteInput {
  const issues: FieldIssue[] = [];
  const check = <T>(fallback: T, fn: () => T): T => {
    try {
      return fn();
    } catch (error) {
      if (!(error instanceof InvalidRequestError)) throw error;
      issues.push(...((error.details as FieldIssue[]) ?? []));
      return fallback;
    }
  };
  const path = check(input.path, () => normalizePath(input.path));
  // Links to other notes are normalised like paths, so backlinks match; URLs are kept as sent.
  const links = input.links.map((link, i) => {
    const trimmed = link.trim();
    if (URL_SCHEME.test(trimmed)) return trimmed;
    return check(link, () => normalizePath(link, `links[${i}]`));
  });
  input.tags.forEach((tag, i) => {
    if (!tag.trim()) issues.push({ field: `tags[${i}]`, message: 'must not be blank' });
  });
  if (issues.length) throw new InvalidRequestError(issues.map((i) => `${i.field}: ${i.message}`).join('; '), issues);
  const tags = [...new Set(input.tags.map((t) => wellFormed(t.trim())))];
  // As stored: the answer is made of these values, not read back (see PutNoteRow).
  return {
    path: wellFormed(path),
    body: wellFormed(input.body),
    kind: input.kind,
    links: [...new Set(links.map(wellFormed))],
    tags,
  };
}

/**
 * The text as the database stores it: a lone UTF-16 surrogate (JSON allows `"\ud800"`) becomes
 * U+FFFD, as the driver's UTF-8 encoding makes it.
 */
function wellFormed(text: string): string {
  const s = text as string & { isWellFormed(): boolean; toWellFormed(): string };
  return s.isWellFormed() ? text : s.toWellFormed();
}

const URL_SCHEME = /^[a-z][a-z0-9+.-]*:/i;
