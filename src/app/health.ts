import type { MikroORM } from '@mikro-orm/postgresql';
import type { EmbeddedDatabase } from '../db/embedded.js';
import type { FailoverWatch } from '../db/failover.js';
import { freshEm } from '../db/orm.js';
import { DomainError } from '../errors.js';
import type { Middleware } from '../http/middleware.js';
import { pingDatabase } from '../store/probes.js';

const READY_TIMEOUT_MS = 2000;

/**
 * `/healthz`: the process answers (with its uptime and memory). `/readyz`: the database answers
 * within 2 s and no migration is pending; otherwise a 503 naming which of the two, never the
 * database's own error text (hosts, users). With the embedded database, a thread that died makes
 * `/readyz` a 503 at once, saying whether it is being started again; on a PostgreSQL server, so
 * does a lost primary while no writable server has been found (see failover.ts).
 */
export function health(orm: MikroORM, embedded: EmbeddedDatabase | null, failover: FailoverWatch | null = null): Middleware {
  return async (ctx, next) => {
    if (ctx.path === '/healthz') {
      const { rss, heapUsed } = process.memoryUsage();
      ctx.body = { status: 'ok', uptimeSeconds: Math.round(process.uptime()), rssBytes: rss, heapUsedBytes: heapUsed };
      return;
    }
    if (ctx.path !== '/readyz') return next();
    const down = (embedded && embeddedDown(embedded)) || (failover && primaryMissing(failover));
    if (down) throw new DomainError('unavailable', `Not ready: ${down}`);
    if (!(await databaseAnswers(orm))) throw new DomainError('unavailable', 'Not ready: the database did not answer within 2 s.');
    if ((await orm.getMigrator().getPendingMigrations()).length) throw new DomainError('unavailable', 'Not ready: migrations are pending.');
    ctx.body = { status: 'ready', database: 'ok', migrations: 'applied' };
  };
}

async function databaseAnswers(orm: MikroORM): Promise<boolean> {
  const timeout = new Promise<false>((resolve) => setTimeout(() => resolve(false), READY_TIMEOUT_MS).unref());
  const probe = pingDatabase(freshEm(orm)).then(
    () => true,
    () => false,
  );
  return Promise.race([probe, timeout]);
}

/** Why the embedded database cannot serve now, or null while it does. */
function embeddedDown(embedded: EmbeddedDatabase): string | null {
  const { state } = embedded.health();
  if (state === 'restarting') return 'the embedded database stopped and is being started again.';
  if (state === 'failed' || state === 'closed') return 'the embedded database stopped and cannot be started again.';
  return null;
}

/** Why the primary cannot serve now (lost, and no writable server found yet), or null while it does. */
function primaryMissing(failover: FailoverWatch): string | null {
  return failover.serving ? null : 'the primary database was lost and no writable server has answered yet.';
}

/**
 * While the embedded database's thread is down, or while the primary is lost and no writable
 * server has been found (a failover under way), every request that may need the database is
 * answered 503 at once (with Retry-After), rather than waiting for a connection that cannot come.
 */
export function databaseGate(embedded: EmbeddedDatabase | null, failover: FailoverWatch | null = null): Middleware {
  if (!embedded && !failover) return (_ctx, next) => next();
  return async (_ctx, next) => {
    if ((embedded && embeddedDown(embedded)) || (failover && !failover.serving))
      throw new DomainError('unavailable', 'The database is unavailable; retry shortly.');
    return next();
  };
}
