/** Statements on oauth_clients: clients registered by DCR and the Client ID Metadata Documents fetched for them. */
import { pgArray, sql, type SqlTarget } from '../db/sql.js';

/** A registered client (DCR) or a cached Client ID Metadata Document. */
export interface ClientRow {
  id: string;
  kind: 'registered' | 'metadata';
  name: string;
  redirect_uris: string[];
  metadata: Record<string, unknown>;
  created_at: string;
  refresh_after: string | null;
  expires_at: string | null;
  last_used_at: string | null;
}

/** A client by its id (expired unused registrations excluded). */
export async function findClient(db: SqlTarget, id: string): Promise<ClientRow | undefined> {
  const rows = await sql<ClientRow>(
    db,
    `select id, kind, name, redirect_uris, metadata, created_at, refresh_after, expires_at, last_used_at from oauth_clients
      where id = ? and (last_used_at is not null or expires_at is null or expires_at > now())`,
    [id],
  );
  return rows[0];
}

/** Stores a client registered by DCR; it expires at `expiresAt` unless a grant uses it first. */
export async function insertRegisteredClient(
  db: SqlTarget,
  row: { id: string; name: string; redirectUris: string[]; metadata: Record<string, unknown>; expiresAt: Date; from: string },
): Promise<void> {
  await sql(
    db,
    `insert into oauth_clients (id, kind, name, redirect_uris, metadata, expires_at, registered_from) values (?, 'registered', ?, ?::text[], ?::jsonb, ?, ?)`,
    [row.id, row.name, pgArray(row.redirectUris), JSON.stringify(row.metadata), row.expiresAt, row.from],
  );
}

/**
 * Stores (or refreshes) a fetched Client ID Metadata Document until `refreshAfter`. Until a grant
 * uses the client it expires at `expiresAt` (each fetch moves it), like an unused registration.
 */
export async function upsertMetadataClient(
  db: SqlTarget,
  row: { id: string; name: string; redirectUris: string[]; metadata: Record<string, unknown>; refreshAfter: Date; expiresAt: Date },
): Promise<void> {
  await sql(
    db,
    `insert into oauth_clients (id, kind, name, redirect_uris, metadata, refresh_after, expires_at)
     values (?, 'metadata', ?, ?::text[], ?::jsonb, ?, ?)
     on conflict (id) do update set name = excluded.name, redirect_uris = excluded.redirect_uris, metadata = excluded.metadata,
       refresh_after = excluded.refresh_after, expires_at = excluded.expires_at where oauth_clients.kind = 'metadata'`,
    [row.id, row.name, pgArray(row.redirectUris), JSON.stringify(row.metadata), row.refreshAfter, row.expiresAt],
  );
}

/** Deletes clients (registrations and fetched metadata documents) no grant ever used, past their expiry. */
export async function deleteUnusedClients(db: SqlTarget): Promise<number> {
  const rows = await sql(db, `delete from oauth_clients where last_used_at is null and expires_at < now() returning id`);
  return rows.length;
}
