/** Statements on oauth_metadata_failures: Client ID Metadata Document fetches that failed, remembered a while by URL. */
import { sql, type SqlTarget } from '../db/sql.js';

/** Why a metadata document's last fetch failed, while that is remembered (until `retry_after`). */
export async function findMetadataFailure(db: SqlTarget, url: string): Promise<{ reason: string; retry_after: string } | undefined> {
  const rows = await sql<{ reason: string; retry_after: string }>(
    db,
    'select reason, retry_after from oauth_metadata_failures where url = ? and retry_after > now()',
    [url],
  );
  return rows[0];
}

/** Remembers that fetching a metadata document failed, and why, for `seconds`. */
export async function recordMetadataFailure(db: SqlTarget, url: string, reason: string, seconds: number): Promise<void> {
  await sql(
    db,
    `insert into oauth_metadata_failures (url, reason, retry_after) values (?, ?, now() + make_interval(secs => ?))
     on conflict (url) do update set reason = excluded.reason, failed_at = now(), retry_after = excluded.retry_after`,
    [url, reason, seconds],
  );
}

/** Forgets the failures no longer remembered (housekeeping). */
export async function forgetMetadataFailures(db: SqlTarget): Promise<void> {
  await sql(db, 'delete from oauth_metadata_failures where retry_after < now()');
}
