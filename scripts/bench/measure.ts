/** Measurements: autocannon variants side by side in rounds, and sequential latency loops. */
import autocannon from 'autocannon';
import type { AutocannonLoad, Row, SequentialBackground, SequentialLoad } from './types.js';
import { cpuMeter } from './cpu.js';
import { readCounters, rowsWritten, STATS_SETTLE_MS, written, writtenText, type Written } from './dbStats.js';
import { log, OPTIONS } from './options.js';

/** An autocannon variant ready to run: its printed label and options (connections included). */
export interface Loaded {
  scenario: string;
  label: string;
  connections: number;
  load: AutocannonLoad;
  /** The server process, for its CPU time. */
  pid?: number;
  /** Whether the database's processes are on this machine (their CPU time is read too). */
  localDatabase?: boolean;
}

/** One autocannon run with the CPU the server and the database spent on it, and what its background did. */
interface Measured {
  result: autocannon.Result;
  cpu: { server: number | null; serverMain: number | null; database: number | null };
  background?: string;
  /** What the run wrote into the database (with AutocannonLoad.databaseStats). */
  written?: Written;
}

/** How many answers of a run had a status in `statuses`. */
export function statusCount(result: autocannon.Result, statuses: number[]): number {
  const stats = result.statusCodeStats ?? {};
  return statuses.reduce((n, s) => n + (stats[`${s}`]?.count ?? 0), 0);
}

/** `statuses 429 × 12, 500 × 1` for the log line, from status → count (2xx and expected statuses left out). */
function unexpected(counts: Map<number, number>, ok: number[] = []): string {
  const bad = [...counts].filter(([s]) => (s < 200 || s > 299) && !ok.includes(s));
  return bad.length ? ` (statuses ${bad.map(([s, n]) => `${s} × ${n}`).join(', ')})` : '';
}

/** Status → count over all of a variant's runs. */
function statusCounts(results: autocannon.Result[]): Map<number, number> {
  const counts = new Map<number, number>();
  for (const r of results)
    for (const [s, { count = 0 }] of Object.entries(r.statusCodeStats ?? {})) counts.set(Number(s), (counts.get(Number(s)) ?? 0) + count);
  return counts;
}

/** Transport errors plus answers outside 2xx that the variant does not expect. */
const failures = (r: autocannon.Result, v: Loaded) => r.errors + r.non2xx - statusCount(r, v.load.okStatuses ?? []);

/**
 * Variants measured side by side: a warm-up each, then ROUNDS rounds in which every variant runs
 * once in turn (every other round in the reverse order), so slow and fast phases of a noisy machine
 * hit all variants alike. Each row keeps the median round; `perRound` keeps every round's req/s
 * (for ratios).
 */
export async function sideBySide(variants: Loaded[]): Promise<Row[]> {
  const { durationSeconds, rounds } = OPTIONS;
  // Whether a run since the last database statistics reading may not have reported its counters yet.
  let unsettled = false;
  const settle = () => new Promise((r) => setTimeout(r, STATS_SETTLE_MS));
  const run = async (v: Loaded, duration: number, warmUp = false): Promise<Measured> => {
    const background = await v.load.background?.();
    const stats = warmUp ? null : (v.load.databaseStats ?? null);
    let measured: Measured;
    try {
      // The servers' connections report their last second of counters once idle (within 10 s).
      if (stats && unsettled) await settle();
      const before = stats && (await readCounters(stats));
      const stop = cpuMeter(v.pid, v.localDatabase ?? false);
      const result = await autocannon({ ...v.load.options, connections: v.connections, duration });
      measured = { result, cpu: stop() };
      unsettled = true;
      if (stats && before) {
        await settle();
        measured.written = written(before, await readCounters(stats));
        unsettled = false;
      }
    } finally {
      await background?.stop();
    }
    return { ...measured, background: background?.note() };
  };
  for (const v of variants) await run(v, Math.min(2, durationSeconds), true);
  const results = variants.map(() => [] as Measured[]);
  for (let round = 0; round < rounds; round++) {
    // Every other round in the reverse order: a variant that always ran second would always meet what
    // the one before left behind (autovacuum, checkpoints, a background's teardown).
    const order = [...variants.entries()];
    if (round % 2) order.reverse();
    for (const [i, v] of order) results[i].push(await run(v, durationSeconds));
  }
  return variants.map((v, i) => medianRow(v, results[i]));
}

/** `, CPU per request: server 0.41 ms, database 0.62 ms` for the log line (nothing when not measured). */
function cpuText(row: Row): string {
  const parts = [
    row.serverCpuMs != null ? `server ${row.serverCpuMs} ms (main thread ${row.serverMainCpuMs} ms)` : null,
    row.databaseCpuMs != null ? `database ${row.databaseCpuMs} ms` : null,
  ].filter(Boolean);
  return parts.length ? `, CPU per request: ${parts.join(', ')}` : '';
}

/** CPU milliseconds per answered request, to 0.01 ms. */
const perRequest = (ms: number | null, r: autocannon.Result) =>
  ms === null || !r.requests.total ? null : +(ms / r.requests.total).toFixed(2);

/** The row of a variant's median round (with its CPU per request), with every round's req/s and all rounds' errors. */
function medianRow(v: Loaded, measured: Measured[]): Row {
  const results = measured.map((m) => m.result);
  const perRound = results.map((r) => Math.round(r.requests.average));
  const median = [...measured].sort((a, b) => a.result.requests.average - b.result.requests.average)[Math.floor(results.length / 2)];
  const r = median.result;
  const row: Row = {
    scenario: v.scenario,
    variant: v.label,
    connections: v.connections,
    rps: Math.round(r.requests.average),
    p50: r.latency.p50,
    p95: null,
    p97_5: r.latency.p97_5 ?? null,
    p99: r.latency.p99,
    errors: results.reduce((n, x) => n + failures(x, v), 0),
    note:
      [v.load.note?.(results), median.background, median.written && writtenText(median.written, r.requests.total)]
        .filter(Boolean)
        .join('; ') || undefined,
    perRound,
    serverCpuMs: perRequest(median.cpu.server, r),
    serverMainCpuMs: perRequest(median.cpu.serverMain, r),
    databaseCpuMs: perRequest(median.cpu.database, r),
    ...writtenFields(median.written, r.requests.total),
  };
  log(
    `${row.scenario} / ${row.variant}: ${row.rps} req/s (rounds ${perRound.join(', ')}), p50 ${row.p50} ms, p99 ${row.p99} ms, errors ${row.errors}${cpuText(row)}${unexpected(statusCounts(results), v.load.okStatuses)}${row.note ? `, ${row.note}` : ''}`,
  );
  return row;
}

/** A row's WAL and rows per request, from what its median round wrote. */
function writtenFields(w: Written | undefined, requests: number): Partial<Row> {
  if (!w || !requests) return {};
  const per = (n: number) => +(n / requests).toFixed(2);
  const rowsByTable = Object.fromEntries(
    Object.entries(w.tables).map(([t, c]) => [t, { ins: per(c.ins), upd: per(c.upd), hot: per(c.hot), del: per(c.del) }]),
  );
  return { walBytesPerRequest: Math.round(w.walBytes / requests), rowsPerRequest: per(rowsWritten(w)), rowsByTable };
}

/** Exact percentile `p` of ascending `sorted` values, to 0.1 ms. */
export function percentile(sorted: number[], p: number): number {
  return +sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)].toFixed(1);
}

/**
 * When the paths were asked more than once: the p95 of their first asks and of their repeats, and
 * with BENCH_SLOWEST=N the N slowest requests (to see what sets the tail).
 */
function firstAndRepeated(asks: { path: string; ms: number; first: boolean }[]): string {
  const firsts = asks.filter((a) => a.first).map((a) => a.ms);
  const repeats = asks.filter((a) => !a.first).map((a) => a.ms);
  if (!repeats.length) return '';
  const slowest = Number(process.env.BENCH_SLOWEST ?? 0);
  if (slowest > 0)
    for (const a of [...asks].sort((x, y) => y.ms - x.ms).slice(0, slowest))
      log(`  ${a.ms.toFixed(1)} ms${a.first ? ' (first ask)' : ''} ${decodeURIComponent(a.path)}`);
  const p95 = (xs: number[]) =>
    percentile(
      [...xs].sort((a, b) => a - b),
      0.95,
    );
  return ` (first asks p95 ${p95(firsts)} ms, repeated ${p95(repeats)} ms)`;
}

/**
 * Latency of one request at a time (no queueing behind other requests): `count` requests cycling
 * through `paths` after the warm-up paths and `settle` (background work the warm-up started), exact
 * percentiles; with `ranking`, counts how many answers used it (X-Search-Ranking); with
 * `background` (the load's `during`, started by the runner), requests go on until it is done, and
 * its note is the row's.
 */
export async function sequential(
  scenario: string,
  label: string,
  base: string,
  d: SequentialLoad,
  settle: () => Promise<void>,
  during?: () => SequentialBackground,
): Promise<Row> {
  for (const path of d.warmPaths ?? d.paths.slice(0, 20)) await (await fetch(base + path, { headers: d.headers })).arrayBuffer();
  await settle();
  // Started after the warm-up, so that all of it runs while requests are measured.
  const background = during?.();
  await background?.started;
  let finished = !background;
  const backgroundNote = background?.done.finally(() => (finished = true));
  // Each path's first ask apart from its repeats (a query's first ask reads pages no earlier one did).
  const asks: { path: string; ms: number; first: boolean }[] = [];
  let errors = 0;
  let ranked = 0;
  const statuses = new Map<number, number>();
  const started = performance.now();
  for (let i = 0; i < d.count || !finished; i++) {
    const t = performance.now();
    const path = d.paths[i % d.paths.length];
    const res = await fetch(base + path, { headers: d.headers });
    await res.arrayBuffer();
    asks.push({ path, ms: performance.now() - t, first: i < d.paths.length });
    const rest = (d.paceMs ?? 0) - (performance.now() - t);
    if (rest > 0) await new Promise((resolve) => setTimeout(resolve, rest));
    if (res.status !== 200) errors++;
    statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
    const ranking = res.headers.get('x-search-ranking');
    if (ranking === d.ranking) ranked++;
  }
  const seconds = (performance.now() - started) / 1000;
  const times = asks.map((a) => a.ms).sort((a, b) => a - b);
  const at = (p: number) => percentile(times, p);
  const after = d.noteAfter ? await d.noteAfter() : '';
  const note = [
    d.ranking ? `${ranked}/${d.count} ranked ${d.ranking}` : background ? `${await backgroundNote}, max ${at(1)} ms` : '',
    after,
  ]
    .filter(Boolean)
    .join('; ');
  const row: Row = {
    scenario,
    variant: label,
    connections: 1,
    rps: Math.round(times.length / seconds),
    p50: at(0.5),
    p95: at(0.95),
    p97_5: at(0.975),
    p99: at(0.99),
    errors,
    note: note || undefined,
  };
  const latency = `p50 ${row.p50} ms, p95 ${row.p95} ms, p99 ${row.p99} ms${firstAndRepeated(asks)}`;
  log(
    `${scenario} / ${label}: sequential ${times.length} requests, ${latency}, errors ${errors}${unexpected(statuses)}` +
      `${note ? `, ${note}` : ''}`,
  );
  return row;
}
