/**
 * MCP change listeners for the bench: `count` open `subscriptions/listen` streams (2026-07-28) on
 * one note, spread over keys of ten slots each, held by a process of their own (so their parsing
 * does not share the bench's core). While the bench measures, the process changes the watched note
 * through REST every CHANGE_MS and times, for each change, its arrival on every stream; on stop it
 * reports p50, p99 and the slowest arrival, what did not arrive, and the service's resident memory
 * per listener (its RSS with the listeners open, less before).
 */
import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { fileURLToPath } from 'node:url';
import { percentile } from './measure.js';
import { OPTIONS } from './options.js';
import { openSubscriptions } from './stall.js';
import { gql } from './tenant.js';
import type { Background, Bench } from './types.js';

const CHANGE_MS = 500;
const MODERN = '2026-07-28';
const envelope = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {} };

/** What the parent hands the listener process. */
interface Setup {
  service: string;
  pid: number | null;
  workspaceId: string;
  keys: string[];
  writer: string;
  path: string;
  count: number;
}

/** `n` keys of a new member of the bench's organization on its main workspace, reading memory (ten live slots each). */
async function listenerKeys(b: Bench, n: number): Promise<string[]> {
  const { createMember: member } = await gql<{ createMember: { id: string } }>(
    b.service,
    OPTIONS.adminToken,
    'mutation($o: ID!, $e: String!) { createMember(input: { organizationId: $o, email: $e, role: "editor" }) { id } }',
    { o: b.organizationId, e: `listener-${Date.now()}@example.com` },
  );
  const keys: string[] = [];
  for (let i = 0; i < n; i++) {
    const { createAgentKey: key } = await gql<{ createAgentKey: { key: string } }>(
      b.service,
      OPTIONS.adminToken,
      'mutation($m: ID!, $w: ID!) { createAgentKey(input: { memberId: $m, name: "listener", permissions: ["memory.read"], workspaceId: $w }) { key } }',
      { m: member.id, w: b.workspaceId },
    );
    keys.push(key.key);
  }
  return keys;
}

/** Starts `count` listeners in a child process (keys and the watched note made here); resolves once every stream is acknowledged. */
export async function mcpListeners(b: Bench, count: number): Promise<Background> {
  const keys = await listenerKeys(b, Math.ceil(count / 10));
  const path = 'bench/watched';
  const put = await fetch(`${b.service}/api/v1/workspaces/-/memory/note`, {
    method: 'PUT',
    headers: { ...b.auth, 'content-type': 'application/json' },
    body: JSON.stringify({ path, body: 'watched', kind: 'note', links: [], tags: [] }),
  });
  if (put.status >= 300) throw new Error(`the watched note: ${put.status} ${await put.text()}`);
  const setup: Setup = {
    service: b.service,
    pid: b.pid ?? null,
    workspaceId: b.workspaceId,
    keys,
    writer: b.auth.authorization,
    path,
    count,
  };
  const child = fork(fileURLToPath(import.meta.url), [JSON.stringify(setup)], { execArgv: process.execArgv });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  let ready = '';
  await new Promise<void>((resolve, reject) => {
    child.once('message', (text) => resolve(void (ready = messageText(text))));
    child.once('exit', (code) => reject(new Error(`the listeners exited with ${code}`)));
  });
  let note = '';
  return {
    note: () => `${ready}; ${note}`,
    async stop() {
      const answered = new Promise<void>((resolve) => child.once('message', (text) => resolve(void (note = messageText(text)))));
      child.send('stop');
      await Promise.race([answered, exited]);
      await exited;
      // The service lets go of every stream whose client left (within a second).
      await new Promise((r) => setTimeout(r, 1_000));
      const left = await openSubscriptions(b.service).catch(() => NaN);
      note += `; ${left} of its subscriptions still open 1 s after the listeners left`;
    },
  };
}

/** The service's resident memory in bytes (Linux), or null. */
function rss(pid: number | null): number | null {
  if (!pid) return null;
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : null;
}

/**
 * Opens one listen stream; `heard()` on each resources/updated; resolves once it is acknowledged.
 * Plain node:http and a byte search rather than fetch and a text decoder: the listeners share the
 * machine's cores with the service they measure, so their own cost is kept small.
 */
function listen(s: Setup, key: string, uri: string, heard: () => void, id: number): Promise<{ abort(): void }> {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'subscriptions/listen',
    params: { notifications: { resourceSubscriptions: [uri] }, _meta: envelope },
  });
  return new Promise((resolve, reject) => {
    const req = request(`${s.service}/mcp`, {
      method: 'POST',
      agent: false,
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': MODERN,
        'mcp-method': 'subscriptions/listen',
      },
    });
    req.on('error', reject);
    req.on('response', (res) => {
      if (!res.headers['content-type']?.startsWith('text/event-stream')) {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => reject(new Error(`listen ${res.statusCode}: ${text}`)));
        return;
      }
      let acknowledged = false;
      // The end of the previous chunk, so a marker split across two chunks is still found.
      let tail: Buffer = Buffer.alloc(0);
      res.on('data', (chunk: Buffer) => {
        const data = tail.length ? Buffer.concat([tail, chunk]) : chunk;
        if (!acknowledged && data.includes(ACKNOWLEDGED)) {
          acknowledged = true;
          resolve({ abort: () => req.destroy() });
        }
        for (let at = data.indexOf(UPDATED); at >= 0; at = data.indexOf(UPDATED, at + UPDATED.length)) heard();
        // Shorter than a marker: it holds no whole one (each was counted above), only a beginning.
        tail = data.subarray(Math.max(0, data.length - UPDATED.length + 1));
      });
      res.on('error', () => undefined);
    });
    req.end(body);
  });
}

const ACKNOWLEDGED = Buffer.from('notifications/subscriptions/acknowledged');
const UPDATED = Buffer.from('notifications/resources/updated');

async function child(s: Setup): Promise<void> {
  const uri = `wks://workspaces/${s.workspaceId}/notes/${s.path}`;
  const before = rss(s.pid);
  let change: { at: number; arrivals: number[] } | null = null;
  const streams: { abort(): void }[] = [];
  for (let i = 0; i < s.count; i += 50) {
    const batch = Array.from({ length: Math.min(50, s.count - i) }, (_, j) =>
      listen(s, s.keys[Math.floor((i + j) / 10)], uri, () => change?.arrivals.push(performance.now() - change.at), i + j),
    );
    streams.push(...(await Promise.all(batch)));
  }
  await new Promise((r) => setTimeout(r, 1000));
  const after = rss(s.pid);
  const perListener =
    before !== null && after !== null ? `${Math.round((after - before) / s.count / 1024)} KiB of the service's RSS per listener` : '';
  process.send!(`${s.count} listeners open${perListener ? `, ${perListener}` : ''}`);
  // The listeners' own CPU while the PUTs run: on one machine it is taken from the service and the database.
  const cpu = process.cpuUsage();
  const since = performance.now();
  const latencies: number[] = [];
  let missed = 0;
  let changes = 0;
  let stopping = false;
  process.on('message', () => (stopping = true));
  while (!stopping) {
    change = { at: performance.now(), arrivals: [] };
    const put = await fetch(`${s.service}/api/v1/workspaces/-/memory/note`, {
      method: 'PUT',
      headers: { authorization: s.writer, 'content-type': 'application/json' },
      body: JSON.stringify({ path: s.path, body: `change ${changes}`, kind: 'note', links: [], tags: [] }),
    });
    await put.arrayBuffer();
    changes++;
    const deadline = performance.now() + 5_000;
    while (change.arrivals.length < s.count && performance.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    latencies.push(...change.arrivals);
    missed += s.count - change.arrivals.length;
    const wait = change.at + CHANGE_MS - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }
  latencies.sort((a, b) => a - b);
  const ms = (x: number) => `${Math.round(x)} ms`;
  process.send!(
    `${changes} changes to the watched note, each to ${s.count} listeners: arrival p50 ${ms(percentile(latencies, 0.5))}, p99 ` +
      `${ms(percentile(latencies, 0.99))}, max ${ms(latencies[latencies.length - 1] ?? 0)}; ${missed} not arrived within 5 s; ` +
      `the listeners' process used ${coresSince(cpu, since)} of a core meanwhile`,
  );
  for (const stream of streams) stream.abort();
  process.exit(0);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await child(JSON.parse(process.argv[2]) as Setup);

/** The share of one core this process used since `cpu` was read at `since` (performance.now()), as a percentage. */
function coresSince(cpu: NodeJS.CpuUsage, since: number): string {
  const { user, system } = process.cpuUsage(cpu);
  return `${Math.round((user + system) / 10 / (performance.now() - since))} %`;
}

/** A child's message as text: the listeners send strings. */
function messageText(message: unknown): string {
  return typeof message === 'string' ? message : JSON.stringify(message);
}
