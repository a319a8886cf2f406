/**
 * Where a run's time went: CPU seconds spent by the server process and by the local PostgreSQL
 * during a run, read from /proc (Linux; null elsewhere, or when the database is on another host).
 */
import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc/<pid>/stat (USER_HZ: 100 on every Linux this runs on). */
const TICKS = 100;

/**
 * utime + stime of one process, in ticks, and with `children` the times of its exited children
 * too (a PostgreSQL backend that ends is counted in its postmaster's); null when it is gone.
 */
function processTicks(pid: number, children = false): number | null {
  try {
    // Fields after the command name (which may hold spaces) start at state: utime, stime, cutime and cstime are the 12th to 15th after it.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]) + (children ? Number(fields[13]) + Number(fields[14]) : 0);
  } catch {
    return null;
  }
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

/** CPU milliseconds the server and the database spent between `start()` and the returned stop function. */
export function cpuMeter(serverPid: number | undefined, localDatabase: boolean): () => { server: number | null; database: number | null } {
  const server0 = serverPid ? processTicks(serverPid) : null;
  const db0 = localDatabase ? postgresTicks() : null;
  return () => {
    const server1 = serverPid ? processTicks(serverPid) : null;
    const db1 = localDatabase ? postgresTicks() : null;
    return {
      server: server0 !== null && server1 !== null ? ((server1 - server0) * 1000) / TICKS : null,
      database: db0 !== null && db1 !== null ? ((db1 - db0) * 1000) / TICKS : null,
    };
  };
}

/** Whether DATABASE_URL names this machine (its PostgreSQL processes are then ours to read). */
export function isLocalDatabase(databaseUrl: string | undefined): boolean {
  if (!databaseUrl) return false;
  const host = new URL(databaseUrl).hostname;
  return host === '127.0.0.1' || host === 'localhost' || host === '::1' || host === '[::1]';
}
