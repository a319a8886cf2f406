import { randomUUID } from 'node:crypto';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { freshEm } from '../db/orm.js';
import type { SqlTarget } from '../db/sql.js';
import { DomainError } from '../errors.js';
import { liveEventsPast } from '../store/events.js';
import { currentSnapshot, dropExpiredSubscriptions, insertSubscriptionLease } from '../store/live.js';
import { onWebhookWork, type Touched } from '../webhooks/signal.js';
import { HeldLeases, LEASE_S, underLocks } from './leases.js';

/** One committed event as live subscribers receive it (the audit trail's row). */
export interface LiveEvent {
  id: string;
  workspaceId: string;
  action: string;
  targetType: string;
  targetId: string | null;
}

/** Open subscriptions per agent key, counted across every process. */
export const SUBSCRIPTIONS_PER_HOLDER = 10;
/** Open subscriptions of the admin token (every dashboard and console together), across every process. */
export const ADMIN_SUBSCRIPTIONS = 100;
/** Events a subscriber may fall behind by; beyond that its subscription ends with an error (it must re-read, then subscribe again). */
export const SUBSCRIBER_BUFFER = 256;
/**
 * One read may hand a subscriber more than SUBSCRIBER_BUFFER events at once (a spec sync writes
 * hundreds in one transaction; a long transaction elsewhere holds a backlog back): the hub then
 * waits this long for it to catch up before it ends a subscriber still over the limit.
 */
const CATCH_UP_MS = 2000;
/** How often a process with subscribers reads new events (a write in this process that one of them may care about also wakes it). */
const POLL_MS = 200;
/**
 * Reads start at least this far apart: under a stream of writes that wake the hub, one read then
 * takes the events of many writes (a change still arrives within a few tens of ms)
 * instead of the database being asked after every write.
 */
const MIN_READ_GAP_MS = 25;
const BATCH = 500;

/** A live subscription's stream of events: an async iterable with a bounded buffer. */
export interface LiveStream extends AsyncIterableIterator<LiveEvent> {
  readonly workspaceId: string;
}

/**
 * The events a subscriber may accept, when it knows them in advance: those about one of `targets`
 * (targetOf) or doing one of `actions`. The hub then asks it about those only, so an event costs
 * the subscribers it concerns, not every open one (a thousand MCP listeners on one note).
 */
export interface LiveInterest {
  targets: readonly string[];
  actions: readonly string[];
}

/** An event's target as LiveInterest names it. */
export const targetOf = (targetType: string, targetId: string | null): string => `${targetType}:${targetId ?? ''}`;

interface Subscriber {
  workspaceId: string;
  interest: LiveInterest | null;
  /** The database snapshot when it subscribed: events of transactions it shows as committed came before. */
  before: Snapshot;
  accept(event: LiveEvent): boolean;
  push(event: LiveEvent): void;
  /** Events handed over and not yet taken by its client. */
  readonly behind: number;
  /** Resolves once it has taken events (or ended). */
  progressed(): Promise<void>;
  /** Ends it with SubscriberTooSlowError, after the first SUBSCRIBER_BUFFER of its events. */
  overrun(): void;
}

/** A subscriber that fell more than SUBSCRIBER_BUFFER events behind (a slow or stalled client). */
export class SubscriberTooSlowError extends DomainError {
  constructor() {
    super(
      'rate_limited',
      `This subscription fell more than ${SUBSCRIBER_BUFFER} events behind and was ended; read the current state, then subscribe again.`,
      { buffered: SUBSCRIBER_BUFFER },
    );
  }
}

/**
 * Delivers committed events (the audit trail's table, which every process writes in the same
 * transaction as each change) to this process's GraphQL subscribers. While anyone subscribes, the
 * hub reads new events of the watched workspaces in commit order — after its cursor, and only from
 * transactions older than every one still running, the webhook dispatcher's rule, so no commit
 * can land behind the cursor — every POLL_MS, and soon after this process writes something one of
 * its subscribers may care about (see LiveInterest; a subscriber without one cares about every
 * write in its workspace). So a write through any process reaches subscribers on every process
 * sharing the database.
 */
export class LiveHub {
  private readonly subscribers = new Set<Subscriber>();
  /** The subscribers by what they ask for (see LiveInterest). */
  private readonly asked = new InterestIndex();
  private cursor: { xid: string; id: string } | null = null;
  private timer: NodeJS.Timeout | null = null;
  private reading: Promise<void> | null = null;
  private again = false;
  /** When the last read started, and the read a wake scheduled for later (see MIN_READ_GAP_MS). */
  private lastRead = 0;
  private soon: NodeJS.Timeout | null = null;
  /** Reads and joining subscribers take turns (see exclusive). */
  private turn: Promise<unknown> = Promise.resolve();
  /** Each open subscription's lease row, renewed while it is open (a process that dies frees its slots within LEASE_S). */
  private readonly leases: HeldLeases;
  private readonly offSignal: () => void;
  private closed = false;
  private readCount = 0;

  private readonly db: SqlTarget;

  constructor(
    private readonly orm: MikroORM,
    private readonly logger: Logger,
  ) {
    this.db = freshEm(orm);
    this.leases = new HeldLeases(this.db, 'live_subscriptions', logger);
    // A write in this process wakes the hub only if some subscriber may care about what it touched;
    // the rest are read at the next poll, handed to no one.
    this.offSignal = onWebhookWork((write) => {
      if (!write || this.asked.concerns(write)) this.wake();
    });
  }

  /** Subscribers in this process (tests, health). */
  get size(): number {
    return this.subscribers.size;
  }

  /** Reads of new events this process made (metrics): every POLL_MS while anyone subscribes, and after a write a subscriber may care about. */
  get reads(): number {
    return this.readCount;
  }

  /**
   * Takes one of the holder's `limit` slots (across processes: a lease row, counted under an
   * advisory lock on the holder), or refuses with `rate_limited`.
   */
  async acquire(holder: string, workspaceId: string, field: string, limit: number): Promise<string> {
    const id = randomUUID();
    const taken = await underLocks(this.orm, [`wks_live:${holder}`], async (em) => {
      // Leases a dead process left behind are gone once they expire.
      await dropExpiredSubscriptions(em, holder);
      return insertSubscriptionLease(em, { id, holder, workspaceId, field, seconds: LEASE_S, limit });
    });
    if (!taken)
      throw new DomainError('rate_limited', `This caller already holds ${limit} open subscriptions; complete one before opening another.`, {
        limit,
      });
    this.leases.hold(id);
    return id;
  }

  /** Frees a slot taken by acquire. */
  release(lease: string): Promise<void> {
    return this.leases.release(lease);
  }

  /** A stream of the workspace's events that `accept` selects: those committed after this call. */
  async subscribe(workspaceId: string, accept: (event: LiveEvent) => boolean, interest?: LiveInterest): Promise<LiveStream> {
    if (this.closed) throw new Error('the live hub is closed');
    const { subscriber, stream } = bufferedSubscriber(workspaceId, interest ?? null, accept, (gone) => {
      if (this.subscribers.delete(gone)) this.asked.remove(gone);
      if (!this.subscribers.size) this.stopPolling();
    });
    // The snapshot is taken and the subscriber registered between two reads, never during one: a
    // read that began before it joined could otherwise move the cursor past an event committed
    // after its snapshot, which it would then never receive.
    await this.exclusive(async () => {
      subscriber.before = parseSnapshot(await currentSnapshot(this.db));
      if (this.closed) throw new Error('the live hub is closed');
      // Everything below the snapshot's xmin has committed: the cursor of a hub that was idle starts there.
      this.cursor ??= { xid: subscriber.before.xmin.toString(), id: '0' };
      this.subscribers.add(subscriber);
      this.asked.add(subscriber);
      this.startPolling();
    });
    return stream;
  }

  /** Runs `work` when no read and no other joining subscriber is running, and holds them off until it is done. */
  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.turn.then(work, work);
    this.turn = run.catch(() => undefined);
    return run;
  }

  /**
   * After a read handed out its events: a subscriber more than SUBSCRIBER_BUFFER behind gets up to
   * CATCH_UP_MS to take them (the next read waits), then is ended if it is still over.
   */
  private async awaitLaggards(handed: Set<Subscriber>): Promise<void> {
    const deadline = Date.now() + CATCH_UP_MS;
    for (;;) {
      // Only a subscriber handed events by this read can have fallen behind since the last one.
      const laggards = [...handed].filter((s) => s.behind > SUBSCRIBER_BUFFER);
      const left = deadline - Date.now();
      if (!laggards.length) return;
      if (left <= 0) {
        for (const s of laggards) s.overrun();
        return;
      }
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.race(laggards.map((s) => s.progressed())),
        new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.min(left, 100)))),
      ]);
      clearTimeout(timer);
    }
  }

  /** Reads new events soon (this process wrote something a subscriber may care about): now, or MIN_READ_GAP_MS after the last read started. */
  wake(): void {
    if (!this.subscribers.size || this.soon) return;
    const wait = this.lastRead + MIN_READ_GAP_MS - Date.now();
    if (wait <= 0) void this.read();
    else
      this.soon = setTimeout(() => {
        this.soon = null;
        void this.read();
      }, wait).unref();
  }

  private startPolling(): void {
    this.timer ??= setInterval(() => void this.read(), POLL_MS).unref();
  }

  private stopPolling(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    // A later first subscriber starts from its own "now".
    if (!this.reading) this.cursor = null;
  }

  /** One read at a time; a wake during a read reads again after it (MIN_READ_GAP_MS after it started). */
  private read(): Promise<void> {
    if (this.reading) {
      this.again = true;
      return this.reading;
    }
    this.lastRead = Date.now();
    this.reading = this.exclusive(() => this.readOnce())
      .catch((err: unknown) => this.logger.warn({ err }, 'live updates: reading new events failed; retrying'))
      .finally(() => {
        this.reading = null;
        if (!this.subscribers.size) this.cursor = null;
        else if (this.again) {
          this.again = false;
          this.wake();
        }
      });
    return this.reading;
  }

  private async readOnce(): Promise<void> {
    this.readCount++;
    for (;;) {
      const workspaces = [...new Set([...this.subscribers].map((s) => s.workspaceId))];
      if (!workspaces.length || !this.cursor) return;
      const rows = await liveEventsPast(this.db, this.cursor, workspaces, BATCH);
      const events = rows.filter((r) => r.id !== null);
      const handed = new Set<Subscriber>();
      for (const row of events) {
        const event: LiveEvent = {
          id: row.id!,
          workspaceId: row.workspaceId,
          action: row.action,
          targetType: row.targetType,
          targetId: row.targetId,
        };
        const xid = BigInt(row.xid);
        for (const subscriber of this.asked.about(event))
          if (!committedIn(subscriber.before, xid) && subscriber.accept(event)) {
            subscriber.push(event);
            handed.add(subscriber);
          }
      }
      await this.awaitLaggards(handed);
      if (events.length === BATCH) {
        const last = events.at(-1)!;
        this.cursor = { xid: last.xid, id: last.id! };
        continue;
      }
      // Every event below the horizon has been read: a subscriber that joins now starts there.
      this.cursor = { xid: rows[0].horizon, id: '0' };
      return;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.offSignal();
    this.stopPolling();
    if (this.soon) clearTimeout(this.soon);
    this.soon = null;
    for (const subscriber of [...this.subscribers]) {
      this.subscribers.delete(subscriber);
      this.asked.remove(subscriber);
    }
    await this.reading;
    await this.leases.close();
  }
}

/**
 * A subscriber's buffer and the stream its client reads from it: events are handed to a waiting
 * reader at once, else buffered (the hub judges how far behind it may fall); `leave` is called
 * when it ends, by its client or by the hub.
 */
function bufferedSubscriber(
  workspaceId: string,
  interest: LiveInterest | null,
  accept: (event: LiveEvent) => boolean,
  leave: (subscriber: Subscriber) => void,
): { subscriber: Subscriber; stream: LiveStream } {
  const buffer: LiveEvent[] = [];
  let waiting: ((result: IteratorResult<LiveEvent>) => void) | null = null;
  let failure: Error | null = null;
  let done = false;
  let progress: (() => void) | null = null;
  const progressed = () => {
    const wake = progress;
    progress = null;
    wake?.();
  };
  const finish = () => {
    done = true;
    leave(subscriber);
    progressed();
  };
  const subscriber: Subscriber = {
    workspaceId,
    interest,
    before: { xmin: 0n, xmax: 0n, running: new Set() }, // taken when it joins the hub (LiveHub.subscribe)
    accept,
    push: (event) => {
      if (done) return;
      if (waiting) {
        const resolve = waiting;
        waiting = null;
        resolve({ value: event, done: false });
        return;
      }
      buffer.push(event);
    },
    get behind() {
      return buffer.length;
    },
    progressed: () => (done ? Promise.resolve() : new Promise<void>((resolve) => (progress = resolve))),
    overrun: () => {
      // Backpressure: a client that cannot keep up is told so, rather than losing events silently.
      buffer.length = Math.min(buffer.length, SUBSCRIBER_BUFFER);
      failure = new SubscriberTooSlowError();
      finish();
    },
  };
  const stream: LiveStream = {
    workspaceId,
    next: () => {
      if (buffer.length) {
        const value = buffer.shift()!;
        progressed();
        return Promise.resolve({ value, done: false });
      }
      if (failure) return Promise.reject(failure);
      if (done) return Promise.resolve({ value: undefined, done: true });
      progressed();
      return new Promise((resolve) => (waiting = resolve));
    },
    return: () => {
      finish();
      const resolve = waiting;
      waiting = null;
      resolve?.({ value: undefined, done: true });
      return Promise.resolve({ value: undefined, done: true });
    },
    throw: (error?: unknown) => {
      finish();
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    },
    [Symbol.asyncIterator]() {
      return stream;
    },
  };
  return { subscriber, stream };
}

/** A PostgreSQL snapshot (`pg_current_snapshot()`): `xmin:xmax:xip,…`. */
interface Snapshot {
  xmin: bigint;
  xmax: bigint;
  running: Set<bigint>;
}

function parseSnapshot(text: string): Snapshot {
  const [xmin, xmax, xip] = text.split(':');
  return { xmin: BigInt(xmin), xmax: BigInt(xmax), running: new Set(xip ? xip.split(',').map((x) => BigInt(x)) : []) };
}

/** Whether the transaction `xid` (a committed writer) had committed when `snapshot` was taken (pg_visible_in_snapshot). */
function committedIn(snapshot: Snapshot, xid: bigint): boolean {
  if (xid < snapshot.xmin) return true;
  if (xid >= snapshot.xmax) return false;
  return !snapshot.running.has(xid);
}

/** The index's keys: a workspace's subscribers to one target, and to one action. */
const byTarget = (workspaceId: string, target: string) => `${workspaceId}\u0000t\u0000${target}`;
const byAction = (workspaceId: string, action: string) => `${workspaceId}\u0000a\u0000${action}`;

/** Subscribers by workspace and by what they ask for: each event is offered to those it may concern. */
class InterestIndex {
  /** Subscribers without a LiveInterest, by workspace: asked about every event. */
  private readonly everything = new Map<string, Set<Subscriber>>();
  /** Subscribers with one, by workspace and target or action. */
  private readonly some = new Map<string, Set<Subscriber>>();

  add(s: Subscriber): void {
    for (const key of this.keysOf(s)) {
      const [map, k] = key;
      let set = map.get(k);
      if (!set) map.set(k, (set = new Set()));
      set.add(s);
    }
  }

  remove(s: Subscriber): void {
    for (const [map, k] of this.keysOf(s)) {
      const set = map.get(k);
      set?.delete(s);
      if (set && !set.size) map.delete(k);
    }
  }

  /** Whether a write's event may concern any subscriber (see about); one outside any workspace reaches none. */
  concerns(event: Touched): boolean {
    const { workspaceId } = event;
    return workspaceId !== null && this.setsAbout({ ...event, workspaceId }).length > 0;
  }

  /** The subscribers an event may concern (each once). */
  about(event: LiveEvent): Iterable<Subscriber> {
    const found = this.setsAbout(event);
    if (found.length <= 1) return found[0] ?? [];
    return new Set(found.flatMap((set) => [...set]));
  }

  /** The non-empty sets an event's subscribers are in: its workspace's unfiltered ones, its target's, its action's. */
  private setsAbout(event: Pick<LiveEvent, 'workspaceId' | 'action' | 'targetType' | 'targetId'>): Set<Subscriber>[] {
    const all = this.everything.get(event.workspaceId);
    const target = this.some.get(byTarget(event.workspaceId, targetOf(event.targetType, event.targetId)));
    const action = this.some.get(byAction(event.workspaceId, event.action));
    return [all, target, action].filter((set): set is Set<Subscriber> => !!set?.size);
  }

  private keysOf(s: Subscriber): [Map<string, Set<Subscriber>>, string][] {
    if (!s.interest) return [[this.everything, s.workspaceId]];
    return [
      ...s.interest.targets.map((t): [Map<string, Set<Subscriber>>, string] => [this.some, byTarget(s.workspaceId, t)]),
      ...s.interest.actions.map((a): [Map<string, Set<Subscriber>>, string] => [this.some, byAction(s.workspaceId, a)]),
    ];
  }
}
