import { randomUUID } from 'node:crypto';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { freshEm } from '../db/orm.js';
import { dropExpiredSocketLeases, insertSocketLease } from '../store/live.js';
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
    const row = await underLocks(this.orm, [`wks_sockets:${organizationId}`], async (em) => {
      await dropExpiredSocketLeases(em, organizationId);
      return insertSocketLease(em, {
        id,
        keyId,
        organizationId,
        seconds: LEASE_S,
        perKey: caps.perKey,
        perOrganization: caps.perOrganization,
      });
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
