import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../src/server.js';
import { freePort } from './support/processes.js';
import { until } from './support/wait.js';
import { testLogger, watchOf } from './support/internalErrors.js';

// A private PostgreSQL that this test starts, stops and restarts itself (initdb into a temporary
// directory, its own port). Skipped, saying so, where no PostgreSQL server binaries exist (except on CI).
const BIN = ['/usr/lib/postgresql/18/bin', '/usr/lib/postgresql/17/bin', '/usr/lib/postgresql/16/bin', '/usr/lib/postgresql/15/bin'].find(
  (d) => existsSync(join(d, 'pg_ctl')),
);
const asRoot = process.getuid?.() === 0;
if (!BIN) console.warn('faults.test.ts skipped: no PostgreSQL server binaries (initdb, pg_ctl) found');

const dir = BIN ? mkdtempSync(join(tmpdir(), 'wks-fault-')) : '';
const data = join(dir, 'pgdata');
let port = 0;
const run = (cmd: string, args: string[]) =>
  execFileSync(asRoot ? 'runuser' : join(BIN!, cmd), asRoot ? ['-u', 'postgres', '--', join(BIN!, cmd), ...args] : args, {
    stdio: 'pipe',
    timeout: 60_000,
  });
const pgStart = () =>
  run('pg_ctl', ['-D', data, '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1`, '-l', join(dir, 'log'), '-w', 'start']);
/** The private server's log, for a start that failed. */
const logTail = () => {
  try {
    return readFileSync(join(dir, 'log'), 'utf8').split('\n').slice(-15).join('\n');
  } catch {
    return '(no log)';
  }
};
/**
 * The first start, on a port free a moment before: a port picked at random (or even a free one)
 * can be taken meanwhile by a client connection of another test file, so a failed start tries
 * another port, twice, then fails with the server's log.
 */
async function pgFirstStart(): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    port = await freePort();
    try {
      pgStart();
      return;
    } catch (error) {
      if (attempt >= 3) throw new Error(`${(error as Error).message}\n${logTail()}`, { cause: error });
    }
  }
}
const pgStop = () => run('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);

let server: RunningServer | null = null;
afterAll(async () => {
  await server?.close().catch(() => undefined);
  if (BIN) {
    try {
      pgStop();
    } catch {
      // already stopped
    }
    rmSync(dir, { recursive: true, force: true });
  }
});

// On CI (CI set, as .ci/run does) the binaries are required: without them the test fails instead of skipping.
describe.skipIf(!BIN && !process.env.CI)('database restart under write load', () => {
  it('answers 503 envelopes while the database is down, recovers by itself, and loses no acknowledged write', async () => {
    expect(BIN, 'PostgreSQL server binaries (initdb, pg_ctl) are required on CI').toBeDefined();
    chmodSync(dir, 0o777);
    run('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8']);
    await pgFirstStart();
    const admin = 'adm_fault_test_token_0123456789';
    const logger = testLogger();
    // Requests that meet the outage fail, and each failure is logged: how many depends on timing.
    watchOf(logger).expect();
    server = await startServer({
      port: 0,
      host: '127.0.0.1',
      databaseUrl: `postgres://postgres@127.0.0.1:${port}/postgres`,
      adminToken: admin,
      logger,
      embeddingWorker: false,
      webhookDispatcher: false,
    });
    const gql = async (query: string, variables = {}) =>
      (
        await (
          await fetch(`${server!.url}/graphql`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${admin}` },
            body: JSON.stringify({ query, variables }),
          })
        ).json()
      ).data;
    const org = (await gql('mutation { createOrganization(input: { name: "F", plan: "enterprise" }) { id } }')).createOrganization;
    const ws = (await gql('mutation($o: ID!) { createWorkspace(input: { organizationId: $o, name: "W" }) { id } }', { o: org.id }))
      .createWorkspace;
    const member = (
      await gql('mutation($o: ID!) { createMember(input: { organizationId: $o, email: "f@x.io", role: "owner" }) { id } }', { o: org.id })
    ).createMember;
    const key = (
      await gql(
        'mutation($m: ID!, $w: ID!) { createAgentKey(input: { memberId: $m, name: "f", permissions: ["memory.write", "memory.read"], workspaceId: $w ' +
          '}) { key } }',
        { m: member.id, w: ws.id },
      )
    ).createAgentKey.key;

    const acknowledged: string[] = [];
    const statuses = new Map<number, number>();
    let stop = false;
    let i = 0;
    const writer = async () => {
      while (!stop) {
        const path = `load/${i++}`;
        const started = Date.now();
        const res = await fetch(`${server!.url}/api/v1/workspaces/-/memory/note`, {
          method: 'PUT',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ path, body: 'x', kind: 'note', links: [], tags: [] }),
          signal: AbortSignal.timeout(20_000),
        });
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        const body = await res.json();
        expect(Date.now() - started).toBeLessThan(20_000); // never hangs
        if (res.status === 200) acknowledged.push(path);
        else {
          expect([500, 503]).toContain(res.status);
          expect(body.error.status).toBe(res.status);
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    const writers = [writer(), writer(), writer()];
    // Conditions, not durations: writes land before the stop, writers meet the outage, and more land after the restart.
    await until(() => acknowledged.length >= 20, 'writes acknowledged before the stop', 30_000);
    pgStop();
    await until(() => (statuses.get(503) ?? 0) >= 3, 'writes refused with 503 while the database is down', 30_000);
    const down = await fetch(`${server.url}/readyz`);
    expect(down.status).toBe(503);
    const restartedAt = Date.now();
    pgStart();
    let recoveredAfter = -1;
    while (Date.now() - restartedAt < 30_000) {
      const ok = await fetch(`${server.url}/api/v1/workspaces/-/memory/note?path=load/0`, { headers: { authorization: `Bearer ${key}` } });
      if (ok.status === 200) {
        recoveredAfter = Date.now() - restartedAt;
        break;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    const before = acknowledged.length;
    await until(() => acknowledged.length >= before + 20, 'writes acknowledged after the restart', 30_000);
    stop = true;
    await Promise.all(writers);
    expect(recoveredAfter).toBeGreaterThanOrEqual(0);
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
    const stored = new Set(
      (await server.orm.em.fork().getConnection().execute('select path from memory_notes where workspace_id = ?', [ws.id])).map((r) =>
        String(r.path),
      ),
    );
    const lost = acknowledged.filter((p) => !stored.has(p));
    console.log(
      `faults: ${i} writes sent, ${acknowledged.length} acknowledged, statuses ${JSON.stringify(Object.fromEntries(statuses))}, lost ${lost.length}, ` +
        `recovered ${recoveredAfter} ms after the database came back`,
    );
    expect(statuses.get(503) ?? 0).toBeGreaterThan(0);
    expect(lost).toEqual([]);
  }, 120_000);
});
