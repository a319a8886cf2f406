/** Statements of live subscriptions and sockets: lease rows (live_subscriptions, socket_leases), advisory locks, snapshots, and per-event reads. */
import type { EntityManager } from '@mikro-orm/postgresql';
import { pgArray, sql, type SqlTarget } from '../db/sql.js';

/** Tables of lease rows (`id uuid`, `expires_at timestamptz`): slots counted across every process sharing the database. */
export type LeaseTable = 'live_subscriptions' | 'socket_leases';

/** Takes the transaction-scoped advisory lock named `name` (waiting for it). */
export async function takeNamedLock(em: EntityManager, name: string): Promise<void> {
  await sql(em, 'select pg_advisory_xact_lock(hashtext(?))', [name]);
}

/** Deletes one lease row. */
export async function deleteLease(db: SqlTarget, table: LeaseTable, id: string): Promise<void> {
  await sql(db, `delete from ${table} where id = ?`, [id]);
}

/** Moves the expiry of lease rows `seconds` ahead of now. */
export async function renewLeases(db: SqlTarget, table: LeaseTable, ids: string[], seconds: number): Promise<void> {
  await sql(db, `update ${table} set expires_at = now() + make_interval(secs => ?) where id = any(?::uuid[])`, [seconds, pgArray(ids)]);
}

/** Deletes lease rows. */
export async function deleteLeases(db: SqlTarget, table: LeaseTable, ids: string[]): Promise<void> {
  await sql(db, `delete from ${table} where id = any(?::uuid[])`, [pgArray(ids)]);
}

/** Deletes a holder's expired subscription leases (a dead process's). */
export async function dropExpiredSubscriptions(em: EntityManager, holder: string): Promise<void> {
  await sql(em, 'delete from live_subscriptions where holder = ? and expires_at <= now()', [holder]);
}

/** A subscription lease to take: its id, holder, workspace, field, lifetime and the holder's cap. */
export interface SubscriptionLease {
  id: string;
  holder: string;
  workspaceId: string;
  field: string;
  seconds: number;
  limit: number;
}

/** Inserts a subscription lease unless the holder already holds `limit` unexpired ones; whether it did. */
export async function insertSubscriptionLease(em: EntityManager, lease: SubscriptionLease): Promise<boolean> {
  const { id, holder, workspaceId, field, seconds, limit } = lease;
  const rows = await sql(
    em,
    `insert into live_subscriptions (id, holder, workspace_id, field, expires_at)
         select ?, ?, ?, ?, now() + make_interval(secs => ?)
          where (select count(*) from live_subscriptions where holder = ? and expires_at > now()) < ?
         returning id`,
    [id, holder, workspaceId, field, seconds, holder, limit],
  );
  return rows.length > 0;
}

/** Deletes an organization's expired socket leases (a dead process's). */
export async function dropExpiredSocketLeases(em: EntityManager, organizationId: string): Promise<void> {
  await sql(em, 'delete from socket_leases where organization_id = ? and expires_at <= now()', [organizationId]);
}

/** A socket lease to take: its id, key, organization, lifetime, and the caps per key and per organization. */
export interface SocketLeaseRequest {
  id: string;
  keyId: string;
  organizationId: string;
  seconds: number;
  perKey: number;
  perOrganization: number;
}

/** The unexpired socket leases of the key and of the organization (bigints as text), and whether this one was taken (`taken` > 0). */
export interface SocketLeaseCounts {
  by_key: string;
  by_org: string;
  taken: string;
}

/** Inserts a socket lease unless the key or the organization holds its cap of unexpired ones; the counts and whether it did. */
export async function insertSocketLease(em: EntityManager, lease: SocketLeaseRequest): Promise<SocketLeaseCounts> {
  const [row] = await sql<SocketLeaseCounts>(
    em,
    `with counts as (
           select count(*) filter (where key_id = :key) as by_key, count(*) as by_org
             from socket_leases where organization_id = :org and expires_at > now()
         ), taken as (
           insert into socket_leases (id, key_id, organization_id, expires_at)
           select :id, :key, :org, now() + make_interval(secs => :lease) from counts where by_key < :perKey and by_org < :perOrg
           returning id
         )
         select by_key, by_org, (select count(*) from taken) as taken from counts`,
    {
      id: lease.id,
      key: lease.keyId,
      org: lease.organizationId,
      lease: lease.seconds,
      perKey: lease.perKey,
      perOrg: lease.perOrganization,
    },
  );
  return row;
}

/** The current snapshot (`xmin:xmax:xip,…`). */
export async function currentSnapshot(db: SqlTarget): Promise<string> {
  const [{ snapshot }] = await sql<{ snapshot: string }>(db, 'select pg_current_snapshot()::text as snapshot');
  return snapshot;
}

/** The gap group a content-gap report joined (null while ungrouped), if the report exists. */
export async function reportGroupId(db: SqlTarget, reportId: number): Promise<number | null> {
  const [report] = await sql<{ group_id: number | null }>(db, 'select group_id from content_gap_reports where id = ?', [reportId]);
  return report?.group_id ?? null;
}

/** The gap group a proposal of the workspace was drafted from, if any. */
export async function proposalGapGroupId(db: SqlTarget, proposalId: number, workspaceId: string): Promise<number | null> {
  const [proposal] = await sql<{ gap_group_id: number | null }>(
    db,
    'select gap_group_id from proposals where id = ? and workspace_id = ?',
    [proposalId, workspaceId],
  );
  return proposal?.gap_group_id ?? null;
}
