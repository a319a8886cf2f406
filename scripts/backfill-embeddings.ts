/**
 * Re-embeds existing content: queues every article, changelog entry and memory note (of one workspace with
 * --workspace <id>, else of all) and embeds them with the configured embedder, printing progress.
 * Usage: npm run embeddings:backfill [-- --workspace <id>]   (DATABASE_URL or the embedded DATA_DIR)
 * The same work with a progress bar: `wks embeddings backfill` (src/cli/embeddings.ts).
 */
import { backfillEmbeddings } from '../src/app/embeddingBackfill.js';

const arg = process.argv.indexOf('--workspace');
const started = Date.now();
let last = 0;
const result = await backfillEmbeddings({
  databaseUrl: process.env.DATABASE_URL || undefined,
  dataDir: process.env.DATA_DIR || './data',
  workspace: arg > 0 ? process.argv[arg + 1] : null,
  env: process.env,
  onQueued: (queued, pending, model) => console.log(`queued ${queued} items (${pending} pending in total); embedding with ${model} …`),
  onProgress: (n, pending) => {
    if (Date.now() - last < 1000 && n < pending) return;
    last = Date.now();
    const rate = n / ((Date.now() - started) / 1000);
    console.log(`  ${n}/${pending} embedded (${rate.toFixed(0)}/s, ~${Math.max(0, Math.round((pending - n) / rate))} s left)`);
  },
});
console.log(`done: ${result.embedded} items in ${result.seconds.toFixed(1)} s`);
