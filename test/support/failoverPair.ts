import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { queryOnce } from './ownDatabase.js';
import { freePort } from './processes.js';
import { PG_BIN } from './replica.js';

export { PG_BIN };

/** Which server of the pair: `a` starts as the primary, `b` as its synchronous standby. */
export type Node = 'a' | 'b';

/** A private primary and a synchronous standby cloned from it, for failover tests. */
export interface FailoverPair {
  ports: Record<Node, number>;
  /** The URL of one server. */
  url(node: Node): string;
  /** libpq's multi-host URL of both, `a` first. */
  bothUrl(attrs?: string): string;
  /** `pg_ctl stop -m immediate`: a crash, no shutdown checkpoint, connections cut. */
  crash(node: Node): void;
  /** `pg_ctl promote` (waits until the standby takes writes). */
  promote(node: Node): void;
  /** The last lines of a server's log, for a failure message. */
  logTail(node: Node): string;
  stop(): void;
}

/**
 * Starts a primary (initdb into a temporary directory) and a standby cloned from it by
 * pg_basebackup, streaming and synchronous (`synchronous_standby_names = '*'`: a commit the primary
 * acknowledges is on the standby too), each on a free port; resolves once the standby is in sync.
 */
export async function startFailoverPair(): Promise<FailoverPair> {
  const bin = PG_BIN!;
  const asRoot = process.getuid?.() === 0;
  const run = (cmd: string, args: string[]) =>
    execFileSync(asRoot ? 'runuser' : join(bin, cmd), asRoot ? ['-u', 'postgres', '--', join(bin, cmd), ...args] : args, {
      stdio: 'pipe',
      timeout: 60_000,
    });
  const dir = mkdtempSync(join(tmpdir(), 'wks-failover-'));
  chmodSync(dir, 0o777);
  const ports: Record<Node, number> = { a: await freePort(), b: await freePort() };
  const data = { a: join(dir, 'a'), b: join(dir, 'b') };
  const url = (node: Node) => `postgres://postgres@127.0.0.1:${ports[node]}/postgres`;
  const start = (node: Node) =>
    run('pg_ctl', [
      '-D',
      data[node],
      '-o',
      `-p ${ports[node]} -k ${dir} -c listen_addresses=127.0.0.1`,
      '-l',
      join(dir, `${node}.log`),
      '-w',
      'start',
    ]);
  const stop = (node: Node) => {
    try {
      run('pg_ctl', ['-D', data[node], '-m', 'immediate', '-w', 'stop']);
    } catch {
      // not running
    }
  };
  run('initdb', ['-D', data.a, '-U', 'postgres', '--auth=trust', '-E', 'UTF8']);
  start('a');
  run('pg_basebackup', [
    '-h',
    '127.0.0.1',
    '-p',
    String(ports.a),
    '-U',
    'postgres',
    '-D',
    data.b,
    '-R',
    '-X',
    'stream',
    '--checkpoint=fast',
  ]);
  start('b');
  await makeStandbySynchronous(url('a'));
  return {
    ports,
    url,
    bothUrl: (attrs = 'read-write') =>
      `postgres://postgres@127.0.0.1:${ports.a},127.0.0.1:${ports.b}/postgres?target_session_attrs=${attrs}`,
    crash: stop,
    promote: (node) => void run('pg_ctl', ['-D', data[node], '-w', 'promote']),
    logTail: (node) => {
      try {
        return readFileSync(join(dir, `${node}.log`), 'utf8')
          .split('\n')
          .slice(-15)
          .join('\n');
      } catch {
        return '(no log)';
      }
    },
    stop() {
      stop('b');
      stop('a');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Makes the primary at `primaryUrl` wait for its standby at every commit, once the standby streams in sync. */
async function makeStandbySynchronous(primaryUrl: string): Promise<void> {
  await queryOnce(primaryUrl, `alter system set synchronous_standby_names = '*'`);
  await queryOnce(primaryUrl, 'select pg_reload_conf()');
  const deadline = Date.now() + 30_000;
  for (;;) {
    const [{ n }] = await queryOnce<{ n: number }>(
      primaryUrl,
      `select count(*)::int as n from pg_stat_replication where sync_state = 'sync'`,
    );
    if (n > 0) return;
    if (Date.now() > deadline) throw new Error('the standby did not become synchronous within 30 s');
    await new Promise((r) => setTimeout(r, 100));
  }
}
