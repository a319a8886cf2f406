import type { EntityManager } from '@mikro-orm/postgresql';
import type { Scope } from '../auth/authorize.js';
import { MEMORY_QUOTA, type Plan } from '../auth/plans.js';
import type { RequestContext } from '../context.js';
import { MemoryNote } from '../entities/MemoryNote.js';
import {
  DomainError,
  InvalidRequestError,
  invalidField,
  isUniqueViolation,
  NotFoundError,
  NotModifiedError,
  PreconditionFailedError,
  type FieldIssue,
} from '../errors.js';
import { etagMatches, versionEtag, versionsNamed } from '../etag.js';
import { RULES } from '../contract/rules.js';
import { decodeCursor, pageSize, toPage, type Page } from '../pagination.js';
import { pgArray, sql } from '../db/sql.js';
import { auditedWrite } from './audit.js';
import { nearKeys, nearKeysParam, similarNotes, trigrams } from './nearDuplicates.js';
import type { MemoryIndexEntry, MemorySearchHit, MemorySearchPage } from '../types/memory.js';
import type { FallbackReason, SearchMode } from '../types/search.js';
import { readSearchCursor, searchCursor } from '../search/cursor.js';
import { fuseRankings, HYBRID_DEPTH } from '../search/fusion.js';
import { semanticNeighbours } from './search.js';
import { ENQUEUE_EMBEDDING, signalEmbeddingWork, UNEMBED_DELETED } from '../search/vectors.js';
import { headlineSql, safeSnippet } from '../search/snippets.js';
import { normalizePath, trimSlashes } from './memoryPaths.js';

const NOTE_COLUMNS = 'id, workspace_id, path, kind, body, links, tags, version, created_at, updated_at, accessed_at';
/**
 * SQL: the note of row `t` as REST returns it, for the `object` of its events (see
 * wks_event_payload); NOTE_PREVIOUS: what an update changed (`cur`: the row before, `n`: after).
 */
const noteJson = (t: string) =>
  `jsonb_build_object('id', ${t}.id, 'workspaceId', ${t}.workspace_id, 'path', ${t}.path, 'kind', ${t}.kind, 'body', ${t}.body,
     'links', to_jsonb(${t}.links), 'tags', to_jsonb(${t}.tags), 'version', ${t}.version, 'createdAt', wks_iso(${t}.created_at),
     'updatedAt', wks_iso(${t}.updated_at), 'accessedAt', wks_iso(${t}.accessed_at))`;
const NOTE_PREVIOUS = `jsonb_build_object('version', cur.version, 'updatedAt', wks_iso(cur.updated_at))
     || case when cur.kind is distinct from n.kind then jsonb_build_object('kind', cur.kind) else '{}' end
     || case when cur.body is distinct from n.body then jsonb_build_object('body', cur.body) else '{}' end
     || case when cur.links is distinct from n.links then jsonb_build_object('links', to_jsonb(cur.links)) else '{}' end
     || case when cur.tags is distinct from n.tags then jsonb_build_object('tags', to_jsonb(cur.tags)) else '{}' end`;
const ENTRY_COLUMNS = 'path, kind, tags, octet_length(body) as size, updated_at, accessed_at';

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
export const NOTE_REVISIONS_KEPT = 50;

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
  conditions: NoteConditions = {},
): Promise<MemoryNote> {
  const note = validateNote(input);
  const match = conditions.ifMatch ? versionsNamed(conditions.ifMatch) : null;
  const noneMatch = conditions.ifNoneMatch ? versionsNamed(conditions.ifNoneMatch) : null;
  // Without the check, no keys: the housekeeping pass gives the note its keys once the check is on.
  const grams = ctx.memory.nearDuplicates ? trigrams(note.body) : null;
  const keys = grams && nearKeys(scope.workspaceId, grams);
  for (let attempt = 0; ; attempt++) {
    const now = new Date();
    try {
      const [written] = await auditedWrite<NoteRow>(
        ctx.db,
        ctx,
        { action: 'memory.note.updated', targetType: 'memory_note', targetId: note.path, workspaceId: scope.workspaceId },
        {
          with: `cur as (
              select id, version, kind, body, links, tags, written_by_key_id, updated_at from memory_notes
               where workspace_id = :workspace and path = :path for update),
            upd as (
              update memory_notes n set kind = :kind, body = :body, links = :links::text[], tags = :tags::text[],
                     version = cur.version + 1, written_by_key_id = :key, updated_at = :now, near_keys = :near_keys::int[]
                from cur
               where n.id = cur.id and :may_update
                 and (:match::int[] is null or cur.version = any(:match::int[]))
                 and not coalesce(cur.version = any(:none_match::int[]), false)
              returning ${NOTE_COLUMNS.replace(/(\w+)/g, 'n.$1')}, 'memory.note.updated' as action,
                        wks_event_payload(${noteJson('n')}, ${NOTE_PREVIOUS}) as payload),
            kept as (
              insert into memory_note_revisions (workspace_id, path, version, kind, body, links, tags, written_by_key_id, written_at, replaced_by_key_id, replaced_at)
              select :workspace, :path, cur.version, cur.kind, cur.body, cur.links, cur.tags, cur.written_by_key_id, cur.updated_at, :key, :now
                from cur where exists (select 1 from upd) and :keep::int > 0),
            trimmed as (
              delete from memory_note_revisions
               where workspace_id = :workspace and path = :path and version <= (select version from upd) - :keep::int - 1),
            plan as (
              select ${QUOTA_OF('o.plan')} as quota from organizations o
               where o.id = :organization and :may_create and not exists (select 1 from cur) for share),
            slot as (
              insert into memory_usage as u (workspace_id, used) select :workspace, 1 from plan where quota is not null
              on conflict (workspace_id) do update set used = u.used + 1 where u.used < (select quota from plan)
              returning used),
            ins as (
              insert into memory_notes (workspace_id, path, kind, body, links, tags, version, written_by_key_id, created_at, updated_at, accessed_at, near_keys)
              select :workspace, :path, :kind, :body, :links::text[], :tags::text[],
                     coalesce((select max(r.version) from memory_note_revisions r where r.workspace_id = :workspace and r.path = :path), 0) + 1,
                     :key, :now, :now, :now, :near_keys::int[]
                from plan where quota is null or exists (select 1 from slot)
              returning ${NOTE_COLUMNS}, 'memory.note.created' as action, wks_event_payload(${noteJson('memory_notes')}, null) as payload),
            queued as (${ENQUEUE_EMBEDDING(
              'note',
              `select w.id, w.workspace_id
                 from (select n.id, n.workspace_id from upd n, cur where cur.body is distinct from n.body or cur.tags is distinct from n.tags
                       union all select id, workspace_id from ins) w
                where :embed and exists (select 1 from embedding_stamps s where s.workspace_id = :workspace and s.notes_embedded)`,
            )} returning 1)`,
          write: 'select *, exists (select 1 from queued) as queued from upd union all select *, exists (select 1 from queued) from ins',
          actionColumn: 'action',
          payloadColumn: 'payload',
          name: 'memory_note_put',
        },
        {
          workspace: scope.workspaceId,
          path: note.path,
          kind: note.kind,
          body: note.body,
          links: pgArray(note.links),
          tags: pgArray(note.tags),
          key: scope.agent.keyId,
          now,
          match: versionsParam(match),
          none_match: versionsParam(noneMatch),
          may_update: noneMatch !== 'any',
          may_create: match === null,
          organization: scope.agent.organizationId,
          near_keys: keys && nearKeysParam(keys),
          keep: ctx.memory.historyKept,
          embed: ctx.memory.embeddings,
        },
      );
      if (written?.queued) signalEmbeddingWork();
      // Other notes' paths and how close they are tell what those notes say: only for a key that may read them.
      if (written?.action === 'memory.note.created' && keys && scope.permissions.has('memory.read')) {
        const similar = await similarNotes(ctx.db, scope.workspaceId, note.path, grams, keys);
        return similar.length ? { ...plainNote(written), similar } : plainNote(written);
      }
      if (written) return plainNote(written);
    } catch (error) {
      // Created by a concurrent request meanwhile: nothing was written; run again (an update now).
      if (!isUniqueViolation(error) || attempt >= 3) throw error;
      continue;
    }
    if (match !== null || noneMatch !== null) {
      // Nothing written: a condition may not hold. `If-None-Match: *` never reaches the update.
      const current = await currentVersion(ctx, scope.workspaceId, note.path);
      if (current !== null || match !== null)
        throw new PreconditionFailedError('memory note', current === null ? null : versionEtag(current));
    }
    // Neither updated nor created: the quota looks full. Count again before saying so (the
    // counter can only drift upwards, by a delete racing a plan change); try once more if that
    // freed a slot, or if the plan has meanwhile become unlimited.
    const { used, plan } = await ctx.em.transactional(async (em) => {
      const [counted] = await recountUsage(em, 'w.id = ?', scope.workspaceId);
      const [org] = await sql<{ plan: Plan }>(em, 'select plan from organizations where id = ?', [scope.agent.organizationId]);
      return { used: Number(counted.used), plan: org.plan };
    });
    const quota = MEMORY_QUOTA[plan];
    if (attempt < 3 && (quota === null || used < quota)) continue;
    throw new MemoryQuotaExceededError(quota ?? 0, used, plan);
  }
}

/** The versions a condition names, as an int[] literal; null when it names none in particular (absent, or `*`). */
function versionsParam(named: number[] | 'any' | null): string | null {
  return named === null || named === 'any' ? null : pgArray(named.map(String));
}

async function currentVersion(ctx: RequestContext, workspaceId: string, path: string): Promise<number | null> {
  const [row] = await sql<{ version: number }>(ctx.db, 'select version from memory_notes where workspace_id = ? and path = ?', [
    workspaceId,
    path,
  ]);
  return row ? row.version : null;
}

/** SQL for a plan's memory-note quota (null: unlimited), from MEMORY_QUOTA. */
const QUOTA_OF = (plan: string) =>
  `case ${plan} ${Object.entries(MEMORY_QUOTA)
    .map(([p, n]) => `when '${p}' then ${n ?? 'null'}`)
    .join(' ')} end`;

/**
 * Counts the notes of an organization's workspaces into `memory_usage` again: unlimited plans
 * keep no count, so a change to a plan with a quota needs one. Call it in the transaction that
 * changes the plan, after the organization row was updated (creates in flight hold a share lock
 * on it, so they have finished).
 */
export async function recountMemoryUsage(em: EntityManager, organizationId: string): Promise<void> {
  await recountUsage(em, 'w.organization_id = ?', organizationId);
}

/**
 * Sets `memory_usage` of the workspaces matching `where` (on `workspaces w`, one `?`) to their
 * numbers of notes, inside the caller's transaction: the existing usage rows are locked first
 * (creates and deletes in flight finish, later ones wait), then counted by a new statement that
 * sees every committed note.
 */
async function recountUsage(em: EntityManager, where: 'w.id = ?' | 'w.organization_id = ?', id: string): Promise<{ used: number }[]> {
  await sql(em, `select 1 from memory_usage u join workspaces w on w.id = u.workspace_id where ${where} for update of u`, [id]);
  return sql<{ used: number }>(
    em,
    `insert into memory_usage as u (workspace_id, used)
     select w.id, (select count(*) from memory_notes n where n.workspace_id = w.id) from workspaces w where ${where}
     on conflict (workspace_id) do update set used = excluded.used
     returning u.used`,
    [id],
  );
}

/** accessedAt is written at most once a second per note, so hot reads do not queue on one row lock. */
const ACCESS_RESOLUTION_MS = 1000;

/** A row of memory_notes (NOTE_COLUMNS). */
interface NoteRow {
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

/** An index entry row (ENTRY_COLUMNS). */
interface EntryRow {
  path: string;
  kind: string;
  tags: string[];
  size: string;
  updated_at: string;
  accessed_at: string;
}

/** A note as GraphQL returns it: a plain object (no identity map or change tracking), for speed. */
function plainNote(row: NoteRow): MemoryNote {
  return {
    id: row.id,
    workspace: { id: row.workspace_id },
    path: row.path,
    kind: row.kind,
    body: row.body,
    links: row.links,
    tags: row.tags,
    version: row.version,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
    accessedAt: new Date(row.accessed_at),
  } as MemoryNote;
}

/**
 * Reads a note by path; `accessedAt` advances (1-second resolution): a plain read, and a second
 * statement only when the stored time is more than a second old. With `ifNoneMatch` naming the
 * current version, a 304 instead (the read still counts as an access).
 */
export async function getNote(ctx: RequestContext, scope: Scope, rawPath: string, ifNoneMatch?: string | null): Promise<MemoryNote> {
  const path = normalizePath(rawPath);
  const [row] = await sql<NoteRow>(
    ctx.db,
    `select ${NOTE_COLUMNS} from memory_notes where workspace_id = ? and path = ?`,
    [scope.workspaceId, path],
    'memory_note_get',
  );
  if (!row) throw new NotFoundError('Memory note');
  const now = new Date();
  let note = row;
  if (now.getTime() - new Date(row.accessed_at).getTime() >= ACCESS_RESOLUTION_MS) {
    const [touched] = await sql<NoteRow>(
      ctx.db,
      `update memory_notes set accessed_at = greatest(accessed_at, ?) where id = ? returning ${NOTE_COLUMNS}`,
      [now, row.id],
      'memory_note_touch',
    );
    note = touched ?? row; // deleted meanwhile: the read still stands
  }
  if (ifNoneMatch && etagMatches(ifNoneMatch, versionEtag(note.version))) throw new NotModifiedError(versionEtag(note.version));
  return plainNote(note);
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
    {
      with: `deleted as (
          delete from memory_notes where workspace_id = :workspace and path = :path and (:match::int[] is null or version = any(:match::int[]))
          returning ${NOTE_COLUMNS}, written_by_key_id),
        kept as (
          insert into memory_note_revisions (workspace_id, path, version, kind, body, links, tags, written_by_key_id, written_at, replaced_by_key_id, replaced_at, deleted)
          select :workspace, :path, version, kind, body, links, tags, written_by_key_id, updated_at, :key, :now, true from deleted where :keep::int > 0),
        freed as (update memory_usage set used = greatest(used - 1, 0) where workspace_id = :workspace and exists (select 1 from deleted)),
        ${UNEMBED_DELETED('note')}`,
      write: `select id, wks_event_payload(${noteJson('deleted')}, null) as payload from deleted`,
      payloadColumn: 'payload',
    },
    {
      workspace: scope.workspaceId,
      path,
      match: versionsParam(match),
      key: scope.agent.keyId,
      now: new Date(),
      keep: ctx.memory.historyKept,
    },
  );
  if (!rows.length) {
    const current = match === null ? null : await currentVersion(ctx, scope.workspaceId, path);
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
  const params: unknown[] = [scope.workspaceId];
  let where = 'workspace_id = ?';
  if (args.prefix != null && trimSlashes(args.prefix) !== '') {
    const prefix = normalizePath(args.prefix, 'prefix');
    // Directory-like: the prefix itself or anything below it ("/" + 1 = "0" in the C collation).
    where += ` and (path = ? or (path >= ? and path < ?))`;
    params.push(prefix, `${prefix}/`, `${prefix}0`);
  }
  if (args.tag != null) {
    where += ' and tags @> array[?]::text[]';
    params.push(args.tag);
  }
  if (args.kind != null) {
    where += ' and kind = ?';
    params.push(args.kind);
  }
  if (args.cursor) {
    const [after] = decodeCursor<[string]>(args.cursor, ['string']);
    where += ' and path > ?';
    params.push(after);
  }
  params.push(size + 1);
  const rows = await sql<EntryRow>(ctx.db, `select ${ENTRY_COLUMNS} from memory_notes where ${where} order by path limit ?`, params);
  return toPage(rows.map(toEntry), size, (e) => [e.path]);
}

/** A search hit as the note search statements give it. */
interface NoteHitRow {
  path: string;
  kind: string;
  tags: string[];
  updated_at: string;
  score: string | number;
  snippet: string | null;
}

/**
 * Searches notes over path, tags and body: full text (websearch syntax, best first) by default;
 * `semantic` by embedding similarity, `hybrid` both rankings fused like workspace search. Those two
 * fall back to full text when the embedder is unavailable or notes still wait for embeddings
 * (semantic also when nothing clears the similarity floor), and say so in `fallbackReason`.
 * A full-text cursor is `[offset]` (as before there were rankings); the others carry their ranking.
 */
export async function searchNotes(
  ctx: RequestContext,
  scope: Scope,
  args: { q: string; mode?: SearchMode | null; limit?: number | null; cursor?: string | null },
): Promise<MemorySearchPage> {
  const q = args.q.trim();
  if (!q) throw invalidField('q', 'must not be empty');
  const size = pageSize(args.limit, RULES.searchLimit);
  const { offset, ranking: cursorRanking } = args.cursor ? readSearchCursor(args.cursor) : { offset: 0, ranking: null };
  // A later page keeps the ranking its cursor was made by, whatever `mode` says.
  const mode: SearchMode = cursorRanking ?? args.mode ?? 'fulltext';
  let fallbackReason: FallbackReason | null = null;
  // Without note embeddings (MEMORY_EMBEDDINGS=off, EMBEDDINGS=off) there is nothing to rank by meaning.
  const byMeaning = mode !== 'fulltext';
  if (byMeaning && (!ctx.memory.embeddings || ctx.search.embedder.model === 'none')) fallbackReason = 'embedder_unavailable';
  else if (byMeaning) {
    await embedNotesOf(ctx, scope.workspaceId);
    const depth = offset + size + HYBRID_DEPTH;
    const [neighbours, fullText] = await Promise.all([
      semanticNeighbours(ctx, scope.workspaceId, q, depth, ['note']),
      mode === 'hybrid' ? noteFullTextIds(ctx, scope.workspaceId, q, depth) : [],
    ]);
    if ('reason' in neighbours) fallbackReason = neighbours.reason;
    else if (mode === 'semantic' && !neighbours.length && !offset) fallbackReason = 'below_similarity_floor';
    else {
      const ranked =
        mode === 'semantic'
          ? neighbours.map((n) => ({ item: n.itemId, score: n.similarity }))
          : fuseRankings(
              fullText,
              neighbours.map((n) => n.itemId),
              String,
            );
      const pageItems = ranked.slice(offset, offset + size);
      const rows = await notesById(
        ctx,
        scope.workspaceId,
        q,
        pageItems.map((p) => p.item),
      );
      const hits = rows.map((r) => noteHit({ ...r, score: pageItems[Number(r.ord) - 1].score }));
      const more = ranked.length > offset + size;
      return { items: hits, nextCursor: more ? searchCursor(offset + size, mode, mode) : null, ranking: mode, fallbackReason: null };
    }
  }
  const rows = await sql<NoteHitRow>(
    ctx.db,
    `with q as (select websearch_to_tsquery('english', ?) as query),
     hits as (
       select n.path, n.kind, n.tags, n.updated_at, n.body, ts_rank(n.search, q.query) as score
         from memory_notes n, q
        where n.workspace_id = ? and n.search @@ q.query
        order by score desc, n.path
        limit ? offset ?)
     select h.path, h.kind, h.tags, h.updated_at, h.score,
            ${headlineSql('h.body', 'q.query')} as snippet
       from hits h, q
      order by h.score desc, h.path`,
    [q, scope.workspaceId, size + 1, offset],
  );
  const items = rows.slice(0, size).map(noteHit);
  return {
    items,
    nextCursor: rows.length > size ? searchCursor(offset + size, 'fulltext', mode) : null,
    ranking: 'fulltext',
    fallbackReason,
  };
}

/** Workspaces whose notes this process knows to be embedded (the flag never turns off). */
const notesEmbedded = new Set<string>();

/**
 * Note embeddings cost a model inference per changed note, so a workspace gets them at its first
 * semantic or hybrid memory search (that search falls back to full text, `embeddings_pending`).
 * Two statements: the flag is turned on and committed first, so every PUT that starts later
 * queues what it changes (putNote reads the flag in its own statement); then every note still
 * without an embedding or a place in the queue is queued, in a snapshot that sees what PUTs
 * committed meanwhile. A PUT whose statement began before the flag and committed after that
 * snapshot is caught by the same catch-up run once more a few seconds later; a process that
 * finds the flag already on runs the catch-up once too (e.g. after a crash between the two).
 */
async function embedNotesOf(ctx: RequestContext, workspaceId: string): Promise<void> {
  if (notesEmbedded.has(workspaceId)) return;
  const turned = await sql(
    ctx.db,
    `insert into embedding_stamps (workspace_id, notes_embedded) values (?, true)
     on conflict (workspace_id) do update set notes_embedded = true where not embedding_stamps.notes_embedded
     returning 1`,
    [workspaceId],
  );
  notesEmbedded.add(workspaceId);
  const catchUp = async () => {
    const queued = await sql(ctx.db, `${QUEUE_UNEMBEDDED_NOTES} returning 1`, [workspaceId]);
    if (queued.length) signalEmbeddingWork();
  };
  await catchUp();
  if (turned.length) setTimeout(() => void catchUp().catch(() => undefined), 5_000).unref();
}

/** Queues the notes of a workspace (`?`) that have neither an embedding nor a place in the queue. */
const QUEUE_UNEMBEDDED_NOTES = ENQUEUE_EMBEDDING(
  'note',
  `select n.id, n.workspace_id from memory_notes n
    where n.workspace_id = ?
      and not exists (select 1 from embeddings e where e.item_type = 'note' and e.item_id = n.id)
      and not exists (select 1 from embedding_queue q where q.item_type = 'note' and q.item_id = n.id)`,
);

/** Ids of the best `limit` full-text matches (the hybrid's full-text ranking: no snippets). */
async function noteFullTextIds(ctx: RequestContext, workspaceId: string, q: string, limit: number): Promise<number[]> {
  const rows = await sql<{ id: number }>(
    ctx.db,
    `select n.id from memory_notes n, websearch_to_tsquery('english', ?) q
      where n.workspace_id = ? and n.search @@ q order by ts_rank(n.search, q) desc, n.path limit ?`,
    [q, workspaceId, limit],
  );
  return rows.map((r) => r.id);
}

/** The notes of `ids` in this workspace, in that order, with snippets for `q` (notes deleted meanwhile are left out). */
async function notesById(ctx: RequestContext, workspaceId: string, q: string, ids: number[]) {
  if (!ids.length) return [];
  return sql<NoteHitRow & { ord: string }>(
    ctx.db,
    `select n.path, n.kind, n.tags, n.updated_at, i.ord, ${headlineSql('n.body', "websearch_to_tsquery('english', ?)")} as snippet
       from unnest(?::int[]) with ordinality as i(id, ord) join memory_notes n on n.id = i.id and n.workspace_id = ?
      order by i.ord`,
    [q, pgArray(ids), workspaceId],
  );
}

function noteHit(r: NoteHitRow): MemorySearchHit {
  return {
    path: r.path,
    kind: r.kind,
    tags: r.tags,
    updatedAt: new Date(r.updated_at),
    score: Math.round(Number(r.score) * 1e6) / 1e6,
    snippet: safeSnippet(r.snippet),
  };
}

/** Notes whose `links` contain the given note's path (reading them needs `memory.read`, whichever way the note was reached). */
export async function backlinks(ctx: RequestContext, scope: Scope, path: string): Promise<MemoryIndexEntry[]> {
  const rows = await sql<EntryRow>(
    ctx.db,
    `select ${ENTRY_COLUMNS} from memory_notes where workspace_id = ? and links @> array[?]::text[] order by path limit 200`,
    [scope.workspaceId, path],
  );
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
  const tags = [...new Set(input.tags.map((t) => t.trim()))];
  return { path, body: input.body, kind: input.kind, links: [...new Set(links)], tags };
}

const URL_SCHEME = /^[a-z][a-z0-9+.-]*:/i;
