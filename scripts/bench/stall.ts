/**
 * What another agent does while the stall scenario's agent reads a note every 10 ms: three 10 MiB
 * uploads at once, twenty 16 KB note PUTs, or a 50 MB archive import, each with the service's
 * worst event-loop delay meanwhile (from its /metrics) in the note column.
 */
import { randomBytes } from 'node:crypto';
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

/** A multipart body holding one image as the `file` field (made before the probe starts: copying 10 MiB would hold the probe's own loop). */
function multipart(image: Buffer): { body: Uint8Array<ArrayBuffer>; type: string } {
  const boundary = `stall${randomBytes(8).toString('hex')}`;
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="shot.png"\r\nContent-Type: image/png\r\n\r\n`;
  return {
    body: new Uint8Array(Buffer.concat([Buffer.from(head), image, Buffer.from(`\r\n--${boundary}--\r\n`)])),
    type: `multipart/form-data; boundary=${boundary}`,
  };
}

/** Three uploads of a distinct ~10 MiB PNG of incompressible pixels (3200×3199, 8-bit grey), all at once. */
export function threeUploads(b: Bench): SequentialBackground {
  const images = Array.from({ length: 3 }, () => multipart(png(3200, 3199, false, true)));
  return watched(b, async () => {
    const statuses = await Promise.all(
      images.map(async ({ body, type }) => {
        const res = await fetch(`${b.service}/api/v1/workspaces/-/uploads`, {
          method: 'POST',
          headers: { ...b.auth, 'content-type': type },
          body,
        });
        await res.arrayBuffer();
        return res.status;
      }),
    );
    return `3 uploads of ${(images[0].body.length / 2 ** 20).toFixed(1)} MiB: ${statuses.join(', ')}`;
  });
}

/** Twenty PUTs of new 16 KB notes, one after another. */
export function twentyPuts(b: Bench): SequentialBackground {
  const prefix = `stall/${randomBytes(4).toString('hex')}`;
  const text = 'lorem ipsum dolor sit amet consectetur '.repeat(420).slice(0, 16_000);
  return watched(b, async () => {
    const statuses = new Map<number, number>();
    for (let i = 0; i < 20; i++) {
      const res = await fetch(`${b.service}/api/v1/workspaces/-/memory/note`, {
        method: 'PUT',
        headers: { ...b.auth, 'content-type': 'application/json' },
        body: JSON.stringify({ path: `${prefix}/${i}`, body: `${text.slice(0, 15_990)} ${i}`, kind: 'note', links: [], tags: [] }),
      });
      await res.arrayBuffer();
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
    }
    return `20 PUTs of 16 KB: ${[...statuses].map(([s, n]) => `${n} × ${s}`).join(', ')}`;
  });
}

/** The bench's 50 MB archive of five ~10 MiB PNGs, imported into a new workspace. */
export function imageImport(b: Bench): SequentialBackground {
  const inner = importInBackground('images', () => eventLoopMaxMs(b.service).then(() => undefined))(b);
  const done = inner.done.then(async (note) => `${note}; event loop max ${(await eventLoopMaxMs(b.service)).toFixed(0)} ms`);
  return { started: inner.started, done };
}
