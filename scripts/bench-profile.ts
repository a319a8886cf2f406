/**
 * `npm run bench:profile`: where the service's own CPU goes per note GET and PUT, by stage.
 *
 * Starts the service on DATABASE_URL (PostgreSQL) with the V8 inspector on, seeds the bench's
 * 10,000 notes, and for each load (the bench's scattered GETs and 1–4 KB
 * PUTs at 50 connections) warms up, then records a CPU profile of the service for PROFILE_SECONDS
 * (default 10; PROFILE_CONNECTIONS connections, default 10) through the inspector only while the
 * load runs. Every sample is given to the stage of the code it ran in (its leaf frame, or the
 * nearest caller with a source file for V8's built-ins); the table prints each stage's share of
 * the samples and that share of the main thread's CPU per request read from /proc over the same
 * window, beside the whole process's (worker threads included).
 * `--json=<file>` also writes the table as JSON; `--keep=<dir>` keeps the .cpuprofile files.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import autocannon from 'autocannon';
import WebSocket from 'ws';
import { freePort, spawnService, type ServiceProcess } from '../test/support/processes.js';
import { mainThreadSystemMs, processCpuMs } from './bench/cpu.js';
import { noteUpdates, SERVICE_NOTE_ROUTE, spreadGets } from './bench/loads.js';
import { log, OPTIONS } from './bench/options.js';
import { seedNotes } from './bench/seeding.js';
import { KERNEL, STAGES, stageOf, type Stage } from './bench/stages.js';
import { Tenant } from './bench/tenant.js';
import type { AutocannonLoad, Bench } from './bench/types.js';

const SECONDS = Number(process.env.PROFILE_SECONDS ?? 10);
/** V8's sampling interval: finer costs the profiled process more (its figures rise with the profiler on). */
const SAMPLING_US = Number(process.env.PROFILE_SAMPLING_US ?? 500);
/** Connections of the load: few enough that the profiled thread seldom waits for a core (its samples would stand still meanwhile). */
const CONNECTIONS = Number(process.env.PROFILE_CONNECTIONS ?? 10);
const flag = (name: string) =>
  process.argv
    .find((a) => a.startsWith(`--${name}=`))
    ?.split('=')
    .slice(1)
    .join('=');

/** A V8 CPU profile as the inspector returns it. */
interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string }; children?: number[] }[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** A minimal Chrome DevTools Protocol client over the inspector's WebSocket. */
class Inspector {
  private next = 1;
  private readonly pending = new Map<number, (result: unknown) => void>();
  private constructor(private readonly socket: WebSocket) {
    socket.on('message', (data: Buffer) => {
      const message = JSON.parse(data.toString()) as { id?: number; result?: unknown };
      if (message.id) this.pending.get(message.id)?.(message.result);
    });
  }

  static async connect(url: string): Promise<Inspector> {
    const socket = new WebSocket(url);
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    return new Inspector(socket);
  }

  send<T>(method: string, params: Record<string, unknown> = {}): Promise<T> {
    const id = this.next++;
    return new Promise((resolve) => {
      this.pending.set(id, resolve as (result: unknown) => void);
      this.socket.send(JSON.stringify({ id, method, params }));
    });
  }

  close(): void {
    this.socket.close();
  }
}

/** Sample time (µs) by stage: a sample belongs to its leaf frame's stage, or its nearest caller's that has one. */
function samplesByStage(profile: CpuProfile): Map<Stage, number> {
  const parent = new Map<number, number>();
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const stageOfNode = new Map<number, Stage | null>();
  const resolve = (id: number): Stage | null => {
    if (stageOfNode.has(id)) return stageOfNode.get(id)!;
    const frame = byId.get(id)!.callFrame;
    let stage = stageOf(frame.url, frame.functionName);
    if (stage === undefined) stage = parent.has(id) ? resolve(parent.get(id)!) : 'other';
    stageOfNode.set(id, stage);
    return stage;
  };
  const totals = new Map<Stage, number>();
  profile.samples.forEach((id, i) => {
    const stage = resolve(id);
    if (stage) totals.set(stage, (totals.get(stage) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  return totals;
}

interface Measured {
  load: string;
  requests: number;
  rps: number;
  p99: number;
  /** CPU per request (µs) from /proc: the whole process's and its main thread's; and the profile's busy samples per request by stage (µs). */
  processUs: number;
  mainUs: number;
  /** Of mainUs, the kernel's (system time: the sockets' sends and receives, the loopback's delivery to the receiver included). */
  kernelUs: number;
  stages: Record<Stage, number>;
}

async function profiled(service: ServiceProcess, inspector: Inspector, label: string, load: AutocannonLoad): Promise<Measured> {
  const run = (seconds: number) => autocannon({ ...load.options, connections: CONNECTIONS, duration: seconds });
  await run(3);
  const pid = service.child.pid!;
  await inspector.send('Profiler.setSamplingInterval', { interval: SAMPLING_US });
  await inspector.send('Profiler.start');
  const cpu0 = [processCpuMs(pid), processCpuMs(pid, true), mainThreadSystemMs(pid)];
  const result = await run(SECONDS);
  const cpu1 = [processCpuMs(pid), processCpuMs(pid, true), mainThreadSystemMs(pid)];
  const { profile } = await inspector.send<{ profile: CpuProfile }>('Profiler.stop');
  const keep = flag('keep');
  if (keep) {
    mkdirSync(keep, { recursive: true });
    writeFileSync(`${keep}/${label}.cpuprofile`, JSON.stringify(profile));
  }
  const requests = result.requests.total;
  const totals = samplesByStage(profile);
  const stages = Object.fromEntries(STAGES.map((s) => [s, Math.round((totals.get(s) ?? 0) / requests)])) as Record<Stage, number>;
  const non2xx = result.non2xx + result.errors;
  if (non2xx) log(`${label}: ${non2xx} requests failed`);
  return {
    load: label,
    requests,
    rps: Math.round(result.requests.average),
    p99: result.latency.p99,
    processUs: Math.round(((cpu1[0] - cpu0[0]) * 1000) / requests),
    mainUs: Math.round(((cpu1[1] - cpu0[1]) * 1000) / requests),
    kernelUs: Math.round(((cpu1[2] - cpu0[2]) * 1000) / requests),
    stages,
  };
}

/**
 * The table: each stage's share of the busy samples outside the kernel, and that share of the main
 * thread's CPU per request outside the kernel (/proc: user time); the kernel's (system time) on a
 * line of its own. Samples are taken on the wall clock, so a thread waiting for a core keeps its
 * samples where it stood, mostly in the socket's system call that woke the receiver: those are
 * left out, and the shares, not sampled microseconds, are what compare.
 */
function table(rows: Measured[]): string {
  const user = STAGES.filter((s) => s !== KERNEL);
  const sampled = rows.map((r) => user.reduce((t, s) => t + r.stages[s], 0));
  // The samples outside the kernel, scaled to the main thread's CPU outside the kernel.
  const share = (r: Measured, i: number, s: Stage) => (sampled[i] ? r.stages[s] / sampled[i] : 0);
  const cell = (r: Measured, i: number, s: Stage) =>
    `${(share(r, i, s) * 100).toFixed(1)} %, ${Math.round(share(r, i, s) * (r.mainUs - r.kernelUs))}`;
  const head = `| stage | ${rows.map((r) => `${r.load}: share of the samples outside the kernel, µs of CPU per request`).join(' | ')} |`;
  const rule = `|---|${rows.map(() => '---:').join('|')}|`;
  const lines = user
    .filter((s) => rows.some((r) => r.stages[s] > 0))
    .map((s) => `| ${s} | ${rows.map((r, i) => cell(r, i, s)).join(' | ')} |`);
  const kernel = `| ${KERNEL}: system time (/proc) | ${rows.map((r) => `—, ${r.kernelUs}`).join(' | ')} |`;
  const proc = `| **main thread CPU (/proc)** | ${rows.map((r) => r.mainUs).join(' | ')} |\n| **process CPU, all threads (/proc)** | ${rows.map((r) => r.processUs).join(' | ')} |`;
  const rate = `| req/s, p99 ms (profiler on) | ${rows.map((r) => `${r.rps}, ${r.p99}`).join(' | ')} |`;
  return [head, rule, ...lines, kernel, proc, rate].join('\n');
}

async function main(): Promise<void> {
  if (!OPTIONS.databaseUrl) throw new Error('bench:profile measures the service on PostgreSQL: set DATABASE_URL');
  const port = await freePort();
  const service = await spawnService(
    {
      DATABASE_URL: OPTIONS.databaseUrl,
      ADMIN_TOKEN: OPTIONS.adminToken,
      RATE_LIMIT_MAX: '100000000',
      WEBHOOK_DISPATCHER: 'on',
      EMBEDDINGS: 'local',
      OUTBOUND_ALLOW_LOOPBACK: 'false',
    },
    [`--inspect=127.0.0.1:${port}`],
  );
  try {
    const tenant = await Tenant.create(service.url, OPTIONS.adminToken, 'Bench profile', 'enterprise');
    const { id, auth } = await tenant.workspace('Profile');
    log(`service at ${service.url}: seeding its notes`);
    await seedNotes(service.url, auth);
    const [target] = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as { webSocketDebuggerUrl: string }[];
    const inspector = await Inspector.connect(target.webSocketDebuggerUrl);
    await inspector.send('Profiler.enable');
    const b = { base: service.url, service: service.url, auth, workspaceId: id } as Bench;
    const rows: Measured[] = [];
    rows.push(await profiled(service, inspector, 'GET note', spreadGets(b, SERVICE_NOTE_ROUTE, auth)));
    rows.push(await profiled(service, inspector, 'PUT note', noteUpdates(`${service.url}${SERVICE_NOTE_ROUTE}`, auth)));
    inspector.close();
    const printed = table(rows);
    console.log(`\nService CPU per request by stage, ${SECONDS} s at ${CONNECTIONS} connections each, 10,000 notes:\n\n${printed}\n`);
    const json = flag('json');
    if (json) writeFileSync(json, JSON.stringify({ seconds: SECONDS, connections: CONNECTIONS, rows }, null, 2));
  } finally {
    await service.stop();
  }
}

void main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
