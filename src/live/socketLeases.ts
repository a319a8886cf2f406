import { randomUUID } from 'node:crypto';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { freshEm } from '../db/orm.js';
import { sql } from '../db/sql.js';
import { HeldLeases, LEASE_S, underLocks } from './leases.js';

/** The caps an authenticated WebSocket is counted against, across every process. */
export interface SocketCaps {
  perKey: number;
  perOrganization: number;
}

/** A socket's slot, or which cap refused it. */
export type SocketLease = { id: string } | { refused: 'key' | 'organization'; limit: number };

/**
 * Open WebSockets of agent keys, counted per key and per organization across every process that
 * shares the database: one lease row per socket (table `socket_leases`), taken under a
 * transaction-scoped advisory lock on the organization (a key's sockets are a subset of its
 * organization's, so one lock orders both counts), renewed while the socket is open and expiring
 * LEASE_S after a process dies.
 */
export class SocketLeases {
  private readonly held: HeldLeases;

  constructor(
    private readonly orm: MikroORM,
    logger: Logger,
  ) {
    this.held = new HeldLeases(freshEm(orm), 'socket_leases', logger);
  }

  /** Takes a slot for a socket of `keyId` (of `organizationId`), or names the cap that refuses it. */
  async acquire(keyId: string, organizationId: string, caps: SocketCaps): Promise<SocketLease> {
    const id = randomUUID();
    const [row] = await underLocks(this.orm, [`wks_sockets:${organizationId}`], async (em) => {
      await sql(em, 'delete from socket_leases where organization_id = ? and expires_at <= now()', [organizationId]);
      return sql<{ by_key: string; by_org: string; taken: string }>(
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
        { id, key: keyId, org: organizationId, lease: LEASE_S, perKey: caps.perKey, perOrg: caps.perOrganization },
      );
    });
    if (Number(row.taken) > 0) {
      this.held.hold(id);
      return { id };
    }
    return Number(row.by_key) >= caps.perKey
      ? { refused: 'key', limit: caps.perKey }
      : { refused: 'organization', limit: caps.perOrganization };
  }

  /** Frees a socket's slot. */
  release(id: string): Promise<void> {
    return this.held.release(id);
  }

  /** Frees every slot this process holds (shutdown). */
  close(): Promise<void> {
    return this.held.close();
  }
}
