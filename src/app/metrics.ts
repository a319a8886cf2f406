import type { MikroORM } from '@mikro-orm/postgresql';
import type { Context } from 'koa';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { safeEqual } from '../auth/keys.js';
import type { Middleware } from '../http/middleware.js';
import { freshEm } from '../db/orm.js';
import type { ReadRouter } from './readRouter.js';
import type { EmbeddedDatabase } from '../db/embedded.js';
import { knexPool } from '../db/poolWaits.js';
import { failoverOf, poolStats, poolWaits } from '../db/sql.js';
import type { FailoverWatch } from '../db/failover.js';
import { embeddingBacklog, FAN_OUT_COUNTED, webhookBacklog, webhookFanOutLag, type Backlog } from '../store/metrics.js';
import { DomainError } from '../errors.js';
import { API_PREFIX } from '../../rest/openapi.js';

/** What the metrics read besides the requests they see. */
export interface MetricsSources {
  orm: MikroORM;
  reads: ReadRouter | null;
  /** This process's WebSockets (open, not yet through connection_init, admitted). */
  sockets(): { open: number; unauthenticated: number; admitted: number };
  /** Live subscriptions open in this process (GraphQL subscriptions and MCP change streams). */
  subscriptions(): number;
  /** Reads of new events by this process's live hub. */
  liveReads(): number;
  /** The REST route table (labels are its route names). */
  routes: readonly { method: string; path: string; name: string }[];
  /** The embedded database's thread (null on a PostgreSQL server). */
  embedded: EmbeddedDatabase | null;
  /** This process's workspace operations by door, caller and kind (`door|caller|kind` → count). */
  activity: { totals: ReadonlyMap<string, number> };
  /** The full-text indexes this process holds (workspaces, items, postings, bytes). */
  fullText: () => { indexes: number; items: number; postings: number; bytes: number };
}

/** Paths outside the route table that are labelled by themselves; anything else unmatched is `other` (the label set stays small). */
const FIXED = new Set(['/graphql', '/mcp', '/healthz', '/readyz', '/console', '/docs', '/metrics', '/llms.txt', '/api/v1/openapi.json']);

/** The route table as matchers, for requests answered before the REST router ran (a 401 or 429 from authentication). */
type RouteMatcher = { method: string; pattern: RegExp; name: string };
function matchers(routes: readonly { method: string; path: string; name: string }[]): RouteMatcher[] {
  return routes.map((r) => ({
    method: r.method,
    name: r.name,
    pattern: new RegExp(`^${API_PREFIX}${r.path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{\w+\}/g, '[^/]+')}$`),
  }));
}

function routeLabel(ctx: Context, table: RouteMatcher[]): string {
  const name = (ctx as unknown as { _matchedRouteName?: string })._matchedRouteName;
  if (name) return name;
  if (FIXED.has(ctx.path)) return ctx.path;
  const method = ctx.method === 'HEAD' ? 'GET' : ctx.method;
  return table.find((r) => r.method === method && r.pattern.test(ctx.path))?.name ?? 'other';
}

/** The ORM's own pool (transactions): tarn's counts, where the driver exposes them. */
function ormPool(orm: MikroORM): { total: number; idle: number; waiting: number } | null {
  const pool = knexPool(orm);
  if (!pool) return null;
  return { total: pool.numUsed() + pool.numFree(), idle: pool.numFree(), waiting: pool.numPendingAcquires() };
}

/**
 * The Prometheus metrics of one process (prom-client, a registry of its own): requests by route
 * and status, rate-limit refusals, database pools (connections, waits for one), the read replica,
 * the embedding, webhook delivery and webhook fan-out backlogs, WebSockets and subscriptions, and
 * the process's own (CPU, memory, event loop).
 */
export function createMetrics(sources: MetricsSources) {
  const registry = new Registry();
  const table = matchers(sources.routes);
  collectDefaultMetrics({ register: registry, prefix: 'wks_' });
  const requests = new Counter({
    name: 'wks_http_requests_total',
    help: 'HTTP requests answered, by route, method and status.',
    labelNames: ['route', 'method', 'status'],
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'wks_http_request_duration_seconds',
    help: 'Time to answer an HTTP request, by route, method and status.',
    labelNames: ['route', 'method', 'status'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const refused = new Counter({
    name: 'wks_rate_limit_refusals_total',
    help: 'Requests refused by the rate limit (429), by route.',
    labelNames: ['route'],
    registers: [registry],
  });
  poolMetrics(registry, sources.orm);
  failoverMetrics(registry, failoverOf(freshEm(sources.orm)));
  replicaMetrics(registry, sources.reads);
  embeddedMetrics(registry, sources.embedded);
  new Counter({
    name: 'wks_workspace_operations_total',
    help:
      'Workspace operations this process authorized, by door (rest, mcp, graphql, console), kind of caller ' +
      '(agent_key, oauth_grant, member, admin_token) and kind (read, write).',
    labelNames: ['door', 'caller', 'kind'],
    registers: [registry],
    collect() {
      this.reset();
      for (const [key, n] of sources.activity.totals) {
        const [door, caller, kind] = key.split('|');
        this.inc({ door, caller, kind }, n);
      }
    },
  });
  searchMetrics(registry, sources.fullText);
  backlogMetrics(registry, sources.orm);
  new Gauge({
    name: 'wks_websockets',
    help: 'WebSockets of this process, by state (open, unauthenticated: not yet through connection_init, admitted).',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      const stats = sources.sockets();
      for (const state of ['open', 'unauthenticated', 'admitted'] as const) this.set({ state }, stats[state]);
    },
  });
  liveMetrics(registry, sources);
  // The counter and histogram children of each (route, method, status).
  const bound = boundChildren<{ requests: { inc(): void }; duration: { observe(seconds: number): void } }>();
  const observe = (ctx: Context, seconds: number) => {
    const route = routeLabel(ctx, table);
    const children = bound(`${route} ${ctx.method} ${ctx.status}`, () => {
      const labels = { route, method: ctx.method, status: String(ctx.status) };
      return { requests: requests.labels(labels), duration: duration.labels(labels) };
    });
    children.requests.inc();
    children.duration.observe(seconds);
    if (ctx.status === 429) refused.inc({ route });
  };
  return { registry, observe };
}

/**
 * Metric children by a key of their label values, made by `make` on the key's first use and
 * reused after: prom-client otherwise hashes the label object on every observation, and these
 * observe every request or every statement.
 */
function boundChildren<C>(): (key: string, make: () => C) => C {
  const bound = new Map<string, C>();
  return (key, make) => {
    let children = bound.get(key);
    if (children === undefined) bound.set(key, (children = make()));
    return children;
  };
}

/** The database pools: connections by state (sampled at scrape), and every connection handed out with how long its caller waited. */
function poolMetrics(registry: Registry, orm: MikroORM): void {
  const em = freshEm(orm);
  new Gauge({
    name: 'wks_db_pool_connections',
    help: 'Database pool connections of this process, by pool and state (total, idle, waiting: callers waiting for a connection).',
    labelNames: ['pool', 'state'],
    registers: [registry],
    collect() {
      this.reset();
      const pools: Record<string, { total: number; idle: number; waiting: number } | null> = {
        ...poolStats(em),
        transactions: ormPool(orm),
      };
      for (const [pool, stats] of Object.entries(pools)) {
        if (!stats) continue;
        for (const state of ['total', 'idle', 'waiting'] as const) this.set({ pool, state }, stats[state]);
      }
    },
  });
  const waited = new Histogram({
    name: 'wks_db_pool_wait_seconds',
    help: 'Time from asking a database pool for a connection to having one, by pool: every connection handed out (about 0 when one was idle).',
    labelNames: ['pool'],
    buckets: [0.0005, 0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  const queued = new Counter({
    name: 'wks_db_pool_waits_total',
    help: 'Connections a caller had to queue for because every connection of the pool was busy, by pool.',
    labelNames: ['pool'],
    registers: [registry],
  });
  // Every statement reports here: each pool's children.
  const bound = boundChildren<{ waited: ReturnType<Histogram['labels']>; queued: ReturnType<Counter['labels']> }>();
  poolWaits(em).on((pool, seconds, wasQueued) => {
    const children = bound(pool, () => ({ waited: waited.labels(pool), queued: queued.labels(pool) }));
    children.waited.observe(seconds);
    if (wasQueued) children.queued.inc();
  });
}

/** This process's live subscriptions, and how often its live hub reads new events. */
function liveMetrics(registry: Registry, sources: Pick<MetricsSources, 'subscriptions' | 'liveReads'>): void {
  new Gauge({
    name: 'wks_graphql_subscriptions',
    help: 'Live subscriptions open in this process: GraphQL subscriptions and MCP change streams (one per workspace a stream covers).',
    registers: [registry],
    collect() {
      this.set(sources.subscriptions());
    },
  });
  new Counter({
    name: 'wks_live_event_reads_total',
    help:
      "Reads of new events by this process's live hub: one every 200 ms while anyone subscribes, and one soon after a write of " +
      'this process that a subscriber may care about.',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(sources.liveReads());
    },
  });
}

/** The watch over the primary (a PostgreSQL server): whether it serves, how often it was lost, how often another one took over. */
function failoverMetrics(registry: Registry, failover: FailoverWatch | null): void {
  if (!failover) return;
  new Gauge({
    name: 'wks_db_primary_up',
    help: '0 while the primary database is lost and no writable server has answered (requests get 503); 1 otherwise.',
    registers: [registry],
    collect() {
      this.set(failover.serving ? 1 : 0);
    },
  });
  new Counter({
    name: 'wks_db_primary_losses_total',
    help: "Times this process's database connections were lost or reached a read-only server, and its pools were emptied.",
    registers: [registry],
    collect() {
      this.reset();
      this.inc(failover.losses);
    },
  });
  new Counter({
    name: 'wks_db_failovers_total',
    help: 'Times the writable server this process found after losing its primary was another one (another address, or a new timeline: a promotion).',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(failover.failovers);
    },
  });
}

/** The full-text indexes this process holds: workspaces, items, postings and the memory they take. */
function searchMetrics(registry: Registry, usage: MetricsSources['fullText']): void {
  const parts = {
    indexes: 'workspace indexes (a corpus of a workspace)',
    items: 'items indexed',
    postings: 'postings',
    bytes: 'bytes (estimated)',
  } as const;
  for (const [part, what] of Object.entries(parts) as [keyof typeof parts, string][])
    new Gauge({
      name: `wks_search_index_${part}`,
      help: `Full-text indexes held by this process: ${what}.`,
      registers: [registry],
      collect() {
        this.set(usage()[part]);
      },
    });
}

/** The embedded database's thread: whether it serves, how often it was started again, how busy it is. */
function embeddedMetrics(registry: Registry, embedded: EmbeddedDatabase | null): void {
  if (!embedded) return;
  new Gauge({
    name: 'wks_embedded_database_up',
    help: '1 while the embedded database thread serves; 0 while it is being started again or has been given up.',
    registers: [registry],
    collect() {
      this.set(embedded.health().state === 'up' ? 1 : 0);
    },
  });
  new Counter({
    name: 'wks_embedded_database_restarts_total',
    help: 'Times the embedded database thread died and was started again.',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(embedded.health().restarts);
    },
  });
  new Counter({
    name: 'wks_embedded_database_busy_seconds_total',
    help: 'Seconds the embedded database thread spent running statements (its event loop busy); its rate is the share of a core it uses.',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(embedded.health().busySeconds);
    },
  });
}

function replicaMetrics(registry: Registry, reads: ReadRouter | null): void {
  if (!reads) return;
  new Gauge({
    name: 'wks_replica_lag_seconds',
    help: 'How far the read replica is behind the primary (-1 while it cannot be read).',
    registers: [registry],
    collect() {
      this.set(reads.lagSeconds ?? -1);
    },
  });
  new Gauge({
    name: 'wks_replica_replay_paused',
    help: '1 while the replica has WAL replay paused.',
    registers: [registry],
    collect() {
      this.set(reads.replayPaused ? 1 : 0);
    },
  });
  new Counter({
    name: 'wks_read_requests_total',
    help: 'Read requests (REST GETs, GraphQL queries, MCP reads) by where their statements went: replica; primary_write (routed to the replica, but a statement wrote on the primary); or primary and why (own_write, lag, unavailable).',
    labelNames: ['target'],
    registers: [registry],
    collect() {
      this.reset();
      for (const [target, n] of Object.entries(reads.routed)) this.inc({ target }, n);
    },
  });
}

/** The queues other processes (or this one) work through: what waits in each, and for how long. */
const BACKLOGS: readonly { queue: string; read: (em: ReturnType<typeof freshEm>) => Promise<Backlog>; items: string; oldest: string }[] = [
  {
    queue: 'embedding',
    read: embeddingBacklog,
    items: 'Items waiting in the embedding queue',
    oldest: 'item waiting in the embedding queue',
  },
  {
    queue: 'webhook',
    read: webhookBacklog,
    items: 'Webhook deliveries pending (including those waiting for a retry)',
    oldest: 'pending webhook delivery',
  },
  {
    queue: 'webhook_fanout',
    read: webhookFanOutLag,
    items: `Events the webhook fan-out has not passed yet, counted up to ${FAN_OUT_COUNTED} (their deliveries do not exist yet)`,
    oldest: 'event the webhook fan-out has not passed',
  },
];

function backlogMetrics(registry: Registry, orm: MikroORM): void {
  const em = freshEm(orm);
  for (const { queue, read, items, oldest } of BACKLOGS) {
    let last: Promise<Backlog | null> | null = null;
    // One query per scrape for both gauges of a queue; while the database cannot answer they are left out, and the scrape still answers.
    const once = () =>
      (last ??= read(em)
        .catch(() => null)
        .finally(() => setTimeout(() => (last = null), 0)));
    new Gauge({
      name: `wks_${queue}_backlog_depth`,
      help: `${items} (all processes).`,
      registers: [registry],
      async collect() {
        const backlog = await once();
        if (backlog) this.set(backlog.depth);
        else this.reset();
      },
    });
    new Gauge({
      name: `wks_${queue}_backlog_oldest_seconds`,
      help: `Age in seconds of the oldest ${oldest} (0 when none).`,
      registers: [registry],
      async collect() {
        const backlog = await once();
        if (backlog) this.set(backlog.oldestSeconds);
        else this.reset();
      },
    });
  }
}

/** Times every request into the metrics (outermost, so it sees the status the error renderer set). */
export function requestMetrics(metrics: ReturnType<typeof createMetrics>): Middleware {
  return async (ctx, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      metrics.observe(ctx, (performance.now() - started) / 1000);
    }
  };
}

/**
 * Serves the metrics at GET /metrics in the Prometheus text format to a scraper presenting
 * `Authorization: Bearer <METRICS_TOKEN>` (401 envelope otherwise). Without METRICS_TOKEN there is
 * no /metrics (404 like any unknown path): metrics are never public by default.
 */
export function metricsEndpoint(metrics: ReturnType<typeof createMetrics>, token: string | undefined): Middleware {
  return async (ctx, next) => {
    if (ctx.path !== '/metrics' || !token) return next();
    const header = ctx.get('authorization');
    if (!header.startsWith('Bearer ') || !safeEqual(header.slice(7), token))
      throw new DomainError('unauthorized', 'GET /metrics needs "Authorization: Bearer <METRICS_TOKEN>".', null, {
        'WWW-Authenticate': 'Bearer realm="metrics"',
      });
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD')
      throw new DomainError('method_not_allowed', `${ctx.method} is not supported here; use GET.`, null, { Allow: 'GET' });
    ctx.type = metrics.registry.contentType;
    ctx.body = await metrics.registry.metrics();
  };
}
