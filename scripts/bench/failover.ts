/**
 * The failover drills of the bench's `failover` scenario: the service as `npm start` runs it (a
 * child process) on libpq's two-host URL, four agents writing notes (each write with its path as
 * Idempotency-Key, a 503 retried with the same key), and the primary lost under them. `promote`: a
 * primary and its synchronous standby (initdb, pg_basebackup), the primary crashed (`pg_ctl stop -m
 * immediate`) and the standby promoted by hand two seconds later, as an operator would.
 * `pg-auto-failover`: a monitor, a primary and a secondary, the primary's node killed, and
 * pg_auto_failover promoting the secondary by itself with its default timings.
 */
import { randomBytes } from 'node:crypto';
import { startAutoFormation } from '../../test/support/autoFailover.js';
import { startFailoverPair } from '../../test/support/failoverPair.js';
import { firstAckAfterMs, longestGapMs, provisionWriterKey, startNoteWriters, type WriteReport } from '../../test/support/noteWriters.js';
import { queryOnce } from '../../test/support/ownDatabase.js';
import { spawnService } from '../../test/support/processes.js';
import { percentile } from './measure.js';
import { log } from './options.js';
import type { DrillRow } from './types.js';

/** Steady writing before the primary is lost, and after the first write on the new one. */
const STEADY_MS = 10_000;
/** How long after the crash the operator promotes the standby (the plain drill). */
const OPERATOR_MS = 2_000;

/** What losing the primary did: when it was lost, when the new one took writes, and where to count the notes. */
interface Loss {
  lostAt: number;
  promotedAt: number;
  checkUrl: string;
}

/** The plain drill: a crash, and `pg_ctl promote` on the synchronous standby two seconds later. */
export async function promotionDrill(): Promise<DrillRow> {
  const pair = await startFailoverPair();
  try {
    return await drill(pair.bothUrl('read-write'), {}, async () => {
      const lostAt = Date.now();
      pair.crash('a');
      await new Promise((r) => setTimeout(r, OPERATOR_MS));
      pair.promote('b');
      return { lostAt, promotedAt: Date.now(), checkUrl: pair.url('b') };
    });
  } finally {
    pair.stop();
  }
}

/** pg_auto_failover with its default timings: the primary's node killed, the secondary promoted by the monitor. */
export async function autoFailoverDrill(): Promise<DrillRow> {
  const formation = await startAutoFormation();
  try {
    // Its URL names no user: libpq's default is the system user, given here as PGUSER.
    return await drill(formation.uri, { PGUSER: 'postgres' }, async () => {
      const lostAt = Date.now();
      formation.killPrimary();
      const promotedAt = await formation.waitForPromotion(180_000);
      log(
        `failover: pg_auto_failover promoted the secondary ${((promotedAt - lostAt) / 1000).toFixed(1)} s after the primary's node was killed`,
      );
      return { lostAt, promotedAt, checkUrl: formation.nodeUrl('secondary') };
    });
  } finally {
    await formation.stop();
  }
}

/** Runs the writers on a service started on `databaseUrl`, loses the primary with `lose`, and reports. */
async function drill(databaseUrl: string, env: Record<string, string>, lose: () => Promise<Loss>): Promise<DrillRow> {
  const adminToken = `adm_failover_${randomBytes(8).toString('hex')}`;
  // The drill's writers are one key: its rate limit would refuse them (429) long before the database is the limit.
  const service = await spawnService({ ...env, DATABASE_URL: databaseUrl, ADMIN_TOKEN: adminToken, RATE_LIMIT_MAX: '1000000' });
  try {
    const key = await provisionWriterKey(service.url, adminToken);
    const started = Date.now();
    const writers = startNoteWriters(service.url, key, { count: 4 });
    await new Promise((r) => setTimeout(r, STEADY_MS));
    const loss = await lose();
    const back = Date.now();
    while (writers.report.acknowledgedAt.every((t) => t < loss.promotedAt) && Date.now() - back < 60_000)
      await new Promise((r) => setTimeout(r, 100));
    await new Promise((r) => setTimeout(r, STEADY_MS));
    const report = await writers.stop();
    return figures(report, loss, started, await twiceOrLost(loss.checkUrl, report));
  } finally {
    await service.stop();
  }
}

/** Acknowledged writes missing on the new primary, and notes written more than once (a version above 1). */
async function twiceOrLost(url: string, report: WriteReport): Promise<{ lost: number; twice: number }> {
  const rows = await queryOnce<{ path: string; version: number }>(
    url,
    `select path, version from memory_notes where path like 'failover/%'`,
  );
  const version = new Map(rows.map((r) => [r.path, Number(r.version)]));
  return { lost: report.acknowledged.filter((p) => !version.has(p)).length, twice: [...version.values()].filter((v) => v !== 1).length };
}

/** The drill's row, and its figures in the log. */
function figures(report: WriteReport, loss: Loss, started: number, check: { lost: number; twice: number }): DrillRow {
  const ended = Date.now();
  const sorted = [...report.durationsMs].sort((x, y) => x - y);
  const back = firstAckAfterMs(report.acknowledgedAt, loss.promotedAt);
  const gap = longestGapMs(report.acknowledgedAt, started, ended);
  const text =
    `${report.acknowledged.length} writes acknowledged, ${check.lost} lost, ${check.twice} applied twice, ` +
    `${report.badFailures.length} 5xx without Retry-After, statuses ${JSON.stringify(report.statuses)}, ` +
    `longest without a write ${(gap / 1000).toFixed(1)} s, slowest request ${Math.round(report.slowestMs)} ms, ` +
    `first write ${back === null ? 'never' : `${back} ms`} after the promotion (${((loss.promotedAt - loss.lostAt) / 1000).toFixed(1)} s after the loss)`;
  log(`failover: ${text}`);
  return {
    rps: Math.round(report.acknowledged.length / ((ended - started) / 1000)),
    p50: Math.round(percentile(sorted, 0.5)),
    p95: Math.round(percentile(sorted, 0.95)),
    p97_5: null,
    p99: Math.round(percentile(sorted, 0.99)),
    errors: report.badFailures.length + check.lost + check.twice,
    note: text,
  };
}
