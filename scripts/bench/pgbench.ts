/**
 * The database alone: pgbench sends the service's update statement (note and its event,
 * which is the audit trail's and the webhook outbox's row) from 50 clients, with no HTTP or JavaScript at all — the floor under PUT's latency on this
 * machine. Skipped when pgbench is not installed.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { percentile } from './measure.js';
import { log } from './options.js';
import type { Row } from './types.js';

/** The update statement as pgbench sends it, on one of the 10,000 seeded notes at random. */
const updateScript = (workspaceId: string) => `\\set i random(0, 9999)
with written as (update memory_notes set body = 'pgbench ' || :i, updated_at = now() where workspace_id = '${workspaceId}' and path = 'team/' || (:i % 50) || '/note-' || :i returning id, path),
event as (insert into events (workspace_id, actor, action, target_type, target_id, created_at) select '${workspaceId}', 'agent', 'memory.note.updated', 'memory_note', path, now() from written)
select * from written;
`;

/** The pgbench binary of this machine, if any. */
function findPgbench(): string | undefined {
  const versions = existsSync('/usr/lib/postgresql') ? readdirSync('/usr/lib/postgresql') : [];
  return ['/usr/bin/pgbench', ...versions.map((v) => `/usr/lib/postgresql/${v}/bin/pgbench`)].find((c) => existsSync(c));
}

/** Runs the update statement from `clients` clients for `seconds`; null when pgbench is missing. */
export async function pgbenchUpdate(
  databaseUrl: string,
  workspaceId: string,
  scenario: string,
  label: string,
  clients: number,
  seconds: number,
): Promise<Row | null> {
  const pgbench = findPgbench();
  if (!pgbench) {
    log('pgbench not found: the database-alone row is skipped');
    return null;
  }
  const dir = mkdtempSync(join(tmpdir(), 'wks-pgbench-'));
  try {
    writeFileSync(join(dir, 'update.sql'), updateScript(workspaceId));
    const args = ['-n', '-c', String(clients), '-j', '2', '-T', String(seconds), '-f', join(dir, 'update.sql')];
    const { stdout } = await promisify(execFile)(pgbench, [...args, '-l', `--log-prefix=${join(dir, 'log')}`, databaseUrl], { cwd: dir });
    const tps = Number(/tps = ([\d.]+)/.exec(stdout)?.[1] ?? 0);
    // Per-transaction log lines: client, transaction, latency in µs, …
    const latencies = readdirSync(dir)
      .filter((f) => f.startsWith('log'))
      .flatMap((f) => readFileSync(join(dir, f), 'utf8').trim().split('\n'))
      .map((line) => Number(line.split(' ')[2]) / 1000)
      .sort((a, b) => a - b);
    const at = (p: number) => percentile(latencies, p);
    const row: Row = {
      scenario,
      variant: label,
      connections: clients,
      rps: Math.round(tps),
      p50: at(0.5),
      p95: at(0.95),
      p97_5: at(0.975),
      p99: at(0.99),
      errors: 0,
    };
    log(
      `${scenario} / database alone (pgbench, ${clients} clients, ${seconds} s): ${row.rps} tps, p50 ${row.p50} ms, p95 ${row.p95} ms, p99 ${row.p99} ms`,
    );
    return row;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
