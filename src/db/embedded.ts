import { EventEmitter } from 'node:events';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { DbConnection } from './config.js';

export interface EmbeddedOptions {
  /** Directory kept across restarts; omit for an in-memory database. */
  dataDir?: string;
  /** A `dumpDataDir()` tarball to start from (tests start each file from one migrated dump). */
  loadDataDir?: Blob;
  maxConnections?: number;
  /** Restarts of a dead database thread allowed within RESTART_WINDOW_MS (default 3; only with a data directory). */
  maxRestarts?: number;
}

/** Where the embedded database stands: starting, serving, restarting after its thread died, given up (the service should exit), closed. */
export type EmbeddedState = 'starting' | 'up' | 'restarting' | 'failed' | 'closed';

/** What /readyz and /metrics read of the database thread. */
export interface EmbeddedHealth {
  state: EmbeddedState;
  /** Threads started again after one died, since the service started. */
  restarts: number;
  /** Why the last thread died, if one did. */
  lastFailure: string | null;
  /** Seconds the database threads have spent working (not waiting for statements), all threads so far. */
  busySeconds: number;
}

/** Events: `down` (reason) when the thread dies, `up` once a new one serves, `failed` (reason) when no restart is left. */
export interface EmbeddedDatabase extends EventEmitter {
  connection: DbConnection;
  health(): EmbeddedHealth;
  /** A `dumpDataDir()` tarball of the database as it is now. */
  dump(): Promise<Blob>;
  /** Tests: makes the database thread die of an exception nothing catches, as a WebAssembly abort would. */
  injectFault(reason: string): void;
  close(): Promise<void>;
}

/** How long a database thread may take to open its data directory (a fresh one takes ~8 s on two cores). */
const START_TIMEOUT_MS = 120_000;
/** Restarts are counted over this window: more than `maxRestarts` in it and the thread is given up. */
const RESTART_WINDOW_MS = 10 * 60_000;

/** What the database thread sends (see embeddedThread.mjs). */
type ThreadMessage =
  | { type: 'ready' }
  | { type: 'fatal'; message: string; stack?: string }
  | { type: 'dumped'; id: number; tarball: ArrayBuffer }
  | { type: 'closed'; id: number };

/**
 * Starts PGlite in a worker thread behind a Postgres-protocol unix socket, so the ordinary driver
 * connects to it and the statements' work runs beside the thread that answers requests, not on it.
 * A thread that dies (a WebAssembly abort, out of memory) is started again on the same data
 * directory, which recovers as after a crash; an in-memory database cannot be, and is given up.
 */
export async function startEmbedded(options: EmbeddedOptions): Promise<EmbeddedDatabase> {
  if (options.dataDir) await mkdir(options.dataDir, { recursive: true });
  const socketDir = await mkdtemp(join(tmpdir(), 'wks-pg-'));
  const database = new EmbeddedThread(options, socketDir);
  try {
    await database.start(options.loadDataDir ? await options.loadDataDir.arrayBuffer() : undefined);
  } catch (error) {
    await rm(socketDir, { recursive: true, force: true });
    throw error;
  }
  return database;
}

class EmbeddedThread extends EventEmitter implements EmbeddedDatabase {
  readonly connection: DbConnection;
  private worker: Worker | null = null;
  private state: EmbeddedState = 'starting';
  private restartTimes: number[] = [];
  private restarts = 0;
  private lastFailure: string | null = null;
  /** Busy time of threads that have ended, in ms. */
  private pastBusyMs = 0;
  private nextId = 1;
  private readonly pending = new Map<number, { resolve(message: ThreadMessage): void; reject(error: Error): void }>();

  constructor(
    private readonly options: EmbeddedOptions,
    private readonly socketDir: string,
  ) {
    super();
    this.connection = { host: socketDir, port: 5432, dbName: 'postgres', user: 'postgres', password: 'postgres' };
  }

  /** Starts a thread and resolves once its socket listens; rejects with the thread's own reason if it cannot. */
  async start(dump?: ArrayBuffer): Promise<void> {
    const socketPath = join(this.socketDir, '.s.PGSQL.5432');
    await rm(socketPath, { force: true }); // left by a thread that died
    const worker = new Worker(new URL('./embeddedThread.mjs', import.meta.url), {
      workerData: {
        dataDir: this.options.dataDir,
        dump,
        socketPath,
        // Above the ORM pool plus the migration lock client; the socket server's default of 1 resets extra connections.
        maxConnections: this.options.maxConnections ?? 64,
      },
      transferList: dump ? [dump] : [],
    });
    this.worker = worker;
    let fatal: string | null = null;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => void worker.terminate(), START_TIMEOUT_MS);
      worker.on('message', (message: ThreadMessage) => {
        if (message.type === 'ready') {
          clearTimeout(timer);
          resolve();
        } else if (message.type === 'fatal') fatal = message.message;
        else this.settle(message);
      });
      worker.on('error', (error) => (fatal ??= error.message));
      worker.once('exit', (code) => {
        clearTimeout(timer);
        const reason = fatal ?? `the database thread exited with code ${code}`;
        reject(new Error(`the embedded database did not start: ${reason}`));
        this.ended(worker, reason);
      });
    });
    this.state = 'up';
  }

  health(): EmbeddedHealth {
    const running = this.worker ? this.worker.performance.eventLoopUtilization().active : 0;
    return {
      state: this.state,
      restarts: this.restarts,
      lastFailure: this.lastFailure,
      busySeconds: (this.pastBusyMs + running) / 1000,
    };
  }

  async dump(): Promise<Blob> {
    const answer = await this.ask({ type: 'dump' });
    if (answer.type !== 'dumped') throw new Error('the database thread did not answer the dump');
    return new Blob([answer.tarball]);
  }

  injectFault(reason: string): void {
    this.worker?.postMessage({ type: 'fault', reason });
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.state = 'closed';
    if (worker) {
      await this.ask({ type: 'close' }).catch(() => undefined);
      await worker.terminate();
    }
    await rm(this.socketDir, { recursive: true, force: true });
  }

  /** Sends a request to the thread and waits for the answer with the same id. */
  private ask(message: { type: 'dump' | 'close' }): Promise<ThreadMessage> {
    const worker = this.worker;
    if (!worker || (this.state !== 'up' && message.type !== 'close'))
      return Promise.reject(new Error('the embedded database is not running'));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.postMessage({ ...message, id });
    });
  }

  private settle(message: ThreadMessage): void {
    if (!('id' in message)) return;
    this.pending.get(message.id)?.resolve(message);
    this.pending.delete(message.id);
  }

  /** A thread ended: expected on close; otherwise it died, and is started again while restarts are left. */
  private ended(worker: Worker, reason: string): void {
    if (this.worker !== worker) return;
    this.pastBusyMs += worker.performance.eventLoopUtilization().active;
    this.worker = null;
    for (const waiting of this.pending.values()) waiting.reject(new Error(`the embedded database stopped: ${reason}`));
    this.pending.clear();
    // Closing, or a start that failed (its caller sees why).
    if (this.state === 'closed' || this.state === 'starting' || this.state === 'restarting') return;
    this.lastFailure = reason;
    this.emit('down', reason);
    const now = Date.now();
    this.restartTimes = this.restartTimes.filter((t) => now - t < RESTART_WINDOW_MS);
    // An in-memory database died with its thread: starting an empty one would answer with nothing.
    if (!this.options.dataDir || this.restartTimes.length >= (this.options.maxRestarts ?? 3)) {
      this.state = 'failed';
      this.emit('failed', reason);
      return;
    }
    this.restartTimes.push(now);
    this.state = 'restarting';
    this.start().then(
      () => {
        this.restarts++;
        this.emit('up');
      },
      (error: Error) => {
        this.state = 'failed';
        this.emit('failed', error.message);
      },
    );
  }
}
