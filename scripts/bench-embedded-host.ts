/**
 * Thread or process for the embedded database: the same PGlite and Postgres-protocol socket started
 * in a worker thread (what the service does, src/db/embedded.ts) and in a child process, each under
 * the same load from this process's pg pool, side by side in one run:
 *   npm run bench:embedded-host [-- --seconds=10]
 * Prints start time, note-like GET and PUT throughput and latency, this (the request) thread's worst
 * event-loop delay, and the memory both take.
 */
import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import pg from 'pg';
import { startEmbedded } from '../src/db/embedded.js';

const SECONDS = Number(/--seconds=(\d+)/.exec(process.argv.join(' '))?.[1] ?? 10);
const NOTES = 2000;
const CLIENTS = 8;

interface Host {
  host: string;
  /** Resident memory the database added: this process's growth, plus the child's own RSS for a process. */
  rssMb(): number;
  close(): Promise<void>;
}

const rssMb = (pid = process.pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

async function thread(dataDir: string): Promise<Host> {
  const before = rssMb();
  const db = await startEmbedded({ dataDir });
  return { host: db.connection.host!, rssMb: () => rssMb() - before, close: () => db.close() };
}

async function child(dataDir: string): Promise<Host> {
  const before = rssMb();
  const socketDir = await mkdtemp(join(tmpdir(), 'wks-host-'));
  const proc = fork(new URL('./bench/embeddedProcess.mjs', import.meta.url), [dataDir, join(socketDir, '.s.PGSQL.5432')], {
    stdio: 'inherit',
  });
  await new Promise<void>((resolve, reject) => {
    proc.once('message', () => resolve());
    proc.once('exit', (code) => reject(new Error(`the database process exited with ${code}`)));
  });
  return {
    host: socketDir,
    rssMb: () => rssMb() - before + rssMb(proc.pid),
    close: async () => {
      const exited = new Promise((resolve) => proc.once('exit', resolve));
      proc.send('close');
      await exited;
      await rm(socketDir, { recursive: true, force: true });
    },
  };
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? NaN;

async function measure(kind: 'thread' | 'process') {
  const dataDir = await mkdtemp(join(tmpdir(), `wks-${kind}-`));
  const t0 = performance.now();
  const host = await (kind === 'thread' ? thread : child)(dataDir);
  const startMs = performance.now() - t0;
  const pool = new pg.Pool({ host: host.host, port: 5432, user: 'postgres', password: 'postgres', database: 'postgres', max: CLIENTS });
  await pool.query(`create table notes (id int primary key, body text not null, accessed_at timestamptz,
    search tsvector generated always as (to_tsvector('english', body)) stored)`);
  await pool.query('create index on notes using gin (search)');
  const words = 'agent workspace memory note search index revision upload image section article'.split(' ');
  const body = (i: number) => Array.from({ length: 300 }, (_, j) => words[(i * 7 + j) % words.length]).join(' ');
  for (let i = 0; i < NOTES; i += 200)
    await pool.query(`insert into notes (id, body) select g, $1 || g from generate_series($2::int, $3::int) g`, [
      body(i),
      i,
      Math.min(NOTES, i + 200) - 1,
    ]);
  const loop = monitorEventLoopDelay({ resolution: 5 });
  const results: Record<'get' | 'put', number[]> = { get: [], put: [] };
  const until = performance.now() + SECONDS * 1000;
  loop.enable();
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, c) => {
      const op = c % 2 === 0 ? 'get' : 'put';
      for (let n = 0; performance.now() < until; n++) {
        const id = (c * 997 + n * 31) % NOTES;
        const t = performance.now();
        if (op === 'get') await pool.query('update notes set accessed_at = now() where id = $1 returning body', [id]);
        else await pool.query('update notes set body = $2 where id = $1', [id, `${body(n)} ${n}`]);
        results[op].push(performance.now() - t);
      }
    }),
  );
  loop.disable();
  const memory = host.rssMb();
  await pool.end();
  const t1 = performance.now();
  await host.close();
  const closeMs = performance.now() - t1;
  await rm(dataDir, { recursive: true, force: true });
  const line = (op: 'get' | 'put') => {
    const sorted = results[op].sort((a, b) => a - b);
    return `${(sorted.length / SECONDS).toFixed(0)}/s p50 ${pct(sorted, 0.5).toFixed(1)} p99 ${pct(sorted, 0.99).toFixed(1)} ms`;
  };
  return {
    kind,
    start: `${startMs.toFixed(0)} ms`,
    get: line('get'),
    put: line('put'),
    loopMax: `${(loop.max / 1e6).toFixed(1)} ms`,
    memory: `${memory.toFixed(0)} MB`,
    close: `${closeMs.toFixed(0)} ms`,
    ops: results.get.length + results.put.length,
  };
}

const rows = [];
// Each twice, in mirrored order, so neither gets the warmer machine or the fuller heap.
for (const kind of ['process', 'thread', 'thread', 'process'] as const) {
  const row = await measure(kind);
  console.log(JSON.stringify(row));
  rows.push(row);
}
console.log('\n| host | start | GET-like | PUT-like | request thread event-loop max | memory added | close |');
console.log('|---|---|---|---|---|---|---|');
for (const r of rows) console.log(`| ${r.kind} | ${r.start} | ${r.get} | ${r.put} | ${r.loopMax} | ${r.memory} | ${r.close} |`);
