/**
 * What another agent does while the stall scenario's agent reads a note every 10 ms: three 10 MiB
 * uploads at once, twenty 16 KB note PUTs, or a 50 MB archive import, each with the service's
 * worst event-loop delay meanwhile (from its /metrics) in the note column.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { png } from '../../test/support/images.js';
import { importInBackground } from './archives.js';
import type { Bench, SequentialBackground } from './types.js';

/** The bearer token the bench's service serves /metrics to. */
export const METRICS_TOKEN = `met_bench_${randomBytes(8).toString('hex')}`;

/**
 * The service's worst event-loop delay since the last scrape, in ms (prom-client resets its
 * histogram on every scrape, so scraping once before the work starts and once after it reads the
 * worst delay of the work alone).
 */
async function eventLoopMaxMs(base: string): Promise<number> {
  const res = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  const text = await res.text();
  const line = /^wks_nodejs_eventloop_lag_max_seconds (\S+)$/m.exec(text);
  return line ? Number(line[1]) * 1000 : NaN;
}

/**
 * The full-text indexes the service holds, from /metrics: items and bytes, and the bytes that
 * makes per 100,000 items (the figure docs/benchmarks.md states).
 */
export async function searchIndexMemory(base: string): Promise<string> {
  const res = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  const text = await res.text();
  const gauge = (name: string) => Number(new RegExp(`^wks_search_index_${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
  const items = gauge('items');
  const mb = gauge('bytes') / 1024 / 1024;
  return `index ${items} items, ${mb.toFixed(0)} MB (${((mb * 100_000) / items).toFixed(0)} MB per 100,000)`;
}

/** The live subscriptions (GraphQL and MCP streams) the service holds open now, from /metrics. */
export async function openSubscriptions(base: string): Promise<number> {
  const res = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  return Number(/^wks_graphql_subscriptions (\S+)$/m.exec(await res.text())?.[1] ?? NaN);
}

/** Runs `work` in the background of a sequential load, noting what it returns and the event loop's worst delay meanwhile. */
function watched(b: Bench, work: () => Promise<string>): SequentialBackground {
  const started = eventLoopMaxMs(b.service).then(() => undefined);
  const done = started.then(async () => {
    const t = performance.now();
    const note = await work();
    const seconds = ((performance.now() - t) / 1000).toFixed(1);
    return `${note} in ${seconds} s; event loop max ${(await eventLoopMaxMs(b.service)).toFixed(0)} ms`;
  });
  return { started, done };
}

/** A multipart body holding one image as the `file` field. */
function multipart(image: Buffer): { body: Buffer; type: string } {
  const boundary = `stall${randomBytes(8).toString('hex')}`;
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="shot.png"\r\nContent-Type: image/png\r\n\r\n`;
  return {
    body: Buffer.concat([Buffer.from(head), image, Buffer.from(`\r\n--${boundary}--\r\n`)]),
    type: `multipart/form-data; boundary=${boundary}`,
  };
}

/** A request of the other agent: its body is written to a file the agent reads before the probe starts. */
interface AgentRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Buffer | string;
}

/**
 * The other agent's requests sent by a process of its own (agent.mjs), all at once or one after
 * another: sending 30 MiB from the probe's own process held its event loop, and the probe's first
 * GETs during three uploads then took 40–65 ms on either database (4–5 ms from another process).
 * `started` once the agent has read its bodies; `done` with the statuses, summarised by `describe`.
 */
function otherAgent(b: Bench, parallel: boolean, requests: AgentRequest[], describe: (statuses: number[]) => string): SequentialBackground {
  const dir = mkdtempSync(join(tmpdir(), 'wks-stall-'));
  const spec = join(dir, 'requests.json');
  writeFileSync(
    spec,
    JSON.stringify({
      parallel,
      requests: requests.map((r, i) => {
        const bodyFile = join(dir, `body-${i}`);
        writeFileSync(bodyFile, r.body);
        return { method: r.method, url: `${b.service}${r.path}`, headers: { ...b.auth, ...r.headers }, bodyFile };
      }),
    }),
  );
  const child = spawn(process.execPath, [fileURLToPath(new URL('./agent.mjs', import.meta.url)), spec], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines: AsyncIterator<string> = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const ready = lines.next().then(({ value }) => {
    if (value !== 'ready') throw new Error(`the other agent said ${String(value)}`);
  });
  const watching = watched(b, async () => {
    await ready;
    child.stdin.write('go\n');
    const value: unknown = (await lines.next()).value;
    return `${describe(JSON.parse(String(value)) as number[])} (another process)`;
  });
  const done = watching.done.finally(() => {
    child.kill();
    rmSync(dir, { recursive: true, force: true });
  });
  return { started: Promise.all([watching.started, ready]).then(() => undefined), done };
}

/** Three uploads of a distinct ~10 MiB PNG of incompressible pixels (3200×3199, 8-bit grey), all at once. */
export function threeUploads(b: Bench): SequentialBackground {
  const images = Array.from({ length: 3 }, () => multipart(png(3200, 3199, false, true)));
  const requests = images.map(({ body, type }) => ({
    method: 'POST',
    path: '/api/v1/workspaces/-/uploads',
    headers: { 'content-type': type },
    body,
  }));
  return otherAgent(
    b,
    true,
    requests,
    (statuses) => `3 uploads of ${(images[0].body.length / 2 ** 20).toFixed(1)} MiB: ${statuses.join(', ')}`,
  );
}

/** Twenty PUTs of new 16 KB notes, one after another. */
export function twentyPuts(b: Bench): SequentialBackground {
  const prefix = `stall/${randomBytes(4).toString('hex')}`;
  const text = 'lorem ipsum dolor sit amet consectetur '.repeat(420).slice(0, 16_000);
  const requests = Array.from({ length: 20 }, (_, i) => ({
    method: 'PUT',
    path: '/api/v1/workspaces/-/memory/note',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ path: `${prefix}/${i}`, body: `${text.slice(0, 15_990)} ${i}`, kind: 'note', links: [], tags: [] }),
  }));
  return otherAgent(b, false, requests, (statuses) => {
    const counts = new Map<number, number>();
    for (const s of statuses) counts.set(s, (counts.get(s) ?? 0) + 1);
    return `20 PUTs of 16 KB: ${[...counts].map(([s, n]) => `${n} × ${s}`).join(', ')}`;
  });
}

/** The bench's 50 MB archive of five ~10 MiB PNGs, imported into a new workspace. */
export function imageImport(b: Bench): SequentialBackground {
  const inner = importInBackground('images', () => eventLoopMaxMs(b.service).then(() => undefined))(b);
  const done = inner.done.then(async (note) => `${note}; event loop max ${(await eventLoopMaxMs(b.service)).toFixed(0)} ms`);
  return { started: inner.started, done };
}
