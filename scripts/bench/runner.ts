/** Runs the scenario table: chooses rows, seeds what they need, measures their variants, reports. */
import { availableParallelism, cpus } from 'node:os';
import pg from 'pg';
import { isLocalDatabase } from './cpu.js';
import { pgbenchUpdate } from './pgbench.js';
import { sequential, sideBySide, type Loaded } from './measure.js';
import { log, OPTIONS } from './options.js';
import { countQueries } from './queryCounts.js';
import { compare, printComparisons, printTable, writeResults } from './report.js';
import { SCENARIOS } from './scenarios.js';
import { connectLatency } from './sockets.js';
import { seedArticles, seedNotes, seedSearchCorpus, waitForEmbeddings } from './seeding.js';
import { startBaselines, startService, type Baselines } from './servers.js';
import { queryOnce } from '../../test/support/ownDatabase.js';
import { Tenant } from './tenant.js';
import type { Bench, Row, Scenario, Seed, Variant } from './types.js';

/** The scenarios `--only=` names (ids or old numbers), in table order; all without it. */
export function chooseScenarios(only: string[] | null): Scenario[] {
  if (!only) return SCENARIOS;
  const unknown = only.filter((o) => !SCENARIOS.some((s) => s.id === o || String(s.alias) === o));
  if (unknown.length) {
    const known = SCENARIOS.map((s) => `${s.alias}|${s.id}`).join(', ');
    throw new Error(`--only: unknown scenario ${unknown.join(', ')} (known: ${known})`);
  }
  return SCENARIOS.filter((s) => only.includes(s.id) || only.includes(String(s.alias)));
}

/** The bench's context without a target: tenant, keys, pool, corpus size. */
type Context = Omit<Bench, 'base' | 'pid'> & { servicePid?: number };

/**
 * Writes out what seeding left in shared buffers (a checkpoint), so that no scenario is measured
 * while the checkpointer flushes the seeding's gigabyte (the bulk load of 100,000 articles and its
 * indexes): one run at 100,000 articles measured the full-text latency in that flush, and
 * one-word queries that take ~15 ms took up to 78 ms then. Only before the search scenario: the
 * write scenarios keep the checkpoints as they come (one before every round made each round
 * begin with full-page images). A role that may not checkpoint only says so.
 */
async function settleWrites(pool: pg.Pool): Promise<void> {
  const started = Date.now();
  try {
    await pool.query('checkpoint');
    log(`checkpoint after seeding: ${((Date.now() - started) / 1000).toFixed(1)} s`);
  } catch (error) {
    log(`no checkpoint after seeding (${(error as Error).message}): the first scenario may be measured while seeding is written out`);
  }
}

/** Makes the tenant and its two workspaces, and seeds what the chosen scenarios need. */
async function prepare(url: string, servicePid: number | undefined, scenarios: Scenario[]): Promise<Context> {
  const { databaseUrl, adminToken } = OPTIONS;
  const tenant = await Tenant.create(url, adminToken, 'Bench', 'enterprise');
  const main = await tenant.workspace('Bench');
  // The search corpus lives in its own workspace, so the tree and list scenarios see 2k articles.
  const search = await tenant.workspace('Search');
  const needs = new Set<Seed>(scenarios.flatMap((s) => s.needs));
  const pool = databaseUrl ? new pg.Pool({ connectionString: databaseUrl, max: 10 }) : null;
  if (needs.has('notes')) await seedNotes(url, main.auth);
  else if (needs.has('hot-note')) await seedNotes(url, main.auth, [7]);
  // The embedded database has no bulk-SQL search corpus: the search scenario searches these articles there.
  if (needs.has('articles') || (needs.has('search') && !pool)) await seedArticles(url, main.auth);
  if (needs.has('search') && pool) await seedSearchCorpus(url, search.auth, search.id, pool, OPTIONS.searchArticles);
  // Nothing is measured while the worker embeds what was just written (it would share the cores);
  // --quick is a smoke test: it does not wait minutes for the model to embed 3,000 items.
  const wait = OPTIONS.quick ? 30 : Infinity;
  if (needs.has('articles') || (needs.has('search') && !pool)) await waitForEmbeddings(url, main.auth, wait);
  if (needs.has('search') && pool) await waitForEmbeddings(url, search.auth, wait);
  if (needs.has('search') && pool) await settleWrites(pool);
  return {
    service: url,
    servicePid,
    databaseUrl,
    auth: main.auth,
    searchAuth: pool ? search.auth : main.auth,
    workspaceId: main.id,
    organizationId: tenant.organizationId,
    corpus: pool ? OPTIONS.searchArticles : 2_000,
    pool,
  };
}

/** Runs of consecutive variants: autocannon ones together (side by side), every other kind alone. */
function blocks(variants: Variant[]): Variant[][] {
  const out: Variant[][] = [];
  for (const v of variants) {
    const last = out.at(-1);
    if (last && v.drive.kind === 'autocannon' && last[0].drive.kind === 'autocannon') last.push(v);
    else out.push([v]);
  }
  return out;
}

/** The bench context aimed at a variant's server, and the variant's printed label. */
function bind(v: Variant, ctx: Context, baselines: Baselines | null): { bench: Bench; label: string } {
  const server = v.server ?? 'service';
  const own = baselines?.auth.get(server);
  const bench = {
    ...ctx,
    base: server === 'service' ? ctx.service : baselines!.urls.get(server)!,
    pid: server === 'service' ? ctx.servicePid : baselines?.pids.get(server),
    ...(own ? { auth: own, searchAuth: own } : {}),
  };
  return { bench, label: typeof v.label === 'string' ? v.label : v.label(bench) };
}

/** Measures a block of autocannon variants side by side. */
async function runAutocannon(s: Scenario, block: Variant[], ctx: Context, baselines: Baselines | null): Promise<Row[]> {
  const loaded = block.map((v): Loaded => {
    const { bench, label } = bind(v, ctx, baselines);
    if (v.drive.kind !== 'autocannon') throw new Error(`${s.id}/${v.id} is not an autocannon variant`);
    return {
      scenario: s.name,
      label,
      connections: v.connections,
      load: v.drive.load(bench),
      pid: bench.pid,
      localDatabase: isLocalDatabase(ctx.databaseUrl),
    };
  });
  await (s.settle?.({ ...ctx, base: ctx.service }) ?? Promise.resolve());
  return (await sideBySide(loaded)).map((row, i) => ({ id: `${s.id}/${block[i].id}`, ...row }));
}

/** Measures one sequential, WebSocket-connection, pgbench or drill variant. */
async function runOnce(s: Scenario, v: Variant, ctx: Context, baselines: Baselines | null): Promise<Row[]> {
  const { bench, label } = bind(v, ctx, baselines);
  const id = `${s.id}/${v.id}`;
  if (v.drive.kind === 'sequential') {
    const settle = () => s.settle?.(bench) ?? Promise.resolve();
    const load = v.drive.load(bench);
    const during = load.during && (() => load.during!(bench));
    return [{ id, ...(await sequential(s.name, label, bench.base, load, settle, during)) }];
  }
  if (v.drive.kind === 'connect') return [{ id, ...(await connectLatency(s.name, label, bench.base, v.drive.load(bench))) }];
  if (v.drive.kind === 'drill') return [{ id, scenario: s.name, variant: label, connections: v.connections, ...(await v.drive.run()) }];
  try {
    const row = await pgbenchUpdate(ctx.databaseUrl!, ctx.workspaceId, s.name, label, v.connections, OPTIONS.durationSeconds);
    return row ? [{ id, ...row }] : [];
  } catch (error) {
    // E.g. the database's connection limit, with other clients on it: the row is missing, the run goes on.
    log(`${s.name} / ${label}: pgbench failed, row skipped: ${String(error).split('\n').slice(0, 3).join(' ')}`);
    return [];
  }
}

/**
 * Runs one scenario's variants (those its database allows) block by block; the plain baselines a
 * block targets run only during that block, so they hold no database connections the next one needs.
 */
async function runScenario(s: Scenario, ctx: Context): Promise<Row[]> {
  const variants = s.variants.filter(
    (v) =>
      ((v.server ?? 'service') === 'service' || ctx.databaseUrl) && (!OPTIONS.variants || OPTIONS.variants.includes(`${s.id}/${v.id}`)),
  );
  const rows: Row[] = [];
  for (const block of blocks(variants)) {
    const servers = new Set(block.map((v) => v.server ?? 'service'));
    const baselines = [...servers].some((x) => x !== 'service') ? await startBaselines(servers, ctx.databaseUrl!, ctx.workspaceId) : null;
    try {
      if (block[0].drive.kind === 'autocannon') rows.push(...(await runAutocannon(s, block, ctx, baselines)));
      else rows.push(...(await runOnce(s, block[0], ctx, baselines)));
    } finally {
      await baselines?.stop();
    }
  }
  return rows;
}

/** The query counts, or null (logged) when the in-process server fails: the measurements are still reported. */
async function queryCountsOrNull(databaseUrl: string | undefined): Promise<Record<string, number[]> | null> {
  try {
    return await countQueries(databaseUrl, OPTIONS.adminToken);
  } catch (error) {
    log(`query counts failed, left out: ${String(error).split('\n')[0]}`);
    return null;
  }
}

/**
 * The server's shared_buffers, which decides how much of a large corpus stays in the database's
 * own memory (the rest is read through the operating system's cache, which a host may take back).
 */
async function serverMemory(url: string): Promise<string> {
  try {
    const [row] = await queryOnce<{ shared_buffers: string }>(url, 'show shared_buffers');
    return `, shared_buffers ${row.shared_buffers}`;
  } catch {
    return '';
  }
}

/** `npm run bench`: the service in a child process, the chosen scenarios in table order, the report. */
export async function runBench(): Promise<void> {
  const { databaseUrl, durationSeconds, rounds } = OPTIONS;
  const scenarios = chooseScenarios(OPTIONS.only);
  const where = databaseUrl ? `PostgreSQL (DATABASE_URL${await serverMemory(databaseUrl)})` : 'embedded PGlite';
  log(
    `${cpus().length} cores (${availableParallelism()} available), database: ${where}, ${durationSeconds} s × ${rounds} rounds per scenario`,
  );
  log(`scenarios: ${scenarios.map((s) => s.id).join(', ')}`);
  if (!databaseUrl)
    log('note: on the embedded database the plain baselines and multi-process figures are skipped (PGlite belongs to one process)');
  const service = await startService();
  let ctx: Context | null = null;
  try {
    ctx = await prepare(service.url, service.child.pid, scenarios);
    const rows: Row[] = [];
    for (const s of scenarios) rows.push(...(await runScenario(s, ctx)));
    // Query counts per request (lists), on an in-process server whose connection counts queries.
    const counts = scenarios.some((s) => s.countQueries) ? await queryCountsOrNull(databaseUrl) : null;
    const comparisons = compare(scenarios, rows);
    printTable(rows);
    printComparisons(comparisons);
    if (counts) console.log(`queries per request: ${JSON.stringify(counts)}`);
    writeResults(rows, comparisons, counts);
  } finally {
    await ctx?.pool?.end();
    await service.stop();
  }
}
