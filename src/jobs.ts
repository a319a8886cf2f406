import type { Logger } from 'pino';

/**
 * Runs `pass` in the background, in every process: again `minGapMs` after the last pass ended
 * while it finds work, after `idleMs` when it found none, later after a failure; `kick()` wakes
 * it early, but never sooner than `minGapMs` after the last pass (so a burst of writes costs a
 * few passes, not one per write). Shared by the embedding worker and the webhook dispatcher.
 */
export class PollingLoop {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;
  private started = false;
  private lastEnded = 0;

  constructor(
    private readonly name: string,
    private readonly pass: () => Promise<number>,
    private readonly logger: Logger,
    private readonly idleMs = 500,
    private readonly minGapMs = 0,
  ) {}

  start(): void {
    this.started = true;
    this.plan(0);
  }

  /** Runs a pass now (or right after the current one); ignored until started. */
  kick(): void {
    if (this.started && !this.stopped && !this.running) this.plan(Math.max(0, this.lastEnded + this.minGapMs - Date.now()));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    // Let a pass in flight finish, but never hang a shutdown on it (a lease lets another process redo it).
    await Promise.race([this.running, new Promise((resolve) => setTimeout(resolve, 5_000).unref())]);
  }

  private plan(ms: number) {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.running = this.pass()
        .then((n) => (n > 0 ? this.minGapMs : this.idleMs))
        .catch((error) => {
          this.logger.warn({ err: error }, `${this.name} pass failed; will retry`);
          return this.idleMs * 4;
        })
        .then((next) => {
          this.running = null;
          this.lastEnded = Date.now();
          if (!this.stopped) this.plan(next);
        });
    }, ms);
    this.timer.unref?.();
  }
}
