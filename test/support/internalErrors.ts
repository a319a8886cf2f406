import type { Level, Logger } from 'pino';
import pino from 'pino';
import { createLogger } from '../../src/app/logger.js';

// An unexpected error is a failed test: every service a test file starts (in process through
// testLogger, spawned through spawnService) is watched, and what it logs at error level or above
// (an internal error behind a 500, a 503's lost database, a dead database thread) fails the test it
// was logged in, unless that test declared it with expectInternalErrors. test/support/setup.ts
// settles the watches after each test and after the file.

/** pino's number for `error`: lines at or above it are the service's unexpected failures. */
const ERROR = 50;

/** A line a watched service logged at error level or above, as much of it as a failure message needs. */
interface LoggedError {
  service: string;
  line: Record<string, unknown>;
}

/** What one service logged at error level in the current test, and what the test said to expect. */
export class ErrorWatch {
  private logged: LoggedError[] = [];
  /** Lines the test declared (a sum of counts), or 'any' for a number a test cannot know beforehand. */
  private expected: number | 'any' = 0;

  constructor(readonly service: string) {
    watches.add(this);
  }

  /** Takes one JSON log line (a pino line; anything else is ignored). */
  take(text: string): void {
    if (levelOf(text) < ERROR) return;
    let line: Record<string, unknown>;
    try {
      line = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return;
    }
    if (typeof line.level === 'number' && line.level >= ERROR) this.logged.push({ service: this.service, line });
  }

  /**
   * Declares that the running test provokes internal errors: exactly `count` more lines (or, without
   * a count, any number of them, for faults whose count depends on timing).
   */
  expect(count?: number): void {
    if (count === undefined || this.expected === 'any') this.expected = 'any';
    else this.expected += count;
  }

  /** Ends the test for this watch: what was logged beyond what it declared, in words (null when all was declared), then starts afresh. */
  settle(): string | null {
    const { logged, expected } = this;
    this.logged = [];
    this.expected = 0;
    if (expected === 'any' || logged.length === expected) return null;
    const said = logged.map(describe).join('\n');
    return expected === 0
      ? `${this.service} logged ${logged.length} internal error(s) that the test did not declare (expectInternalErrors):\n${said}`
      : `${this.service} logged ${logged.length} internal error(s) where the test declared ${expected}:\n${said}`;
  }
}

/** One logged error as a reader wants it: the message, the error's type and message, the top of its stack. */
function describe({ line }: LoggedError): string {
  const err = (line.err ?? {}) as { type?: string; message?: string; stack?: string };
  // Its stack's top frames, reworded so the test runner does not take them for the failing test's own frames.
  const stack = (err.stack ?? '')
    .split('\n')
    .slice(1, 4)
    .map((frame) => `      from ${frame.trim().replace(/^at /, '')}`)
    .join('\n');
  return `  - ${String(line.msg)}: ${err.type ?? ''} ${err.message ?? JSON.stringify(line).slice(0, 300)}\n${stack}`;
}

/** Every watch of this test file (a file's tests run in one worker, with its own copy of this module). */
const watches = new Set<ErrorWatch>();
const byLogger = new WeakMap<Logger, ErrorWatch>();

/** Settles every watch after a test (or the file): throws, failing it, when a service logged an error it did not declare. */
export function settleWatches(): void {
  const problems = [...watches].map((w) => w.settle()).filter((p): p is string => p !== null);
  if (problems.length) throw new Error(problems.join('\n'));
}

/**
 * The service's logger for a test (its own redaction and format), watched: lines at error level and
 * above are kept by the watch, lines at `level` and above go to `destination` when one is given
 * (a test reading the log), else to stdout when TEST_LOG_LEVEL asks for them.
 */
export function testLogger(options: { level?: Level | 'silent'; destination?: { write(line: string): void }; name?: string } = {}): Logger {
  const asked = options.destination ? (options.level ?? 'info') : (process.env.TEST_LOG_LEVEL ?? 'silent');
  const shown = asked === 'silent' ? Infinity : pino.levels.values[asked];
  const sink = shown === Infinity ? null : (options.destination ?? process.stdout);
  const watch = new ErrorWatch(options.name ?? 'the service');
  const logger = createLogger({
    level: shown <= ERROR ? (asked as Level) : 'error',
    destination: {
      write(line: string) {
        watch.take(line);
        if (sink && levelOf(line) >= shown) sink.write(line);
      },
    },
  });
  byLogger.set(logger, watch);
  return logger;
}

/** The lines of a process's output logged at error level or above (the ones a watch takes). */
export function errorLines(output: string): string[] {
  return output.split('\n').filter((line) => levelOf(line) >= ERROR);
}

/** A pino line's level (0 when it has none). */
function levelOf(line: string): number {
  const match = /"level":(\d+)/.exec(line);
  return match ? Number(match[1]) : 0;
}

/** The watch of a logger made by testLogger; throws for any other, so no test app runs unwatched. */
export function watchOf(logger: Logger): ErrorWatch {
  const watch = byLogger.get(logger);
  if (!watch)
    throw new Error('a test service logs through testLogger() (test/support/internalErrors.ts), so its internal errors fail the test');
  return watch;
}
