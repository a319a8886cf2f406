/**
 * Where a run's time went: CPU seconds spent by the server process and by the local PostgreSQL
 * during a run, read from /proc (Linux; null elsewhere, or when the database is on another host).
 */
import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc/<pid>/stat (USER_HZ: 100 on every Linux this runs on). */
const TICKS = 100;

/** utime, stime, cutime and cstime of a `/proc/…/stat` file, in ticks; null when it is gone. */
function statTimes(file: string): [number, number, number, number] | null {
  try {
    // Fields after the command name (which may hold spaces) start at state: utime, stime, cutime and cstime are the 12th to 15th after it.
    const stat = readFileSync(file, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return [Number(fields[11]), Number(fields[12]), Number(fields[13]), Number(fields[14])];
  } catch {
    return null;
  }
}

/**
 * utime + stime of one process, in ticks, and with `children` the times of its exited children
 * too (a PostgreSQL backend that ends is counted in its postmaster's); null when it is gone.
 */
function processTicks(pid: number, children = false, file = `/proc/${pid}/stat`): number | null {
  const times = statTimes(file);
  return times && times[0] + times[1] + (children ? times[2] + times[3] : 0);
}

/** Total ticks of every process whose command is `postgres` (the server and its backends), or null without /proc. */
function postgresTicks(): number | null {
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((p) => /^\d+$/.test(p));
  } catch {
    return null;
  }
  let total = 0;
  for (const pid of pids) {
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() !== 'postgres') continue;
    } catch {
      continue;
    }
    total += processTicks(Number(pid), true) ?? 0;
  }
  return total;
}

/** Ticks of a process's main thread alone (its thread id is the process id): in Node, the thread that answers requests. */
const mainThreadStat = (pid: number) => `/proc/${pid}/task/${pid}/stat`;
const mainThreadTicks = (pid: number) => processTicks(pid, false, mainThreadStat(pid));

/**
 * CPU milliseconds the server (all its threads, and its main thread alone: the one that answers
 * requests, without worker threads such as the embedding model's) and the database spent
 * between `start()` and the returned stop function.
 */
export function cpuMeter(
  serverPid: number | undefined,
  localDatabase: boolean,
): () => { server: number | null; serverMain: number | null; database: number | null } {
  const server0 = serverPid ? processTicks(serverPid) : null;
  const main0 = serverPid ? mainThreadTicks(serverPid) : null;
  const db0 = localDatabase ? postgresTicks() : null;
  const ms = (a: number | null, b: number | null) => (a !== null && b !== null ? ((b - a) * 1000) / TICKS : null);
  return () => ({
    server: ms(server0, serverPid ? processTicks(serverPid) : null),
    serverMain: ms(main0, serverPid ? mainThreadTicks(serverPid) : null),
    database: ms(db0, localDatabase ? postgresTicks() : null),
  });
}

/** Whether DATABASE_URL names this machine (its PostgreSQL processes are then ours to read). */
export function isLocalDatabase(databaseUrl: string | undefined): boolean {
  if (!databaseUrl) return false;
  const host = new URL(databaseUrl).hostname;
  return host === '127.0.0.1' || host === 'localhost' || host === '::1' || host === '[::1]';
}

/** CPU milliseconds (user + system) one process has spent so far (`mainThread`: its main thread's alone), or NaN without /proc. */
export function processCpuMs(pid: number, mainThread = false): number {
  const ticks = mainThread ? mainThreadTicks(pid) : processTicks(pid);
  return ticks === null ? NaN : (ticks * 1000) / TICKS;
}

/** The kernel's share (system time) of a process's main thread so far, in milliseconds, or NaN without /proc. */
export function mainThreadSystemMs(pid: number): number {
  const times = statTimes(mainThreadStat(pid));
  return times ? (times[1] * 1000) / TICKS : NaN;
}
