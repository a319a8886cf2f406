import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { queryOnce } from './ownDatabase.js';

/** The PostgreSQL server binaries (initdb, pg_ctl, pg_basebackup), if installed. */
export const PG_BIN = [
  '/usr/lib/postgresql/18/bin',
  '/usr/lib/postgresql/17/bin',
  '/usr/lib/postgresql/16/bin',
  '/usr/lib/postgresql/15/bin',
].find((d) => existsSync(join(d, 'pg_basebackup')));

/** A private primary and a streaming replica made from it with pg_basebackup, each on its own port. */
export interface ReplicaPair {
  primaryUrl: string;
  replicaUrl: string;
  /** Runs one statement on the replica (e.g. `select pg_wal_replay_pause()`). */
  onReplica(statement: string): Promise<void>;
  stop(): void;
}

/**
 * Starts a primary (initdb into a temporary directory) and a replica cloned from it by
 * pg_basebackup (-R: it streams from the primary), and waits until the replica streams.
 */
export async function startReplicaPair(): Promise<ReplicaPair> {
  const bin = PG_BIN!;
  const asRoot = process.getuid?.() === 0;
  const run = (cmd: string, args: string[]) =>
    execFileSync(asRoot ? 'runuser' : join(bin, cmd), asRoot ? ['-u', 'postgres', '--', join(bin, cmd), ...args] : args, {
      stdio: 'pipe',
      timeout: 120_000,
    });
  const dir = mkdtempSync(join(tmpdir(), 'wks-replica-'));
  chmodSync(dir, 0o777);
  const base = 20_000 + Math.floor(Math.random() * 20_000);
  const ports = { primary: base, replica: base + 1 };
  const data = { primary: join(dir, 'primary'), replica: join(dir, 'replica') };
  const start = (which: 'primary' | 'replica') =>
    run('pg_ctl', [
      '-D',
      data[which],
      '-o',
      // pg_stat_statements: a test counts the statements each server really ran.
      `-p ${ports[which]} -k ${dir} -c listen_addresses=127.0.0.1 -c shared_preload_libraries=pg_stat_statements`,
      '-l',
      join(dir, `${which}.log`),
      '-w',
      'start',
    ]);
  const stop = (which: 'primary' | 'replica') => {
    try {
      run('pg_ctl', ['-D', data[which], '-m', 'immediate', '-w', 'stop']);
    } catch {
      // not running
    }
  };
  run('initdb', ['-D', data.primary, '-U', 'postgres', '--auth=trust', '-E', 'UTF8']);
  start('primary');
  run('pg_basebackup', ['-h', '127.0.0.1', '-p', String(ports.primary), '-U', 'postgres', '-D', data.replica, '-R', '-X', 'stream']);
  start('replica');
  const replicaUrl = `postgres://postgres@127.0.0.1:${ports.replica}/postgres`;
  const onReplica = async (statement: string) => void (await queryOnce(replicaUrl, statement));
  // Streaming: the primary lists the replica's WAL receiver.
  const primaryUrl = `postgres://postgres@127.0.0.1:${ports.primary}/postgres`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    const [{ n }] = await queryOnce<{ n: number }>(
      primaryUrl,
      `select count(*)::int as n from pg_stat_replication where state = 'streaming'`,
    );
    if (n > 0) break;
    if (Date.now() > deadline) throw new Error('the replica did not start streaming within 30 s');
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    primaryUrl,
    replicaUrl,
    onReplica,
    stop() {
      stop('replica');
      stop('primary');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
