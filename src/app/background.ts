import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { freshEm } from '../db/orm.js';
import type { SqlTarget } from '../db/sql.js';
import { backgroundEmbedder, DisabledEmbedder, type Embedder } from '../search/embedder.js';
import type { VectorIndex } from '../search/vectors.js';
import { EmbeddingWorker } from '../search/worker.js';
import { IdempotencyStore } from '../services/idempotency.js';
import { purgeNoteHistory } from '../services/noteHistory.js';
import { purgeUnfinishedUploads } from '../services/uploads.js';
import { backfillNearKeys } from '../services/nearDuplicates.js';
import { WebhookDispatcher } from '../webhooks/dispatcher.js';
import { gapGrouping } from '../services/gapGrouping.js';
import { deleteOldEvents, deleteOldSearches } from '../store/retention.js';
import { deleteOldActivity } from '../store/activity.js';
import { deleteOldRemovals, REMOVALS_KEPT_DAYS } from '../store/searchTerms.js';
import { deleteOldCallerWrites } from '../store/readRouting.js';
import { tryTransactionLock } from '../store/events.js';

/** How long the event table and the search log keep rows, in days (0: for ever). */
export interface Retention {
  /** EVENT_RETENTION_DAYS, default 365. */
  eventsDays: number;
  /** SEARCH_LOG_RETENTION_DAYS, default 90. */
  searchLogDays: number;
}

export const DEFAULT_RETENTION: Retention = {
  eventsDays: defaultOf('EVENT_RETENTION_DAYS'),
  searchLogDays: defaultOf('SEARCH_LOG_RETENTION_DAYS'),
};
import { deleteUnusedClients } from '../store/oauthClients.js';
import { purgeExpiredCodes } from '../store/oauthCodes.js';
import { forgetMetadataFailures } from '../store/oauthMetadataFailures.js';
import { purgeExpiredTokens } from '../store/oauthTokens.js';
import { forgetEndedSignIns } from '../store/sessions.js';
import { defaultOf } from '../config.js';
import { inTransaction } from '../store/unitOfWork.js';

interface BackgroundOptions {
  orm: MikroORM;
  logger: Logger;
  embedder: Embedder;
  vectorIndex: VectorIndex;
  embeddingWorker: boolean;
  webhookDispatcher: boolean;
  /** MEMORY_NEAR_DUPLICATES: when off, this process gives notes no near-duplicate keys, not even in housekeeping. */
  nearDuplicates: boolean;
  allowLoopback: boolean;
  webhookRetryScheduleMs?: number[];
  retention?: Retention;
}

/** The work every process does besides answering requests. */
export interface Background {
  worker: EmbeddingWorker;
  dispatcher: WebhookDispatcher;
  idempotency: IdempotencyStore;
  stop(): Promise<void>;
}

const PURGE_EVERY_MS = 10 * 60_000;

/**
 * Starts the background work of a process: the embedding worker (its own model thread, so
 * questions never wait behind article embeddings), the webhook dispatcher, and the purge of
 * expired idempotency records. Each can be switched off; several processes share the work through
 * leases in the database.
 */
export function startBackground(options: BackgroundOptions): Background {
  const { orm, logger, embedder } = options;
  const idempotency = new IdempotencyStore(() => freshEm(orm));
  const modelThread = backgroundEmbedder(embedder);
  const worker = new EmbeddingWorker(orm, modelThread, options.vectorIndex, gapGrouping, logger);
  if (options.embeddingWorker && !(embedder instanceof DisabledEmbedder)) worker.start();
  const dispatcher = new WebhookDispatcher(orm, logger, {
    allowLoopback: options.allowLoopback,
    retryScheduleMs: options.webhookRetryScheduleMs,
  });
  if (options.webhookDispatcher) dispatcher.start();
  // The rate limiter deletes its own old windows; expired idempotency records and the history of
  // notes deleted long ago go here, and notes written before near-duplicate detection get their
  // band keys (a few thousand per pass, the first pass soon after start).
  const backfill = () =>
    options.nearDuplicates
      ? backfillNearKeysFor(freshEm(orm), NEAR_BACKFILL_BATCHES).catch((error) =>
          logger.warn({ err: error }, 'near-duplicate key backfill failed'),
        )
      : undefined;
  // A retention pass may delete for seconds: stop() ends it after its current batch and waits for it.
  let stopping = false;
  let retentionPass: Promise<unknown> | null = null;
  const housekeeping = setInterval(() => {
    idempotency.purge().catch((error) => logger.warn({ err: error }, 'idempotency purge failed'));
    purgeNoteHistory(freshEm(orm)).catch((error) => logger.warn({ err: error }, 'note history purge failed'));
    purgeUnfinishedUploads(freshEm(orm)).catch((error) => logger.warn({ err: error }, 'unfinished upload purge failed'));
    retentionPass ??= enforceRetention(freshEm(orm), options.retention ?? DEFAULT_RETENTION, RETENTION_BUDGET_MS, () => stopping)
      .catch((error) => logger.warn({ err: error }, 'retention pass failed'))
      .finally(() => (retentionPass = null));
    deleteOldCallerWrites(freshEm(orm)).catch((error) => logger.warn({ err: error }, 'caller write positions purge failed'));
    // Sign-in links a day past their expiry and sessions ended a day ago are forgotten.
    forgetEndedSignIns(freshEm(orm)).catch((error) => logger.warn({ err: error }, 'sign-in purge failed'));
    // OAuth: expired codes and tokens, metadata fetch failures no longer remembered, and clients no grant used before they expired.
    Promise.all([purgeExpiredOAuth(freshEm(orm)), deleteUnusedClients(freshEm(orm))]).catch((error) =>
      logger.warn({ err: error }, 'OAuth purge failed'),
    );
    void backfill();
  }, PURGE_EVERY_MS);
  housekeeping.unref();
  const firstBackfill = setTimeout(() => void backfill(), 5_000);
  firstBackfill.unref();
  return {
    worker,
    dispatcher,
    idempotency,
    async stop() {
      stopping = true;
      clearInterval(housekeeping);
      await retentionPass;
      clearTimeout(firstBackfill);
      await worker.stop();
      await dispatcher.stop();
      if (modelThread !== embedder) await modelThread.close?.();
    },
  };
}

/** Rows one retention statement deletes. */
export const RETENTION_BATCH = 1000;
/** How long one housekeeping pass keeps deleting batches before it leaves the rest to the next pass. */
export const RETENTION_BUDGET_MS = 5_000;
/** Taken (transaction-scoped) by every retention batch: one process at a time deletes. Arbitrary, fixed, above any int4 `hashtext` lock. */
export const RETENTION_LOCK = 0x5753_4b33_0001;

/** What one retention pass deleted; `busy` when it stopped because another process was deleting. */
export interface RetentionPass {
  events: number;
  searches: number;
  /** Rows of workspace_activity (kept as long as the search log). */
  activity: number;
  /** Rows of search_removals (kept REMOVALS_KEPT_DAYS). */
  removals: number;
  busy: boolean;
}

/**
 * Deletes events, logged searches (and their activity counters) and search removals past their retention, oldest first, in batches of
 * RETENTION_BATCH rows (each through an index on `created_at`, see store/retention.ts), taking a
 * batch of each table in turn until neither has any left or `budgetMs` has passed (a batch is
 * never cut short; with 0, one batch of each). Each batch is its own short transaction that first
 * takes RETENTION_LOCK with `pg_try_advisory_xact_lock`: a process that finds it taken ends its
 * pass (another is deleting), so passes of several processes do not repeat each other's work, and
 * no lock outlives a batch (transaction-scoped: safe behind a transaction pooler). `stopped`
 * (the process is stopping) ends the pass after the batch that runs.
 */
export async function enforceRetention(
  em: EntityManager,
  retention: Retention,
  budgetMs = RETENTION_BUDGET_MS,
  stopped: () => boolean = () => false,
): Promise<RetentionPass> {
  const done: RetentionPass = { events: 0, searches: 0, activity: 0, removals: 0, busy: false };
  const deadline = performance.now() + budgetMs;
  let left = (
    [
      ['events', retention.eventsDays, deleteOldEvents],
      ['searches', retention.searchLogDays, deleteOldSearches],
      ['activity', retention.searchLogDays, deleteOldActivity],
      ['removals', REMOVALS_KEPT_DAYS, deleteOldRemovals],
    ] as const
  ).filter(([, days]) => days > 0);
  while (left.length) {
    for (const [key, days, purge] of left) {
      const n = await inTransaction(em, async (trx) =>
        (await tryTransactionLock(trx, RETENTION_LOCK)) ? purge(trx, days, RETENTION_BATCH) : null,
      );
      if (n === null) return { ...done, busy: true };
      done[key] += n;
      if (n < RETENTION_BATCH) left = left.filter(([other]) => other !== key);
      if (stopped()) return done;
    }
    if (performance.now() >= deadline) break;
  }
  return done;
}

/** Batches of near-duplicate keys one housekeeping pass computes (500 notes each). */
const NEAR_BACKFILL_BATCHES = 10;

async function backfillNearKeysFor(db: Parameters<typeof backfillNearKeys>[0], batches: number): Promise<void> {
  for (let i = 0; i < batches; i++) if ((await backfillNearKeys(db)) === 0) return;
}

/** OAuth housekeeping, one statement after another: tokens and codes past their expiry, metadata fetch failures no longer remembered. */
async function purgeExpiredOAuth(db: SqlTarget): Promise<void> {
  await purgeExpiredTokens(db);
  await purgeExpiredCodes(db);
  await forgetMetadataFailures(db);
}
