import { EventEmitter } from 'node:events';
import pg from 'pg';
import type { Logger } from 'pino';
import { listenForAuthChanges } from '../store/authChanges.js';
import { pingConnection } from '../store/probes.js';
import { newPgClient } from '../db/hostPicking.js';
import type { KeyRow } from '../store/keyRow.js';

/** Announces, inside the changing transaction, that keys, members or plans changed (delivered to every process at commit). */
export { notifyAuthChanged as announceAuthChange } from '../store/authChanges.js';

/** How a process's listening connection names itself in pg_stat_activity (with its pid: one process's listener can be told apart). */
export function listenerApplicationName(pid = process.pid): string {
  return `wks-auth-listener ${pid}`;
}

const local = new EventEmitter();

/** Tells this process's caches at once (call after the commit; other processes hear the notification). */
export function signalAuthChanged(): void {
  local.emit('changed');
}

/**
 * Key lookups (key, member and organization) kept in process, so an authenticated request needs no
 * database round trip. Changes reach every process: the transactions that revoke a key or change an
 * organization announce it (announceAuthChange: a NOTIFY), every process listens (AuthChangeListener) and empties
 * its cache when it hears it; while the listening connection is down the cache is not used. An entry
 * is also re-read after `maxAgeMs`, so nothing stays stale for long even if a notification were lost.
 * Expiry is checked on every request against the cached `expires_at`.
 */
export class KeyCache {
  private readonly entries = new Map<string, { row: KeyRow; at: number }>();
  /** Bumped on every invalidation: a lookup that started before one must not fill the cache. */
  private generation = 0;
  private readonly unsubscribe: () => void;
  private readonly watchers = new Set<() => void>();

  constructor(
    private enabled: boolean,
    private readonly maxAgeMs = 30_000,
    private readonly maxEntries = 10_000,
  ) {
    const clear = () => this.clear();
    local.on('changed', clear);
    this.unsubscribe = () => local.off('changed', clear);
  }

  /** The cached row for a key digest, if fresh. */
  get(digest: string, now = Date.now()): KeyRow | undefined {
    if (!this.enabled) return undefined;
    const entry = this.entries.get(digest);
    if (!entry) return undefined;
    if (now - entry.at > this.maxAgeMs) {
      this.entries.delete(digest);
      return undefined;
    }
    return entry.row;
  }

  /** The generation to pass to `set` (read it before the lookup). */
  get stamp(): number {
    return this.generation;
  }

  /** Caches a looked-up row, unless the cache was invalidated since the lookup began. */
  set(digest: string, row: KeyRow, stamp: number, now = Date.now()): void {
    if (!this.enabled || stamp !== this.generation) return;
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(digest, { row, at: now });
  }

  clear(): void {
    this.generation++;
    this.entries.clear();
    for (const watcher of this.watchers) watcher();
  }

  /**
   * Calls `watcher` whenever the cache is emptied: something that affects authentication changed
   * (heard from this process or, by notification, from another), or changes could have been missed.
   * Returns the function that stops it.
   */
  onInvalidate(watcher: () => void): () => void {
    this.watchers.add(watcher);
    return () => this.watchers.delete(watcher);
  }

  /** Off while changes could be missed (the listening connection is down); on again, it starts empty. */
  setEnabled(enabled: boolean): void {
    this.clear();
    this.enabled = enabled;
  }

  close(): void {
    this.unsubscribe();
    this.clear();
    this.watchers.clear();
  }
}

/** How often the listening connection proves it is alive, and how long it may take to answer. */
const LISTENER_HEARTBEAT_MS = 3000;
const HEARTBEAT_TIMEOUT_MS = 1500;

/**
 * Keeps one connection LISTENing for the announcement of auth changes and empties the cache on every
 * notification. When the connection fails, the cache is switched off and the connection is
 * re-established (every second) before the cache is used again. A connection that dies without
 * an error (a dropped network path, an expired NAT entry) is caught by TCP keep-alive and by a
 * heartbeat query every 3 s that must answer within 1.5 s.
 */
export class AuthChangeListener {
  private client: pg.Client | null = null;
  private closed = false;
  private retry: NodeJS.Timeout | null = null;
  private heartbeat: NodeJS.Timeout | null = null;

  constructor(
    private readonly config: pg.ClientConfig,
    private readonly cache: KeyCache,
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    this.cache.setEnabled(false);
    const client = newPgClient({
      ...this.config,
      application_name: listenerApplicationName(),
      keepAlive: true,
      keepAliveInitialDelayMillis: 5000,
    });
    const lost = (error?: Error) => {
      if (this.client !== client) return;
      this.client = null;
      this.cache.setEnabled(false);
      this.stopHeartbeat();
      client.end().catch(() => undefined);
      if (this.closed) return;
      this.logger.warn({ err: error }, 'auth change listener lost its connection; key cache off until it is back');
      this.retry = setTimeout(() => void this.start().catch(() => undefined), 1000);
      this.retry.unref();
    };
    client.on('notification', () => {
      this.cache.clear();
    });
    client.on('error', lost);
    client.on('end', () => lost());
    this.client = client;
    try {
      await client.connect();
      await listenForAuthChanges(client);
      if (this.client === client && !this.closed) {
        this.cache.setEnabled(true);
        this.startHeartbeat(client, lost);
      }
    } catch (error) {
      lost(error as Error);
    }
  }

  private startHeartbeat(client: pg.Client, lost: (error?: Error) => void): void {
    this.stopHeartbeat();
    this.heartbeat = setInterval(() => {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer to the heartbeat within ${HEARTBEAT_TIMEOUT_MS} ms`)), HEARTBEAT_TIMEOUT_MS);
      });
      Promise.race([pingConnection(client), timeout]).then(
        () => clearTimeout(timer),
        (error) => {
          clearTimeout(timer);
          lost(error as Error);
        },
      );
    }, LISTENER_HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  private stopHeartbeat(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
  }

  /**
   * Listens again on a new connection (after a failover: a connection still open to a demoted
   * primary would hear no announcement, since nothing is written there any more).
   */
  reconnect(): void {
    const client = this.client;
    // Its end event is the lost connection: the cache goes off until the new one listens.
    if (client) client.end().catch(() => undefined);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    this.stopHeartbeat();
    const client = this.client;
    this.client = null;
    this.cache.setEnabled(false);
    await client?.end().catch(() => undefined);
  }
}
