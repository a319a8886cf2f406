import 'reflect-metadata';
import pino from 'pino';
import { startEmbedded } from '../db/embedded.js';
import { freshEm, migrate, openOrm } from '../db/orm.js';
import { sql } from '../db/sql.js';
import { embedderFromEnv } from '../search/embedder.js';
import { ENQUEUE_EMBEDDING, VectorIndex } from '../search/vectors.js';
import { EmbeddingWorker } from '../search/worker.js';
import { clusterQuestion } from '../services/contentGaps.js';

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
    const filter = options.workspace ? 'where workspace_id = ?' : '';
    const params = options.workspace ? [options.workspace] : [];
    const queued = await em.transactional(async (tx) => {
      let n = 0;
      // Notes only of workspaces that search them by meaning (the others embed no note).
      for (const [type, table] of [
        ['article', 'articles'],
        ['changelog', 'changelog_entries'],
        ['note', 'memory_notes t join embedding_stamps s on s.workspace_id = t.workspace_id and s.notes_embedded'],
      ] as const) {
        const items = `select t.id, t.workspace_id from ${table.includes(' ') ? table : `${table} t`} ${filter.replace('workspace_id', 't.workspace_id')}`;
        n += (await sql(tx, `${ENQUEUE_EMBEDDING(type, items)} returning 1`, params)).length;
      }
      return n;
    });
    const [{ n: pending }] = await sql<{ n: number }>(
      em,
      `select count(*)::int as n from embedding_queue ${options.workspace ? 'where workspace_id = ?' : ''}`,
      params,
    );
    const embedder = embedderFromEnv(options.env);
    options.onQueued?.(queued, pending, embedder.model);
    const worker = new EmbeddingWorker(orm, embedder, await VectorIndex.open(em), clusterQuestion, pino({ level: 'warn' }));
    const started = Date.now();
    const done = await worker.drain((n) => options.onProgress?.(n, pending), options.workspace ?? undefined);
    await embedder.close?.();
    return { queued, embedded: done, seconds: (Date.now() - started) / 1000, model: embedder.model };
  } finally {
    await orm.close();
    await embedded?.close();
  }
}
