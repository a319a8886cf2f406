/** The memory note row both plain baselines read and write, and its JSON shape (the service's field names). */

/** The columns the service's note statements return. */
export const NOTE_COLUMNS = 'id, workspace_id, path, kind, body, links, tags, created_at, updated_at, accessed_at';

/** A `memory_notes` row as node-postgres returns NOTE_COLUMNS. */
export interface NoteRow {
  id: number;
  workspace_id: string;
  path: string;
  kind: string;
  body: string;
  links: string[];
  tags: string[];
  created_at: Date;
  updated_at: Date;
  accessed_at: Date;
}

/** A PUT note request body, as the bench sends it. */
export interface NoteInput {
  path: string;
  body: string;
  kind: string;
  links: string[];
  tags: string[];
}

/** The note as JSON, with the service's camelCase names. */
export function noteJson(n: NoteRow) {
  return {
    id: n.id,
    workspaceId: n.workspace_id,
    path: n.path,
    kind: n.kind,
    body: n.body,
    links: n.links,
    tags: n.tags,
    createdAt: n.created_at,
    updatedAt: n.updated_at,
    accessedAt: n.accessed_at,
  };
}
