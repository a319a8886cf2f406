/** Workspace archives for the archive scenario: built once, imported in the background while requests are measured. */
import { buildArchiveAsync, rec, type RecordLine } from '../../test/support/archives.js';
import { png } from '../../test/support/images.js';
import { rng, WORDS } from './corpus.js';
import { OPTIONS } from './options.js';
import type { Bench, SequentialBackground } from './types.js';

/** ~50 MB of archive, as images (five incompressible ~10 MiB PNGs) or as text (1,200 articles of 20 KB, 1,500 notes of 16 KB). */
export type ArchiveKind = 'images' | 'text';

const built = new Map<ArchiveKind, Promise<Buffer>>();

/** Prose of `length` characters from the corpus's words (its own random stream: the seeded corpus is not disturbed). */
function prose(length: number, random: () => number): string {
  let out = '';
  while (out.length < length) out += `${WORDS[Math.floor(random() * WORDS.length)]}${random() < 0.08 ? '.\n' : ' '}`;
  return out.slice(0, length);
}

async function build(kind: ArchiveKind): Promise<Buffer> {
  const records: RecordLine[] = [];
  if (kind === 'images') {
    for (let i = 0; i < 5; i++) {
      records.push(rec.upload(`benchArchiveUpload000${i}`, png(3200, 3200 - i, false, true)));
      await new Promise((resolve) => setImmediate(resolve));
    }
  } else {
    const random = rng(7);
    records.push(rec.section(1));
    for (let i = 1; i <= 1200; i++) records.push(rec.article(i, { markdown: prose(20_000, random), position: i % 1000 }));
    for (let i = 1; i <= 1500; i++) records.push(rec.note(i, { body: prose(16_000, random) }));
  }
  return buildArchiveAsync(records);
}

/** The bytes as a stream of 1 MiB slices: one fetch of the whole buffer would hold this process, whose requests are being timed. */
function inSlices(bytes: Buffer): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent >= bytes.length) return controller.close();
      controller.enqueue(new Uint8Array(bytes.subarray(sent, (sent += 1024 * 1024))));
    },
  });
}

/**
 * One import of the archive into a new workspace of the bench's organization, in the background;
 * resolves with what to note. `before` runs once the archive is built, just before it is sent.
 */
export function importInBackground(kind: ArchiveKind, before?: () => Promise<void>): (b: Bench) => SequentialBackground {
  return (b) => {
    const archive = built.get(kind) ?? built.set(kind, build(kind)).get(kind)!;
    const ready = archive.then(() => before?.());
    const done = (async () => {
      const bytes = await archive;
      await ready;
      const started = performance.now();
      const res = await fetch(`${b.service}/admin/import?organization=${b.organizationId}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${OPTIONS.adminToken}`, 'content-type': 'application/gzip' },
        body: inSlices(bytes),
        duplex: 'half',
      } as RequestInit);
      await res.arrayBuffer();
      return `import of ${(bytes.length / 1e6).toFixed(1)} MB gzip: ${res.status} in ${((performance.now() - started) / 1000).toFixed(1)} s`;
    })();
    return { started: ready.then(() => undefined), done };
  };
}
