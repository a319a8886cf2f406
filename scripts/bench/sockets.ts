/**
 * WebSocket loads: hostile clients that try to hold sockets on /graphql (a key's, and anonymous
 * ones that never send connection_init; hostile.ts, in a process of their own), and a console's
 * connection timed from open to connection_ack.
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { percentile } from './measure.js';
import { log, OPTIONS } from './options.js';
import { Tenant } from './tenant.js';
import type { Background, Bench, ConnectLoad, Row } from './types.js';

/** A key of a fresh organization, with one read permission (the finding's viewer key). */
async function hostileKey(b: Bench): Promise<string> {
  const tenant = await Tenant.create(b.service, OPTIONS.adminToken, `Hostile ${Date.now()}`, 'free');
  const { auth } = await tenant.workspace('Hostile', ['changelog.read']);
  return auth.authorization.slice('Bearer '.length);
}

/**
 * Starts `keyed` hostile clients of a fresh key and `anonymous` ones in a child process, holding
 * what they get or (`reconnect`) opening a new socket a second after each close; resolves once
 * each has tried once.
 */
export async function hostileSockets(b: Bench, keyed: number, anonymous: number, reconnect: boolean): Promise<Background> {
  const key = await hostileKey(b);
  const url = `${b.service.replace(/^http/, 'ws')}/graphql`;
  const args = [url, key, String(keyed), String(anonymous), reconnect ? 'reconnect' : 'hold'];
  const child = fork(fileURLToPath(new URL('./hostile.ts', import.meta.url)), args);
  const exited = new Promise((resolve) => child.once('exit', resolve));
  await new Promise<void>((resolve, reject) => {
    child.once('message', () => resolve());
    child.once('exit', (code) => reject(new Error(`the hostile clients exited with ${code}`)));
  });
  let note = '';
  return {
    note: () => note,
    async stop() {
      const answered = new Promise<void>((resolve) => child.once('message', (text) => resolve(void (note = text as string))));
      child.send('stop');
      await Promise.race([answered, exited]);
      await exited;
    },
  };
}

/** One console connection: open, connection_init with the token, connection_ack; resolves with the milliseconds, or null if refused. */
function consoleConnect(base: string, token: string): Promise<number | null> {
  const started = performance.now();
  const ws = new WebSocket(`${base.replace(/^http/, 'ws')}/graphql`, 'graphql-transport-ws');
  return new Promise((resolve) => {
    ws.on('error', () => undefined);
    ws.on('open', () => ws.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${token}` } })));
    ws.on('message', (data) => {
      if (!(data as Buffer).toString().includes('"connection_ack"')) return;
      resolve(performance.now() - started);
      ws.close(1000);
    });
    ws.on('close', () => resolve(null));
  });
}

/** Times `count` console connections, one every `everyMs` (with the load's background running), exact percentiles. */
export async function connectLatency(scenario: string, label: string, base: string, load: ConnectLoad): Promise<Row> {
  const background = await load.background?.();
  const times: number[] = [];
  let refused = 0;
  const started = performance.now();
  try {
    for (let i = 0; i < load.count; i++) {
      const wait = started + i * load.everyMs - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      const ms = await consoleConnect(base, load.token);
      if (ms === null) refused++;
      else times.push(ms);
    }
  } finally {
    await background?.stop();
  }
  const seconds = (performance.now() - started) / 1000;
  times.sort((a, c) => a - c);
  const at = (p: number) => (times.length ? percentile(times, p) : 0);
  const note = [`${times.length}/${load.count} acked`, background?.note()].filter(Boolean).join('; ');
  const row: Row = {
    scenario,
    variant: label,
    connections: 1,
    rps: Math.round(load.count / seconds), // the pace chosen, not a capacity
    p50: at(0.5),
    p95: at(0.95),
    p97_5: at(0.975),
    p99: at(0.99),
    errors: refused,
    note,
  };
  log(
    `${scenario} / ${label}: ${load.count} connections, p50 ${row.p50} ms, p95 ${row.p95} ms, p99 ${row.p99} ms, refused ${refused}, ${note}`,
  );
  return row;
}
