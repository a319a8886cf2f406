import 'reflect-metadata';
import pino from 'pino';
import { startEmbedded } from '../db/embedded.js';
import { freshEm, migrate, openOrm } from '../db/orm.js';
import { embedderFromEnv } from '../search/embedder.js';
import { VectorIndex } from '../search/vectors.js';
import { EmbeddingWorker } from '../search/worker.js';
import { gapGrouping } from '../services/gapGrouping.js';
import { enqueueAllItems, queuedItemCount } from '../store/embeddings.js';
import { inTransaction } from '../store/unitOfWork.js';

export interface BackfillOptions {
  /** A PostgreSQL URL; without it the embedded database in `dataDir` is opened (the service must not be running on it). */
  databaseUrl?: string;
  dataDir: string;
  /** Only this workspace's content; null = every workspace. */
  workspace: string | null;
  env: NodeJS.ProcessEnv;
  /** Called once the items are queued, before embedding starts. */
  onQueued?(queued: number, pending: number, model: string): void;
  onProgress?(done: number, pending: number): void;
}

/**
 * Re-embeds existing content: queues every article, changelog entry and memory note (of one
 * workspace, or of all) and embeds the queue with the configured embedder, on the database itself.
 */
export async function backfillEmbeddings(
  options: BackfillOptions,
): Promise<{ queued: number; embedded: number; seconds: number; model: string }> {
  const url = options.databaseUrl;
  const embedded = url ? null : await startEmbedded({ dataDir: options.dataDir });
  const connection = url ? { clientUrl: url } : embedded!.connection;
  const orm = await openOrm(connection, 4);
  try {
    await migrate(orm, connection, Boolean(url));
    const em = freshEm(orm);
    const queued = await inTransaction(em, async (tx) => {
      let n = 0;
      // Notes only of workspaces that search them by meaning (the others embed no note).
      for (const type of ['article', 'changelog', 'note'] as const) n += await enqueueAllItems(tx, type, options.workspace);
      return n;
    });
    const pending = await queuedItemCount(em, options.workspace);
    const embedder = embedderFromEnv(options.env);
    options.onQueued?.(queued, pending, embedder.model);
    const worker = new EmbeddingWorker(orm, embedder, await VectorIndex.open(em), gapGrouping, pino({ level: 'warn' }));
    const started = Date.now();
    const done = await worker.drain((n) => options.onProgress?.(n, pending), options.workspace ?? undefined);
    await embedder.close?.();
    return { queued, embedded: done, seconds: (Date.now() - started) / 1000, model: embedder.model };
  } finally {
    await orm.close();
    await embedded?.close();
  }
}
