/**
 * Re-embeds existing content: queues every article and changelog entry (of one workspace with
 * --workspace <id>, else of all) and embeds them with the configured embedder, printing progress.
 * Usage: npm run embeddings:backfill [-- --workspace <id>]   (DATABASE_URL or the embedded DATA_DIR)
 */
import 'reflect-metadata';
import pino from 'pino';
import { startEmbedded } from '../src/db/embedded.js';
import { freshEm, migrate, openOrm } from '../src/db/orm.js';
import { sql } from '../src/db/sql.js';
import { embedderFromEnv } from '../src/search/embedder.js';
import { ENQUEUE_EMBEDDING, VectorIndex } from '../src/search/vectors.js';
import { EmbeddingWorker } from '../src/search/worker.js';

const arg = process.argv.indexOf('--workspace');
const workspace = arg > 0 ? process.argv[arg + 1] : null;
const url = process.env.DATABASE_URL;
const embedded = url ? null : await startEmbedded({ dataDir: process.env.DATA_DIR || './data' });
const connection = url ? { clientUrl: url } : embedded!.connection;
const orm = await openOrm(connection, 4);
try {
  await migrate(orm, connection, Boolean(url));
  const em = freshEm(orm);
  const filter = workspace ? 'where workspace_id = ?' : '';
  const params = workspace ? [workspace] : [];
  const queued = await em.transactional(async (tx) => {
    const a = await sql(tx, `${ENQUEUE_EMBEDDING('article', `select id, workspace_id from articles ${filter}`)} returning 1`, params);
    const c = await sql(
      tx,
      `${ENQUEUE_EMBEDDING('changelog', `select id, workspace_id from changelog_entries ${filter}`)} returning 1`,
      params,
    );
    return a.length + c.length;
  });
  const [{ n: pending }] = await sql<{ n: number }>(em, 'select count(*)::int as n from embedding_queue');
  console.log(`queued ${queued} items (${pending} pending in total); embedding with ${embedderFromEnv(process.env).model} …`);
  const worker = new EmbeddingWorker(orm, embedderFromEnv(process.env), await VectorIndex.open(em), pino({ level: 'warn' }));
  const started = Date.now();
  let last = 0;
  const done = await worker.drain((n) => {
    if (Date.now() - last < 1000 && n < pending) return;
    last = Date.now();
    const rate = n / ((Date.now() - started) / 1000);
    console.log(`  ${n}/${pending} embedded (${rate.toFixed(0)}/s, ~${Math.max(0, Math.round((pending - n) / rate))} s left)`);
  });
  console.log(`done: ${done} items in ${((Date.now() - started) / 1000).toFixed(1)} s`);
} finally {
  await orm.close();
  await embedded?.close();
}
