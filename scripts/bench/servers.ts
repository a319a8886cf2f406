/** The processes the bench measures: the service, and the plain baselines (PostgreSQL only), each in a process of its own. */
import { spawnService, type ServiceProcess } from '../../test/support/processes.js';
import { log, OPTIONS } from './options.js';
import type { Server } from './types.js';

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
  };
}

/** How each plain baseline is started. */
const BASELINES: Record<'plain-http' | 'plain-koa', { entry: string; env: Record<string, string> }> = {
  'plain-http': { entry: 'scripts/bench/servers/plainHttp.ts', env: { POOL: '20' } },
  'plain-koa': { entry: 'scripts/bench/servers/plainKoa.ts', env: {} },
};

/** Running baseline processes by server, and how to stop them all. */
export interface Baselines {
  urls: Map<Server, string>;
  pids: Map<Server, number>;
  stop(): Promise<void>;
}

/** Starts the plain baselines among `servers` on `databaseUrl`, serving the notes of `workspaceId`. */
export async function startBaselines(servers: Set<Server>, databaseUrl: string, workspaceId: string): Promise<Baselines> {
  const started: ServiceProcess[] = [];
  const urls = new Map<Server, string>([['database', databaseUrl]]);
  const pids = new Map<Server, number>();
  const stop = async () => void (await Promise.all(started.map((p) => p.stop())));
  try {
    for (const server of servers) {
      if (server !== 'plain-http' && server !== 'plain-koa' && server !== 'service-lean') continue;
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
      urls.set(server, child.url);
      if (child.child.pid) pids.set(server, child.child.pid);
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { urls, pids, stop };
}
