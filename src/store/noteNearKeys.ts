/** Statements on memory_notes.near_keys: the notes sharing a band key with a body, their bodies, and the backfill of notes without keys. */
import { pgArray, sql, type SqlTarget } from '../db/sql.js';

/** At most this many notes sharing a band are considered (of those, the ones sharing the most bands are scored). */
export const NEAR_CANDIDATES = 50;

/** Band keys as an int[] literal. */
export function nearKeysParam(keys: number[]): string {
  return pgArray(keys.map(String));
}

/** Notes of a workspace (other than `path`) sharing a band key with `keys`, at most NEAR_CANDIDATES (prepared as 'memory_near_candidates'). */
export async function nearCandidates(
  db: SqlTarget,
  workspaceId: string,
  keys: number[],
  path: string,
): Promise<{ path: string; near_keys: number[] }[]> {
  return sql<{ path: string; near_keys: number[] }>(
    db,
    // The keys are salted with the workspace, so the key index alone finds them; the workspace is
    // compared as text so the planner does not also read the workspace's whole path index
    // (11 ms at 40,000 notes) to intersect with it.
    `select path, near_keys from memory_notes where workspace_id::text = ? and near_keys && ?::int[] and path <> ? limit ${NEAR_CANDIDATES}`,
    [workspaceId, nearKeysParam(keys), path],
    'memory_near_candidates',
  );
}

/** The bodies of a workspace's notes at `paths` (prepared as 'memory_near_bodies'). */
export async function noteBodies(db: SqlTarget, workspaceId: string, paths: string[]): Promise<{ path: string; body: string }[]> {
  return sql<{ path: string; body: string }>(
    db,
    'select path, body from memory_notes where workspace_id = ? and path = any(?::text[])',
    [workspaceId, pgArray(paths)],
    'memory_near_bodies',
  );
}

/** Up to `batch` notes (of any workspace) that have no band keys yet. */
export async function notesWithoutNearKeys(db: SqlTarget, batch: number): Promise<{ id: number; workspace_id: string; body: string }[]> {
  return sql<{ id: number; workspace_id: string; body: string }>(
    db,
    'select id, workspace_id, body from memory_notes where near_keys is null limit ?',
    [batch],
  );
}

/** Gives a note its band keys, only if it still has none and its body is still `body` (a write meanwhile set its own). */
export async function setNearKeys(db: SqlTarget, id: number, keys: number[], body: string): Promise<void> {
  await sql(db, 'update memory_notes set near_keys = ?::int[] where id = ? and near_keys is null and body = ?', [
    nearKeysParam(keys),
    id,
    body,
  ]);
}
