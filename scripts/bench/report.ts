/** The bench's output: the printed table, the ratio lines with their targets, and bench-results/latest.json. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { log, OPTIONS } from './options.js';
import type { Ratio, Row, Scenario } from './types.js';

/** Prints the rows as a Markdown table (the format of docs/benchmarks.md). */
export function printTable(rows: Row[]): void {
  const header = [
    'scenario',
    'variant',
    'conn',
    'req/s',
    'p50 ms',
    'p95 ms',
    'p97.5 ms',
    'p99 ms',
    'server CPU ms/req (main thread)',
    'db CPU ms/req',
    'errors',
    'note',
  ];
  const dash = (v: number | null) => (v === null ? '—' : String(v));
  const data = rows.map((r) => [
    r.scenario,
    r.variant,
    String(r.connections),
    String(r.rps),
    String(r.p50),
    dash(r.p95),
    dash(r.p97_5),
    String(r.p99),
    r.serverCpuMs == null ? '—' : `${r.serverCpuMs} (${dash(r.serverMainCpuMs ?? null)})`,
    dash(r.databaseCpuMs ?? null),
    String(r.errors),
    r.note ?? '',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...data.map((d) => d[i].length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  console.log(`\n${line(header)}\n|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const d of data) console.log(line(d));
}

/** A declared ratio worked out from its two side-by-side rows (value null when either side did not run). */
export interface Comparison {
  ratio: Ratio;
  value: number | null;
  of: Row | null;
  over: Row | null;
}

/**
 * The median over rounds of a / b, from side-by-side rows (of an even number of rounds, the mean of
 * the middle two), unrounded: a target is judged on it, and only what is shown is rounded (shown).
 */
function medianRatio(a: Row, b: Row): number | null {
  if (!a.perRound || !b.perRound) return null;
  const ratios = a.perRound.map((x, i) => x / b.perRound![i]).sort((x, y) => x - y);
  const middle = ratios.length / 2;
  return ratios.length % 2 ? ratios[Math.floor(middle)] : (ratios[middle - 1] + ratios[middle]) / 2;
}

/** A ratio as shown and written: three places (a ratio just under its target shows as under it, e.g. 0.899). */
const shown = (ratio: number) => +ratio.toFixed(3);

/** Every ratio the chosen scenarios declare, from the rows by id. */
export function compare(scenarios: Scenario[], rows: Row[]): Comparison[] {
  const byId = new Map(rows.map((r) => [r.id, r]));
  return scenarios.flatMap((s) =>
    (s.ratios ?? []).map((ratio) => {
      const of = byId.get(`${s.id}/${ratio.of.variant}`) ?? null;
      const over = byId.get(`${s.id}/${ratio.over.variant}`) ?? null;
      return { ratio, value: of && over ? medianRatio(of, over) : null, of, over };
    }),
  );
}

const num = (n: number) => n.toLocaleString('en-US');
const met = (ok: boolean) => (ok ? 'met' : 'missed');

/** The targets of a comparison and whether they were met, e.g. `(targets ≥ 0.6×: met; service p99 < 60 ms: missed)`. */
function verdict({ ratio: { target, of: side, over: other }, value, of, over }: Comparison): string {
  if (!target || value === null || !of || !over) return '';
  const parts = [`≥ ${target.min}×: ${met(value >= target.min)}`];
  if (target.p99Below !== undefined) parts.push(`${side.name} p99 < ${target.p99Below} ms: ${met(of.p99 < target.p99Below)}`);
  if (target.p99AtMost !== undefined)
    parts.push(
      `${side.name} p99 ≤ ${target.p99AtMost}× ${other.name}'s (${+(of.p99 / over.p99).toFixed(2)}×): ${met(of.p99 <= target.p99AtMost * over.p99)}`,
    );
  if (target.cpuAtMost !== undefined && of.serverCpuMs != null) {
    const main = of.serverMainCpuMs ?? of.serverCpuMs;
    parts.push(
      `${side.name} CPU ≤ ${target.cpuAtMost} ms per request (process ${of.serverCpuMs} ms: ${met(of.serverCpuMs <= target.cpuAtMost)}; ` +
        `main thread ${main} ms: ${met(main <= target.cpuAtMost)})`,
    );
  }
  return `   (target${parts.length > 1 ? 's' : ''} ${parts.join('; ')})`;
}

/** `WAL per request: service 9,120 B (rows 4.00) vs plain 4,010 B (rows 1.00) → 2.27× (target ≤ 2×: missed)`. */
function walLine({ ratio: { of, over, target }, of: a, over: b }: Comparison): string {
  const side = (name: string, r: Row) => `${name} ${num(r.walBytesPerRequest!)} B (rows ${r.rowsPerRequest})`;
  const value = +(a!.walBytesPerRequest! / Math.max(1, b!.walBytesPerRequest!)).toFixed(2);
  const goal = target?.walAtMost === undefined ? '' : `   (target ≤ ${target.walAtMost}×: ${met(value <= target.walAtMost)})`;
  return `WAL per request: ${side(of.name, a!)} vs ${side(over.name, b!)} → ${value}×${goal}`;
}

/** One line per ratio: both sides' req/s and p99, the median per-round ratio, and the targets. */
export function printComparisons(comparisons: Comparison[]): void {
  if (comparisons.length) console.log('');
  for (const c of comparisons) {
    const { label, of, over } = c.ratio;
    if (!c.of || !c.over || c.value === null) {
      console.log(`${label}: n/a (${OPTIONS.databaseUrl ? 'a side did not run' : 'no baseline on the embedded database'})`);
      continue;
    }
    const side = (name: string, r: Row) => `${name} ${num(r.rps)} req/s p99 ${num(r.p99)} ms`;
    console.log(`${label}: ${side(of.name, c.of)} vs ${side(over.name, c.over)} → ${shown(c.value)}×${verdict(c)}`);
    if (c.of.walBytesPerRequest !== undefined && c.over.walBytesPerRequest !== undefined) console.log(`  ${walLine(c)}`);
  }
}

/** Writes bench-results/latest.json: the settings, every row (with every round) and ratio, and the query counts. */
export function writeResults(rows: Row[], comparisons: Comparison[], queryCounts: Record<string, number[]> | null): void {
  mkdirSync('bench-results', { recursive: true });
  const ratios = Object.fromEntries(comparisons.map((c) => [c.ratio.key, c.value === null ? null : shown(c.value)]));
  const details = comparisons.map(({ ratio, value, of, over }) => ({
    ...ratio,
    value: value === null ? null : shown(value),
    ofRow: of?.id ?? null,
    overRow: over?.id ?? null,
  }));
  const results = {
    at: new Date().toISOString(),
    cores: cpus().length,
    database: OPTIONS.databaseUrl ? 'postgresql' : 'embedded',
    durationSeconds: OPTIONS.durationSeconds,
    rounds: OPTIONS.rounds,
    searchArticles: OPTIONS.searchArticles,
    rows,
    ratios,
    comparisons: details,
    queryCounts,
  };
  writeFileSync('bench-results/latest.json', JSON.stringify(results, null, 2));
  log('wrote bench-results/latest.json');
}
