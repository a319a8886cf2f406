/**
 * A pg_auto_failover formation on one machine, for the failover test and the bench: a monitor, a
 * primary and a secondary (Debian's postgresql-15-auto-failover and pg-auto-failover-cli), each
 * `pg_autoctl create … --run` in a process group of its own, in a temporary directory with its own
 * XDG directories. pg_autoctl refuses to run as root: as root, it runs as `postgres` (runuser)
 * with the directory made theirs.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { queryOnce } from './ownDatabase.js';
import { freePort } from './processes.js';

/** pg_autoctl and the PostgreSQL binaries its extension was built for (the version that has pgautofailover), if installed. */
export const AUTOCTL = existsSync('/usr/bin/pg_autoctl') ? '/usr/bin/pg_autoctl' : undefined;
export const AUTOCTL_PG_BIN = ['18', '17', '16', '15']
  .filter((v) => existsSync(`/usr/share/postgresql/${v}/extension/pgautofailover.control`))
  .map((v) => `/usr/lib/postgresql/${v}/bin`)
  .find((d) => existsSync(join(d, 'pg_ctl')));

const asRoot = process.getuid?.() === 0;

/** One node of the formation: its port and data directory, and the process group of its pg_autoctl. */
interface AutoNode {
  name: string;
  port: number;
  pgdata: string;
  process: ChildProcess;
}

/** The running formation. */
export interface AutoFormation {
  /** What `pg_autoctl show uri --formation default` prints: libpq's multi-host URL of both nodes. */
  uri: string;
  /** The URL of one data node's database, for checks beside the service. */
  nodeUrl(which: 'primary' | 'secondary'): string;
  /** Kills the primary's node (pg_autoctl and PostgreSQL, SIGKILL to its process group): a machine lost. */
  killPrimary(): void;
  /**
   * Resolves when the former secondary takes writes: reported `wait_primary` (a primary without a
   * standby: its old primary is gone) or `primary`; the time it happened (ms since the epoch).
   */
  waitForPromotion(ms: number): Promise<number>;
  /** The last lines of every node's log, for a failure message. */
  logs(): string;
  stop(): Promise<void>;
}

/**
 * pg_auto_failover's timings (the monitor's settings), shortened for a test: a primary is declared
 * unhealthy after 6 s instead of 20, and one that cannot be reached to demote it is given up after
 * 10 s instead of 30 (health checked every 2 s instead of 5).
 */
export const QUICK_DETECTION = {
  'pgautofailover.health_check_period': 2000,
  'pgautofailover.node_considered_unhealthy_timeout': 6000,
  'pgautofailover.primary_demote_timeout': 10000,
};

/**
 * Starts the monitor (with `settings` of its own, if any: see QUICK_DETECTION), then the primary,
 * then the secondary; resolves when they are primary and secondary.
 */
export async function startAutoFormation(settings: Record<string, number> = {}): Promise<AutoFormation> {
  const dir = mkdtempSync(join(tmpdir(), 'wks-autofailover-'));
  if (asRoot) chownSync(dir, uidOf('postgres'), gidOf('postgres'));
  const env = autoctlEnv(dir);
  const run = (args: string[]) => execFileSync(...command(args, env), { stdio: 'pipe', timeout: 30_000, env }).toString();
  const nodes: AutoNode[] = [];
  const start = async (name: string, args: string[]): Promise<AutoNode> => {
    const port = await freePort();
    const pgdata = join(dir, name);
    const log = openSync(join(dir, `${name}.log`), 'a');
    const [cmd, cmdArgs] = command([...args, '--pgdata', pgdata, '--pgport', String(port), '--hostname', '127.0.0.1', '--run'], env);
    const process = spawn(cmd, cmdArgs, { env, detached: true, stdio: ['ignore', log, log] });
    const node = { name, port, pgdata, process };
    nodes.push(node);
    return node;
  };
  const monitor = await start('monitor', ['create', 'monitor', '--auth', 'trust', '--no-ssl']);
  const monitorUrl = `postgres://autoctl_node@127.0.0.1:${monitor.port}/pg_auto_failover`;
  const states = () => nodeStates(monitorUrl);
  const formation: AutoFormation = {
    uri: '',
    nodeUrl: () => '',
    killPrimary: () => undefined,
    waitForPromotion: () => Promise.resolve(0),
    logs: () => nodes.map((n) => `--- ${n.name}\n${tail(join(dir, `${n.name}.log`))}`).join('\n'),
    stop: () => stopAll(nodes, dir),
  };
  try {
    await waitFor(async () => (await states().catch(() => null)) !== null, 'the monitor to answer', 60_000);
    const monitorAdmin = `postgres://postgres@127.0.0.1:${monitor.port}/pg_auto_failover`;
    for (const [name, value] of Object.entries(settings)) await queryOnce(monitorAdmin, `alter system set ${name} = ${value}`);
    if (Object.keys(settings).length) await queryOnce(monitorAdmin, 'select pg_reload_conf()');
    const data = ['create', 'postgres', '--auth', 'trust', '--no-ssl', '--monitor', `${monitorUrl}?sslmode=prefer`, '--dbname', 'wks'];
    const first = await start('node1', data);
    await waitFor(async () => (await states()).some((s) => s.port === first.port && s.reported === 'single'), 'the first node', 60_000);
    const second = await start('node2', data);
    // pg_basebackup waits for a spread checkpoint on the primary (minutes when idle): ask for an immediate one meanwhile.
    const nodeUrl = (n: AutoNode) => `postgres://postgres@127.0.0.1:${n.port}/wks`;
    await waitFor(
      async () => {
        await queryOnce(nodeUrl(first), 'checkpoint').catch(() => undefined);
        const now = await states();
        return (
          now.some((s) => s.port === first.port && s.reported === 'primary') &&
          now.some((s) => s.port === second.port && s.reported === 'secondary')
        );
      },
      'a primary and a secondary',
      90_000,
      1000,
    );
    Object.assign(formation, {
      uri: run(['show', 'uri', '--formation', 'default', '--pgdata', monitor.pgdata]).trim(),
      nodeUrl: (which: 'primary' | 'secondary') => nodeUrl(which === 'primary' ? first : second),
      killPrimary: () => killGroup(first.process),
      waitForPromotion: async (ms: number) => {
        const writable = (state: string) => state === 'wait_primary' || state === 'primary';
        await waitFor(async () => (await states()).some((s) => s.port === second.port && writable(s.reported)), 'the promotion', ms, 100);
        return Date.now();
      },
    });
    return formation;
  } catch (error) {
    const logs = formation.logs();
    await formation.stop();
    throw new Error(`${(error as Error).message}\n${logs}`, { cause: error });
  }
}

/** Every data node as the monitor sees it: its port and the state it reported. */
async function nodeStates(monitorUrl: string): Promise<{ port: number; reported: string }[]> {
  const rows = await queryOnce<{ nodeport: number; reportedstate: string }>(
    monitorUrl,
    'select nodeport, reportedstate from pgautofailover.node',
  );
  return rows.map((r) => ({ port: Number(r.nodeport), reported: r.reportedstate }));
}

/** pg_autoctl's environment: PostgreSQL's binaries first on PATH, and its configuration and state under `dir`. */
function autoctlEnv(dir: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    PATH: `${AUTOCTL_PG_BIN}:${process.env.PATH}`,
    XDG_CONFIG_HOME: join(dir, 'config'),
    XDG_DATA_HOME: join(dir, 'share'),
    XDG_RUNTIME_DIR: join(dir, 'run'),
    HOME: dir,
    LANG: 'C.UTF-8',
  };
  for (const sub of ['config', 'share', 'run']) {
    mkdirSync(join(dir, sub), { recursive: true });
    if (asRoot) chownSync(join(dir, sub), uidOf('postgres'), gidOf('postgres'));
  }
  return env;
}

/** pg_autoctl with `args`, as `postgres` when this process is root (pg_autoctl refuses root). */
function command(args: string[], env: NodeJS.ProcessEnv): [string, string[]] {
  const envArgs = Object.entries(env).map(([k, v]) => `${k}=${v}`);
  return asRoot ? ['runuser', ['-u', 'postgres', '--', 'env', ...envArgs, AUTOCTL!, ...args]] : [AUTOCTL!, args];
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals = 'SIGKILL'): void {
  try {
    if (child.pid) process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

/**
 * Stops every node: SIGQUIT to each process group (pg_autoctl stops, and PostgreSQL's postmaster and
 * backends quit at once, cleaning up), SIGKILL for anything left a second later; removes the directory.
 */
async function stopAll(nodes: AutoNode[], dir: string): Promise<void> {
  for (const node of nodes) killGroup(node.process, 'SIGQUIT');
  await new Promise((r) => setTimeout(r, 1000));
  for (const node of nodes) killGroup(node.process);
  rmSync(dir, { recursive: true, force: true });
}

function tail(path: string): string {
  try {
    return readFileSync(path, 'utf8').split('\n').slice(-20).join('\n');
  } catch {
    return '(no log)';
  }
}

async function waitFor(condition: () => Promise<boolean>, what: string, ms: number, everyMs = 250): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await condition().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

const idOf = (flag: '-u' | '-g', user: string) => Number(execFileSync('id', [flag, user]).toString().trim());
const uidOf = (user: string) => idOf('-u', user);
const gidOf = (user: string) => idOf('-g', user);
