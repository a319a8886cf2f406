/** The processes the bench measures: the service, and the plain baselines (PostgreSQL only), each in a process of its own. */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import pg from 'pg';
import { spawnService, type ServiceProcess } from '../../test/support/processes.js';
import { POSTGRAPHILE_NOTE_QUERY } from './loads.js';
import { log, OPTIONS } from './options.js';
import { notePath, seedNotes } from './seeding.js';
import { Tenant } from './tenant.js';
import type { Server } from './types.js';
import { METRICS_TOKEN } from './stall.js';

/** Starts the service as `npm start` would, on DATABASE_URL or a fresh embedded data directory. */
export async function startService(): Promise<ServiceProcess> {
  const { databaseUrl, profileDir } = OPTIONS;
  const profile = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
  const service = await spawnService(
    { ...serviceEnv(), ...(databaseUrl ? { DATABASE_URL: databaseUrl } : { DATA_DIR: `./bench-results/data-${Date.now()}` }) },
    profile,
  );
  log(`service at ${service.url}`);
  return service;
}

/** The service's environment in the bench, as in production but without a rate limit. */
function serviceEnv(): Record<string, string> {
  return {
    OUTBOUND_ALLOW_LOOPBACK: 'false',
    // As in production: the webhook dispatcher runs (it reads every event the writes produce).
    WEBHOOK_DISPATCHER: 'on',
    ADMIN_TOKEN: OPTIONS.adminToken,
    RATE_LIMIT_MAX: '100000000',
    EMBEDDINGS: 'local',
    // The stall scenario reads the service's event-loop delay from /metrics.
    METRICS_TOKEN,
  };
}

/**
 * The plain indexed baseline's own table (see PLAIN_TABLE_DDL), in a schema of its own so that
 * PostGraphile, serving that schema, sees this one table and nothing of the service's.
 */
export const PLAIN_SCHEMA = 'bench_plain';
export const PLAIN_TABLE = `${PLAIN_SCHEMA}.notes`;

/**
 * PostGraphile 5's server: JavaScript in a folder with its own package.json and lock, so the
 * service's dependencies stay as they are; installed there (`npm ci`) the first time the bench needs it.
 */
const POSTGRAPHILE_DIR = 'scripts/bench/postgraphile';
const POSTGRAPHILE_SERVER = `${POSTGRAPHILE_DIR}/server.mjs`;

function installPostGraphile(): void {
  if (existsSync(`${POSTGRAPHILE_DIR}/node_modules/postgraphile`)) return;
  log(`installing PostGraphile 5 for the bench in ${POSTGRAPHILE_DIR} (npm ci, once)`);
  execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: POSTGRAPHILE_DIR, stdio: 'inherit' });
}

type Baseline = 'plain-http' | 'plain-koa' | 'plain-koa-indexed' | 'postgraphile';

/** How each plain baseline is started. */
const BASELINES: Record<Baseline, { entry: string; env: Record<string, string> }> = {
  'plain-http': { entry: 'scripts/bench/servers/plainHttp.ts', env: { POOL: '20' } },
  'plain-koa': { entry: 'scripts/bench/servers/plainKoa.ts', env: {} },
  'plain-koa-indexed': { entry: 'scripts/bench/servers/plainKoa.ts', env: { TABLE: PLAIN_TABLE } },
  postgraphile: { entry: POSTGRAPHILE_SERVER, env: { SCHEMA: PLAIN_SCHEMA, NODE_ENV: 'production', GRAPHILE_ENV: 'production' } },
};
const isBaseline = (server: Server): server is Baseline => server in BASELINES;

/**
 * The plain indexed baseline's table: exactly what the API's note search needs and nothing
 * else the service chose (no links or near-duplicate indexes, no history, no events): the note's
 * columns, the unique (workspace, path) key and one GIN index over a stored tsvector weighting the
 * path (A), the tags (B) and the body (C) as the service's does. Storage parameters are PostgreSQL's defaults.
 */
const PLAIN_TABLE_DDL = [
  `drop table if exists public.bench_plain_notes`,
  `drop schema if exists ${PLAIN_SCHEMA} cascade`,
  `create schema ${PLAIN_SCHEMA}`,
  `create table ${PLAIN_TABLE} (id serial, workspace_id uuid not null, path text collate "C" not null, kind text not null,
     body text not null, links text[] not null, tags text[] not null, created_at timestamptz not null, updated_at timestamptz not null,
     accessed_at timestamptz not null,
     search tsvector generated always as (setweight(to_tsvector('english', translate(path, '/._-', '    ')), 'A')
       || setweight(to_tsvector('english', public.wks_array_text(tags)), 'B') || setweight(to_tsvector('english', body), 'C')) stored,
     unique (workspace_id, path))`,
  `create index notes_search_idx on ${PLAIN_TABLE} using gin (search)`,
];

let plainTableFilled = false;

/** Makes the plain indexed table afresh (once per run) with a copy of the workspace's seeded notes. */
async function fillPlainTable(databaseUrl: string, workspaceId: string): Promise<void> {
  if (plainTableFilled) return;
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    for (const ddl of PLAIN_TABLE_DDL) await client.query(ddl);
    const { rowCount } = await client.query(
      `insert into ${PLAIN_TABLE} (workspace_id, path, kind, body, links, tags, created_at, updated_at, accessed_at)
       select workspace_id, path, kind, body, links, tags, created_at, updated_at, accessed_at from memory_notes where workspace_id = $1 order by id`,
      [workspaceId],
    );
    await client.query(`vacuum analyze ${PLAIN_TABLE}`);
    log(`${PLAIN_TABLE}: ${rowCount} notes copied for the plain indexed baseline`);
    plainTableFilled = true;
  } finally {
    await client.end();
  }
}

/** PostGraphile answers GraphQL errors with 200: one query checked before the load, so a renamed field cannot pass for speed. */
async function checkPostGraphile(url: string, workspaceId: string): Promise<void> {
  const res = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      query: POSTGRAPHILE_NOTE_QUERY,
      variables: { w: workspaceId, p: notePath(0) },
    }),
  });
  const json = (await res.json()) as { errors?: unknown; data?: { noteByWorkspaceIdAndPath: unknown } };
  if (json.errors || !json.data?.noteByWorkspaceIdAndPath)
    throw new Error(`PostGraphile does not serve the plain table: ${JSON.stringify(json)}`);
}

/** Running baseline processes by server, and how to stop them all. */
export interface Baselines {
  urls: Map<Server, string>;
  pids: Map<Server, number>;
  /** The bearer header of a server that has a tenant of its own (the embedded service). */
  auth: Map<Server, Record<string, string>>;
  stop(): Promise<void>;
}

/**
 * A second service on a fresh embedded database in a directory of its own, with a tenant and the
 * bench's 10,000 notes seeded through its API like the first's: the embedded default measured
 * side by side with the service on PostgreSQL.
 */
async function startEmbeddedService(): Promise<{ child: ServiceProcess; auth: Record<string, string> }> {
  const child = await spawnService({ ...serviceEnv(), DATABASE_URL: '', DATA_DIR: `./bench-results/data-${Date.now()}` });
  try {
    const tenant = await Tenant.create(child.url, OPTIONS.adminToken, 'Bench embedded', 'enterprise');
    const { auth } = await tenant.workspace('Bench');
    log(`embedded service at ${child.url}: seeding its notes`);
    await seedNotes(child.url, auth);
    return { child, auth };
  } catch (error) {
    await child.stop();
    throw error;
  }
}

/** Starts the plain baselines among `servers` on `databaseUrl`, serving the notes of `workspaceId`. */
export async function startBaselines(servers: Set<Server>, databaseUrl: string, workspaceId: string): Promise<Baselines> {
  const started: ServiceProcess[] = [];
  const urls = new Map<Server, string>([['database', databaseUrl]]);
  const pids = new Map<Server, number>();
  const auth = new Map<Server, Record<string, string>>();
  const stop = async () => void (await Promise.all(started.map((p) => p.stop())));
  try {
    for (const server of servers) {
      if (server === 'service-embedded') {
        const embedded = await startEmbeddedService();
        started.push(embedded.child);
        urls.set(server, embedded.child.url);
        auth.set(server, embedded.auth);
        if (embedded.child.child.pid) pids.set(server, embedded.child.child.pid);
        continue;
      }
      if (!isBaseline(server) && server !== 'service-lean') continue;
      if (server === 'plain-koa-indexed' || server === 'postgraphile') await fillPlainTable(databaseUrl, workspaceId);
      if (server === 'postgraphile') installPostGraphile();
      const child =
        server === 'service-lean'
          ? // A second service on the same database with note history and the near-duplicate check off: what they cost.
            await spawnService({ ...serviceEnv(), DATABASE_URL: databaseUrl, MEMORY_HISTORY_KEPT: '0', MEMORY_NEAR_DUPLICATES: 'off' })
          : await spawnService(
              { DATABASE_URL: databaseUrl, WORKSPACE_ID: workspaceId, ...BASELINES[server].env },
              [],
              BASELINES[server].entry,
            );
      started.push(child);
      if (server === 'postgraphile') await checkPostGraphile(child.url, workspaceId);
      urls.set(server, child.url);
      if (child.child.pid) pids.set(server, child.child.pid);
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { urls, pids, auth, stop };
}
