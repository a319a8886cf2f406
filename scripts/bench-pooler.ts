/**
 * Service processes behind PgBouncer in transaction mode: req/s of 1, 2 and 4 processes for the
 * memory-note GET/PUT mix (4 GETs to 1 PUT), all through one pooler in front of one PostgreSQL,
 * plus a PUT-only run of one process (the write rate behind the "writes/s per core" estimate in
 * docs/operations.md).
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npm run bench:pooler [-- --seconds=10 --connections=20]
 *
 * DATABASE_URL names the PostgreSQL server (a direct connection with the right to create
 * databases); the script creates a database of its own there, starts Debian's `pgbouncer`
 * (pool_mode = transaction) on a free port in front of it, and points every service process's
 * DATABASE_URL at the pooler and DATABASE_DIRECT_URL at the server. The load (autocannon) is split
 * evenly over the processes, one client per process with `connections / processes` connections.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';
import { spawn, type ChildProcess } from 'node:child_process';
import { noteBody } from './bench/corpus.js';
import { Tenant } from './bench/tenant.js';
import { freePort } from '../test/support/processes.js';

const arg = (name: string, fallback: number) => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
const SECONDS = arg('seconds', 10);
const CONNECTIONS = arg('connections', 20);
const NOTES = 1000;
const NOTE_API = '/api/v1/workspaces/-/memory/note';

async function onServer(url: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query(statement);
  await client.end();
}

/** Starts PgBouncer (transaction pooling) in front of `server`; returns its port and a stop. */
async function startPooler(server: URL): Promise<{ port: number; stop(): void }> {
  const dir = mkdtempSync(join(tmpdir(), 'wks-pgbouncer-'));
  const port = await freePort();
  writeFileSync(join(dir, 'users.txt'), `"${server.username || 'postgres'}" ""\n`);
  writeFileSync(
    join(dir, 'pgbouncer.ini'),
    `[databases]\n* = host=${server.hostname} port=${server.port || 5432}\n[pgbouncer]\nlisten_addr = 127.0.0.1\nlisten_port = ${port}\n` +
      `unix_socket_dir =\nauth_type = trust\nauth_file = ${join(dir, 'users.txt')}\npool_mode = transaction\nmax_client_conn = 1000\n` +
      `default_pool_size = 20\nlogfile = ${join(dir, 'log')}\npidfile = ${join(dir, 'pid')}\n`,
  );
  const asRoot = process.getuid?.() === 0;
  if (asRoot)
    for (const f of ['', 'users.txt', 'pgbouncer.ini']) chownSync(join(dir, f), Number(execFileSync('id', ['-u', 'postgres'])), 0);
  execFileSync('pgbouncer', asRoot ? ['-d', '-u', 'postgres', join(dir, 'pgbouncer.ini')] : ['-d', join(dir, 'pgbouncer.ini')], {
    env: { ...process.env, PATH: `${process.env.PATH}:/usr/sbin` },
  });
  await new Promise((r) => setTimeout(r, 300));
  return {
    port,
    stop() {
      try {
        process.kill(Number(readFileSync(join(dir, 'pid'), 'utf8')), 'SIGTERM');
      } catch {
        // already gone
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

interface ServiceProcess {
  url: string;
  child: ChildProcess;
}

/**
 * Starts `src/main.ts` with `env` on a free port and resolves once `/healthz` answers. Starting
 * (compiling the sources on the fly) may take minutes on a busy machine, hence the long wait.
 */
async function startService(env: Record<string, string>): Promise<ServiceProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', '@swc-node/register/esm-register', 'src/main.ts'], {
    env: { ...process.env, PORT: String(port), WEBHOOK_DISPATCHER: 'off', EMBEDDINGS: 'off', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 300_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`service exited with ${child.exitCode}`);
    if (
      await fetch(`${url}/healthz`).then(
        (r) => r.ok,
        () => false,
      )
    )
      return { url, child };
    if (Date.now() > deadline) throw new Error('service did not start within 5 minutes');
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function stopService(p: ServiceProcess): Promise<void> {
  if (p.child.exitCode !== null) return;
  const exited = new Promise((r) => p.child.once('exit', r));
  p.child.kill('SIGTERM');
  await exited;
}

/** One load over every process: `putShare` of the requests are PUTs of a seeded note, the rest GETs of one. */
async function load(processes: ServiceProcess[], auth: Record<string, string>, putShare: number) {
  const per = Math.max(1, Math.round(CONNECTIONS / processes.length));
  const results = await Promise.all(
    processes.map((p, k) => {
      let n = k * 100_000;
      return autocannon({
        url: `${p.url}${NOTE_API}`,
        connections: per,
        duration: SECONDS,
        requests: [
          {
            setupRequest: (req) => {
              const i = n++;
              const path = `bench/note-${(i * 7919) % NOTES}`;
              if ((i % 100) / 100 < putShare)
                return {
                  ...req,
                  method: 'PUT',
                  path: NOTE_API,
                  headers: { ...auth, 'content-type': 'application/json' },
                  body: JSON.stringify({ path, body: `${noteBody(i % 64)}\n${i}`, kind: 'note', links: [], tags: [] }),
                };
              return { ...req, method: 'GET', path: `${NOTE_API}?path=${encodeURIComponent(path)}`, headers: auth };
            },
          },
        ],
      });
    }),
  );
  const requests = results.reduce((s, r) => s + r.requests.total, 0);
  const ok = results.reduce((s, r) => s + r['2xx'], 0);
  const p50 = Math.max(...results.map((r) => r.latency.p50));
  const p99 = Math.max(...results.map((r) => r.latency.p99));
  return { rps: Math.round(ok / SECONDS), requests, errors: requests - ok, p50, p99 };
}

async function main(): Promise<void> {
  const serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) throw new Error('DATABASE_URL (a PostgreSQL server, direct) is required');
  const name = `wks_bench_pooler_${randomBytes(3).toString('hex')}`;
  await onServer(serverUrl, `create database ${name}`);
  const direct = new URL(serverUrl);
  direct.pathname = `/${name}`;
  const pooler = await startPooler(direct);
  const pooled = new URL(direct);
  pooled.hostname = '127.0.0.1';
  pooled.port = String(pooler.port);
  const admin = `adm_bench_${randomBytes(16).toString('hex')}`;
  const env = {
    DATABASE_URL: pooled.toString(),
    DATABASE_DIRECT_URL: direct.toString(),
    ADMIN_TOKEN: admin,
    RATE_LIMIT_MAX: '100000000',
    LOG_LEVEL: 'warn',
  };
  const rows: string[] = [];
  const running: ServiceProcess[] = [];
  try {
    // All four start before any load (a start under load on a busy machine may take long); idle ones cost little.
    for (let i = 0; i < 4; i++) running.push(await startService(env));
    const tenant = await Tenant.create(running[0].url, admin, 'bench', 'enterprise');
    const { auth } = await tenant.workspace('pooler');
    for (let i = 0; i < NOTES; i += 50)
      await Promise.all(
        Array.from({ length: 50 }, (_, k) =>
          fetch(`${running[0].url}${NOTE_API}`, {
            method: 'PUT',
            headers: { ...auth, 'content-type': 'application/json' },
            body: JSON.stringify({ path: `bench/note-${i + k}`, body: noteBody(i + k), kind: 'note', links: [], tags: [] }),
          }),
        ),
      );
    const puts = await load(running.slice(0, 1), auth, 1);
    rows.push(`| 1 | PUT only | ${puts.rps} | ${puts.p50} | ${puts.p99} | ${puts.errors} |`);
    for (const count of [1, 2, 4]) {
      const serving = running.slice(0, count);
      await load(serving, auth, 0.2); // warm-up of the processes new to the load, not counted
      const mix = await load(serving, auth, 0.2);
      rows.push(`| ${count} | 4 GET : 1 PUT | ${mix.rps} | ${mix.p50} | ${mix.p99} | ${mix.errors} |`);
      console.error(rows[rows.length - 1]);
    }
  } finally {
    await Promise.all(running.map(stopService));
    pooler.stop();
    await onServer(serverUrl, `drop database if exists ${name} with (force)`).catch(() => undefined);
  }
  console.log(`${CONNECTIONS} connections in all, ${SECONDS} s per row, through PgBouncer (transaction pooling)\n`);
  console.log('| processes | load | req/s (2xx) | p50 ms | p99 ms | non-2xx |\n| --- | --- | --- | --- | --- | --- |');
  console.log(rows.join('\n'));
}

await main().catch((error) => {
  console.error(error);
  process.exit(1);
});
