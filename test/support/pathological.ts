import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';

/**
 * Shapes that make backtracking patterns and naive loops slow: runs of one character, of white
 * space, of separators, of alternating pairs; and runs that end in another character (what makes
 * an unanchored `/\/+$/` or `/\s+$/` try every start).
 */
export const SHAPES: [string, string, string][] = [
  ['a', '', 'run of one letter'],
  [' ', '', 'run of spaces'],
  ['/', '', 'run of slashes'],
  ['-', '', 'run of dashes'],
  ['a/', '', 'alternating letter and slash'],
  ['\t\n', '', 'alternating tab and newline'],
  ['/', 'x', 'run of slashes ending in a letter'],
  [' ', 'x', 'run of spaces ending in a letter'],
];

/** A value of `size` characters: `unit` repeated, then `end`. */
export function shaped(unit: string, size: number, end = ''): string {
  return unit.repeat(Math.ceil(size / unit.length)).slice(0, size - end.length) + end;
}

/** The pathological values to send to one input: every shape at the sizes given, the largest only for a few shapes. */
export function pathologicalValues(sizes: number[]): { value: string; label: string }[] {
  const out: { value: string; label: string }[] = [];
  for (const size of sizes) {
    const shapes = size > 200_000 ? SHAPES.filter(([u, end]) => end !== '' || u === 'a/') : SHAPES;
    for (const [unit, end, name] of shapes) out.push({ value: shaped(unit, size, end), label: `${name} × ${size}` });
  }
  return out;
}

/** CPU time of this process's main thread in ms (Linux: 10 ms ticks from /proc; elsewhere the whole process's). */
export function mainThreadCpuMs(): number {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10; // utime + stime, in ticks of 1/100 s
  } catch {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1000;
  }
}

/**
 * Measures, while `fn` runs, the main thread's CPU time (what a handler costs whatever else the
 * machine does; the service runs in this process) and the worst event-loop delay (wall time, so
 * it also shows a busy machine).
 */
export async function measured<T>(fn: () => Promise<T>): Promise<{ result: T; maxDelayMs: number; cpuMs: number }> {
  const histogram = monitorEventLoopDelay({ resolution: 5 });
  histogram.enable();
  const cpu = mainThreadCpuMs();
  try {
    const result = await fn();
    return { result, maxDelayMs: histogram.max / 1e6, cpuMs: mainThreadCpuMs() - cpu };
  } finally {
    histogram.disable();
  }
}

/** The worst figures of a sweep, per door. */
export class SweepReport {
  readonly worst = new Map<string, { maxDelayMs: number; cpuMs: number; delayWhat: string; cpuWhat: string; requests: number }>();

  record(door: string, what: string, maxDelayMs: number, cpuMs: number): void {
    const current = this.worst.get(door) ?? { maxDelayMs: 0, cpuMs: 0, delayWhat: '', cpuWhat: '', requests: 0 };
    current.requests++;
    if (maxDelayMs > current.maxDelayMs) Object.assign(current, { maxDelayMs, delayWhat: what });
    if (cpuMs > current.cpuMs) Object.assign(current, { cpuMs, cpuWhat: what });
    this.worst.set(door, current);
  }

  print(): void {
    for (const [door, w] of this.worst) {
      console.log(
        `pathological sweep ${door}: ${w.requests} requests; worst event-loop delay ${w.maxDelayMs.toFixed(1)} ms (${w.delayWhat}); worst ` +
          `main-thread CPU per request ${w.cpuMs.toFixed(1)} ms (${w.cpuWhat})`,
      );
    }
  }
}
