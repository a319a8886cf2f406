import type { MikroORM } from '@mikro-orm/postgresql';
import { freshEm } from '../db/orm.js';
import { sql } from '../db/sql.js';
import { DomainError } from '../errors.js';
import type { Middleware } from '../http/middleware.js';

const READY_TIMEOUT_MS = 2000;

/**
 * `/healthz`: the process answers (with its uptime and memory). `/readyz`: the database answers
 * within 2 s and no migration is pending; otherwise a 503 naming which of the two, never the
 * database's own error text (hosts, users).
 */
export function health(orm: MikroORM): Middleware {
  return async (ctx, next) => {
    if (ctx.path === '/healthz') {
      const { rss, heapUsed } = process.memoryUsage();
      ctx.body = { status: 'ok', uptimeSeconds: Math.round(process.uptime()), rssBytes: rss, heapUsedBytes: heapUsed };
      return;
    }
    if (ctx.path !== '/readyz') return next();
    if (!(await databaseAnswers(orm))) throw new DomainError('unavailable', 'Not ready: the database did not answer within 2 s.');
    if ((await orm.getMigrator().getPendingMigrations()).length) throw new DomainError('unavailable', 'Not ready: migrations are pending.');
    ctx.body = { status: 'ready', database: 'ok', migrations: 'applied' };
  };
}

async function databaseAnswers(orm: MikroORM): Promise<boolean> {
  const timeout = new Promise<false>((resolve) => setTimeout(() => resolve(false), READY_TIMEOUT_MS).unref());
  const probe = sql(freshEm(orm), 'select 1').then(
    () => true,
    () => false,
  );
  return Promise.race([probe, timeout]);
}
