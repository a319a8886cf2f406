import { afterAll, describe, expect, it } from 'vitest';
import { AUTOCTL, AUTOCTL_PG_BIN, QUICK_DETECTION, startAutoFormation, type AutoFormation } from './support/autoFailover.js';
import { errorLines } from './support/internalErrors.js';
import { firstAckAfterMs, longestGapMs, provisionWriterKey, startNoteWriters } from './support/noteWriters.js';
import { queryOnce } from './support/ownDatabase.js';
import { spawnService, type ServiceProcess } from './support/processes.js';
import { until } from './support/wait.js';

// A real HA engine beside the service: pg_auto_failover's monitor, a primary and a secondary on this
// machine, the service (a child process, as `npm start`) on the URL `pg_autoctl show uri` prints, and
// the primary's node killed under write load: pg_auto_failover promotes the secondary by itself.
// Required on CI (which installs postgresql-15-auto-failover and pg-auto-failover-cli), skipped
// elsewhere without them; run in the suite's embedded pass only, as it brings its own servers.
const TOOLS = Boolean(AUTOCTL && AUTOCTL_PG_BIN);
if (!TOOLS) console.warn('autoFailover.test.ts skipped: pg_autoctl (pg-auto-failover-cli, postgresql-15-auto-failover) not installed');
const RUN = !process.env.DATABASE_URL && (TOOLS || Boolean(process.env.CI));

const ADMIN = 'adm_autofailover_test_token_0123456789';
let formation: AutoFormation | undefined;
let service: ServiceProcess | undefined;
afterAll(async () => {
  await service?.stop();
  await formation?.stop();
}, 30_000);

describe.skipIf(!RUN)('pg_auto_failover', () => {
  it('follows the promotion pg_auto_failover makes by itself when the primary node is killed, losing no acknowledged write', async () => {
    expect(TOOLS, 'pg_autoctl and PostgreSQL 15 with pgautofailover are required on CI').toBe(true);
    // Its detection shortened (6 s to call the primary unhealthy, 10 s to give up demoting it), to keep the test short.
    formation = await startAutoFormation(QUICK_DETECTION);
    expect(formation.uri).toMatch(/^postgres:\/\/[^/]+,[^/]+\/wks\?.*target_session_attrs=read-write/);
    // The URL names no user: libpq's default is the system user, here given as PGUSER (node-postgres reads it too).
    // The writers are one key: its rate limit must not be what refuses them.
    service = await spawnService({ DATABASE_URL: formation.uri, PGUSER: 'postgres', ADMIN_TOKEN: ADMIN, RATE_LIMIT_MAX: '1000000' });
    // Requests that meet the failover fail and are logged; how many depends on timing.
    service.expectInternalErrors();
    const key = await provisionWriterKey(service.url, ADMIN);
    const writers = startNoteWriters(service.url, key, { count: 4 });
    await until(() => writers.report.acknowledged.length >= 40, 'writes acknowledged before the kill', 30_000);
    const killedAt = Date.now();
    formation.killPrimary();
    const promotedAt = await formation.waitForPromotion(45_000);
    const acked = writers.report.acknowledged.length;
    await until(() => writers.report.acknowledged.length >= acked + 40, 'writes acknowledged after the promotion', 30_000);
    const report = await writers.stop();
    const rows = await queryOnce<{ path: string; version: number }>(
      formation.nodeUrl('secondary'),
      `select path, version from memory_notes where path like 'failover/%'`,
    );
    const version = new Map(rows.map((r) => [r.path, Number(r.version)]));
    const lost = report.acknowledged.filter((p) => !version.has(p));
    const rewritten = [...version].filter(([, v]) => v !== 1).map(([p]) => p);
    const back = firstAckAfterMs(report.acknowledgedAt, promotedAt);
    console.log(
      `pg_auto_failover: promoted ${promotedAt - killedAt} ms after the kill; ${report.acknowledged.length} writes acknowledged ` +
        `(${report.replayed} replayed), statuses ${JSON.stringify(report.statuses)}, lost ${lost.length}, applied twice ${rewritten.length}, ` +
        `slowest ${Math.round(report.slowestMs)} ms, longest without a write ${longestGapMs(report.acknowledgedAt, killedAt, Date.now())} ms, ` +
        `first write ${back} ms after the promotion`,
    );
    // A request answered otherwise than 200 or 503: the service's error lines say why (they carry the request's id).
    if (report.badFailures.length) console.log(errorLines(service.output()).join('\n'));
    expect(report.badFailures).toEqual([]);
    expect(lost).toEqual([]);
    expect(rewritten).toEqual([]);
    expect(report.slowestMs).toBeLessThan(15_000);
    expect(back).not.toBeNull();
    expect(back!).toBeLessThan(10_000);
  }, 150_000);
});
