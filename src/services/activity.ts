/**
 * Who uses a workspace, agents or people: every workspace operation is counted in this process by
 * workspace, UTC day, door and kind of caller, and the counts are added to the database every few
 * seconds in one statement (a request pays for a map increment, never a write). A process that is
 * killed loses at most its last few seconds of counts; `/metrics` shows this process's totals.
 */
import type { Logger } from 'pino';
import type { ActivityCounter, CallerKind, Door } from '../context.js';
import type { SqlTarget } from '../db/sql.js';
import { activityRows, addActivity, type ActivityCount } from '../store/activity.js';
import type { ActivityDay } from '../types/activity.js';

const DAY_MS = 86_400_000;

/** How often a process adds its counts to the database. */
export const ACTIVITY_FLUSH_MS = 5_000;

/** This process's counters, flushed to workspace_activity. */
export class ActivityTally implements ActivityCounter {
  private pending = new Map<string, ActivityCount>();
  /** Operations since start by door, caller and kind (`door|caller|kind`), for /metrics. */
  readonly totals = new Map<string, number>();
  private readonly timer: NodeJS.Timeout;
  private flushing: Promise<void> | null = null;

  constructor(
    private readonly db: SqlTarget,
    private readonly logger: Logger,
    flushMs = ACTIVITY_FLUSH_MS,
  ) {
    this.timer = setInterval(() => void this.flush(), flushMs);
    this.timer.unref();
  }

  /** The UTC day (YYYY-MM-DD) of `dayStart` … `dayStart` + 1 day, made once a day rather than once a request. */
  private day = { start: 0, text: '' };

  count(workspaceId: string, door: Door, caller: CallerKind, kind: 'read' | 'write'): void {
    const now = Date.now();
    if (now < this.day.start || now >= this.day.start + DAY_MS) {
      const start = now - (now % DAY_MS);
      this.day = { start, text: new Date(start).toISOString().slice(0, 10) };
    }
    const day = this.day.text;
    const key = `${workspaceId}|${day}|${door}|${caller}`;
    let entry = this.pending.get(key);
    if (!entry) this.pending.set(key, (entry = { workspaceId, day, door, caller, reads: 0, writes: 0 }));
    if (kind === 'read') entry.reads++;
    else entry.writes++;
    const total = `${door}|${caller}|${kind}`;
    this.totals.set(total, (this.totals.get(total) ?? 0) + 1);
  }

  /** Adds what was counted since the last flush to the database (one flush at a time; a failed one is logged and dropped). */
  async flush(): Promise<void> {
    if (this.flushing) return this.flushing;
    if (!this.pending.size) return;
    const counts = [...this.pending.values()];
    this.pending = new Map();
    this.flushing = addActivity(this.db, counts)
      .catch((error) => this.logger.warn({ err: error, counters: counts.length }, 'activity counts were not recorded'))
      .finally(() => (this.flushing = null));
    return this.flushing;
  }

  /** Stops the timer and flushes what is left. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.flushing;
    await this.flush();
  }
}

/** A workspace's use over the last `days` UTC days, oldest first, by door and kind of caller (see activityRows). */
export async function workspaceActivity(db: SqlTarget, workspaceId: string, days: number): Promise<ActivityDay[]> {
  const rows = await activityRows(db, workspaceId, days);
  return rows.map((r) => ({
    day: r.day,
    door: r.door,
    caller: r.caller,
    reads: Number(r.reads),
    writes: Number(r.writes),
    searches: Number(r.searches),
    contentGaps: Number(r.gaps),
  }));
}
