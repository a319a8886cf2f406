import { afterAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../src/server.js';
import { PG_BIN, startFailoverPair, type FailoverPair } from './support/failoverPair.js';
import { testLogger, watchOf } from './support/internalErrors.js';
import { firstAckAfterMs, longestGapMs, provisionWriterKey, startNoteWriters, type WriteReport } from './support/noteWriters.js';
import { queryOnce } from './support/ownDatabase.js';
import { TcpProxy } from './support/tcpProxy.js';
import { until } from './support/wait.js';
import { freePort } from './support/processes.js';
import { newPgClient, pgConfigOf } from '../src/db/hostPicking.js';

// The primary fails and nothing is lost. Private clusters (initdb, pg_basebackup, pg_ctl on free
// ports): a primary `a` and its synchronous standby `b`. Required on CI, skipped (saying so)
// elsewhere without PostgreSQL's server binaries. They bring their own servers, so they run once,
// in the suite's pass on the embedded database (no DATABASE_URL), not again on every server.
if (!PG_BIN) console.warn('failover.test.ts skipped: no PostgreSQL server binaries (initdb, pg_ctl, pg_basebackup) found');
const RUN = !process.env.DATABASE_URL && (Boolean(PG_BIN) || Boolean(process.env.CI));

const ADMIN = 'adm_failover_test_token_0123456789';
const METRICS = 'failover_metrics_token_0123456789';
const pairs: FailoverPair[] = [];
const servers: RunningServer[] = [];
const proxies: TcpProxy[] = [];
afterAll(async () => {
  for (const server of servers) await server.close().catch(() => undefined);
  for (const proxy of proxies) await proxy.close();
  for (const pair of pairs) pair.stop();
});

/** A fresh pair (required on CI), kept for cleaning up. */
async function pair(): Promise<FailoverPair> {
  expect(PG_BIN, 'PostgreSQL server binaries (initdb, pg_ctl, pg_basebackup) are required on CI').toBeDefined();
  const made = await startFailoverPair();
  pairs.push(made);
  return made;
}

/** The service in process on `databaseUrl`; requests that meet the failover fail and are logged (how many depends on timing). */
async function serviceOn(databaseUrl: string): Promise<RunningServer> {
  const logger = testLogger();
  watchOf(logger).expect();
  const server = await startServer({
    port: 0,
    host: '127.0.0.1',
    databaseUrl,
    adminToken: ADMIN,
    metricsToken: METRICS,
    // The writers are one key: its rate limit must not be what refuses them.
    rateLimit: { max: 1_000_000, windowSeconds: 60 },
    logger,
    embeddingWorker: false,
    webhookDispatcher: false,
  });
  servers.push(server);
  return server;
}

/** The service behind one stable address: a TCP proxy to the pair's primary `a` (repointed by the test), kept for cleaning up. */
async function serviceBehindProxy(servers: FailoverPair): Promise<{ proxy: TcpProxy; server: RunningServer }> {
  const proxy = await TcpProxy.start({ host: '127.0.0.1', port: servers.ports.a });
  proxies.push(proxy);
  return { proxy, server: await serviceOn(`postgres://postgres@127.0.0.1:${proxy.port}/postgres`) };
}

/** A metric's value from /metrics (0 when absent). */
async function metric(server: RunningServer, name: string): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${METRICS}` } })).text();
  return Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
}

/** Every acknowledged write is on `url` exactly once (its note at version 1: a retry that applied it again would make it 2). */
async function checkWrites(url: string, report: WriteReport): Promise<{ lost: string[]; rewritten: string[] }> {
  const rows = await queryOnce<{ path: string; version: number }>(
    url,
    `select path, version from memory_notes where path like 'failover/%'`,
  );
  const version = new Map(rows.map((r) => [r.path, Number(r.version)]));
  return {
    lost: report.acknowledged.filter((p) => !version.has(p)),
    rewritten: [...version].filter(([, v]) => v !== 1).map(([p]) => p),
  };
}

describe.skipIf(!RUN)('failover', () => {
  it('connects as libpq does on a multi-host URL: the first host of the kind target_session_attrs names', async () => {
    const servers = await pair();
    /** The port of the server a new connection on `url` keeps. */
    const reached = async (url: string) => {
      const client = newPgClient(pgConfigOf(url));
      await client.connect();
      try {
        return Number((await client.query<{ port: number }>('select inet_server_port() as port')).rows[0].port);
      } finally {
        await client.end();
      }
    };
    const { a, b } = servers.ports;
    expect(await reached(servers.bothUrl('read-write'))).toBe(a);
    expect(await reached(servers.bothUrl('any'))).toBe(a);
    expect(await reached(servers.bothUrl('standby'))).toBe(b);
    expect(await reached(servers.bothUrl('prefer-standby'))).toBe(b);
    // A host that refuses connections is passed over; with no host of the kind, the error names each host and why.
    const dead = await freePort();
    expect(await reached(`postgres://postgres@127.0.0.1:${dead},127.0.0.1:${b},127.0.0.1:${a}/postgres?target_session_attrs=primary`)).toBe(
      a,
    );
    await expect(reached(`postgres://postgres@127.0.0.1:${dead},127.0.0.1:${b}/postgres?target_session_attrs=read-write`)).rejects.toThrow(
      new RegExp(
        `no host serves target_session_attrs=read-write: 127\\.0\\.0\\.1:${dead}: .*ECONNREFUSED.*; 127\\.0\\.0\\.1:${b}: a standby, not read-write`,
      ),
    );
  }, 60_000);

  it('follows a promotion on a two-host URL: 503 with Retry-After meanwhile, no acknowledged write lost or applied twice', async () => {
    const servers = await pair();
    const server = await serviceOn(servers.bothUrl('read-write'));
    const key = await provisionWriterKey(server.url, ADMIN);
    const writers = startNoteWriters(server.url, key, { count: 4 });
    await until(() => writers.report.acknowledged.length >= 40, 'writes acknowledged before the crash', 30_000);
    const crashedAt = Date.now();
    servers.crash('a');
    await until(async () => (await fetch(`${server.url}/readyz`)).status === 503, '/readyz saying not ready after the crash', 15_000);
    const promotedAt = Date.now();
    servers.promote('b');
    const acked = writers.report.acknowledged.length;
    await until(() => writers.report.acknowledged.length >= acked + 40, 'writes acknowledged after the promotion', 30_000);
    const report = await writers.stop();
    const { lost, rewritten } = await checkWrites(servers.url('b'), report);
    const back = firstAckAfterMs(report.acknowledgedAt, promotedAt);
    console.log(
      `failover: ${report.sent} requests, ${report.acknowledged.length} writes acknowledged (${report.replayed} replayed), statuses ` +
        `${JSON.stringify(report.statuses)}, lost ${lost.length}, applied twice ${rewritten.length}, slowest ${Math.round(report.slowestMs)} ms, ` +
        `longest without a write ${longestGapMs(report.acknowledgedAt, crashedAt, Date.now())} ms, first write ${back} ms after the promotion`,
    );
    expect(report.badFailures).toEqual([]);
    expect(lost).toEqual([]);
    expect(rewritten).toEqual([]);
    expect(report.slowestMs).toBeLessThan(15_000);
    expect(back).not.toBeNull();
    expect(back!).toBeLessThan(10_000);
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
    expect(await metric(server, 'wks_db_failovers_total')).toBe(1);
  }, 90_000);

  it('behind one stable address: drops every connection to the old primary when it turns read-only, and the next ones work', async () => {
    const servers = await pair();
    const { proxy, server } = await serviceBehindProxy(servers);
    const key = await provisionWriterKey(server.url, ADMIN);
    const writers = startNoteWriters(server.url, key, { count: 4 });
    await until(() => writers.report.acknowledged.length >= 40, 'writes acknowledged before the switch', 30_000);
    // A planned switchover as a managed database does it: the old primary turns read-only, the standby is promoted, the address repointed.
    await queryOnce(servers.url('a'), `alter system set default_transaction_read_only = on`);
    await queryOnce(servers.url('a'), 'select pg_reload_conf()');
    servers.promote('b');
    proxy.repoint({ host: '127.0.0.1', port: servers.ports.b });
    const promotedAt = Date.now();
    const acked = writers.report.acknowledged.length;
    await until(() => writers.report.acknowledged.length >= acked + 40, 'writes acknowledged after the switch', 30_000);
    const report = await writers.stop();
    // No connection of the service is left open to the old primary (the old primary's own backends may outlive their
    // sockets: one waiting for a synchronous standby that was promoted does not notice its client left).
    const left = proxy.openTo(servers.ports.a);
    const { lost, rewritten } = await checkWrites(servers.url('b'), report);
    expect(left).toBe(0);
    expect(report.badFailures).toEqual([]);
    expect(lost).toEqual([]);
    expect(rewritten).toEqual([]);
    expect(firstAckAfterMs(report.acknowledgedAt, promotedAt)!).toBeLessThan(10_000);
    expect(await metric(server, 'wks_db_failovers_total')).toBe(1);
  }, 90_000);

  it('cuts a COMMIT left waiting on the old primary once its address reaches a new one, though no statement fails', async () => {
    const servers = await pair();
    const { proxy, server } = await serviceBehindProxy(servers);
    const key = await provisionWriterKey(server.url, ADMIN);
    const put = (path: string) =>
      fetch(`${server.url}/api/v1/workspaces/-/memory/note`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ path, body: 'x', kind: 'note', links: [], tags: [] }),
      });
    expect((await put('before')).status).toBe(200);
    // The synchronous standby is promoted while the old primary still takes writes: a COMMIT there now waits for
    // ever, with no error for the failover watch to hear. Then the address is repointed.
    servers.promote('b');
    const sent = Date.now();
    const stuck = put('stuck');
    await new Promise((r) => setTimeout(r, 1_000));
    proxy.repoint({ host: '127.0.0.1', port: servers.ports.b });
    // The watch's periodic probe (every 5 s) finds another primary behind the address and cuts what waits on the old one.
    const answer = await stuck;
    expect(answer.status).toBe(503);
    expect(Date.now() - sent).toBeLessThan(10_000);
    expect((await put('after')).status).toBe(200);
    expect(proxy.openTo(servers.ports.a)).toBe(0);
    expect(await metric(server, 'wks_db_failovers_total')).toBe(1);
  }, 60_000);

  it('never acknowledges a write whose COMMIT got no answer, and answers its retry with the first outcome', async () => {
    const servers = await pair();
    const { proxy, server } = await serviceBehindProxy(servers);
    const key = await provisionWriterKey(server.url, ADMIN, ['changelog.update', 'changelog.read']);
    const put = () =>
      fetch(`${server.url}/api/v1/workspaces/-/memory/note`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': 'unknown-1' },
        body: JSON.stringify({ path: 'unknown/1', body: 'once', kind: 'note', links: [], tags: [] }),
      });
    proxy.loseNextCommitAnswer();
    const first = await put();
    expect(proxy.commitsCut).toBe(1);
    expect(first.status).toBe(503);
    expect(first.headers.get('retry-after')).toBe('1');
    expect((await first.json()).error).toMatchObject({ code: 'unavailable', status: 503 });
    // It did commit (the server answered; the answer was lost): the retry gets that outcome, and nothing is written again.
    const versions = () => queryOnce<{ version: number }>(servers.url('a'), `select version from memory_notes where path = 'unknown/1'`);
    expect(await versions()).toEqual([{ version: 1 }]);
    const retry = await put();
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(await retry.json()).toMatchObject({ path: 'unknown/1', body: 'once' });
    expect(await versions()).toEqual([{ version: 1 }]);

    // Without a key: the same lost answer is a 503 too, never a 201, though the entry was written.
    proxy.loseNextCommitAnswer();
    const entry = await fetch(`${server.url}/api/v1/workspaces/-/changelog`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'Unknown outcome', markdown: 'x', status: 'draft', tags: [], published_at: null }),
    });
    expect(proxy.commitsCut).toBe(2);
    expect(entry.status).toBe(503);
    expect(entry.headers.get('retry-after')).toBe('1');
    // A dropped connection to a primary that still serves is not a failover.
    expect(await metric(server, 'wks_db_failovers_total')).toBe(0);
  }, 60_000);
});
