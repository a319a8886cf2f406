import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { freshEm } from '../db/orm.js';
import type { SqlTarget } from '../db/sql.js';
import { PollingLoop } from '../jobs.js';
import { claimQueued, dequeueEmbedded, textsToEmbed, type ClaimedItem } from '../store/embeddings.js';
import type { Embedder } from './embedder.js';
import { passagesOf, type Passage } from './passages.js';
import { onEmbeddingWork, type ItemType, type Neighbour, type VectorIndex } from './vectors.js';
import { inTransaction } from '../store/unitOfWork.js';

/** Items claimed per pass, and passages per call of the embedder (a long document has many). */
const BATCH = 32;
const EMBED_BATCH = 64;
const CLAIM_SECONDS = 120;
/** A question is embedded whole, up to this many characters (the sentence encoder is for short text). */
const QUESTION_CHARS = 2000;

/** An unanswered question (a content-gap report or a zero-result search) and its vector, as the worker hands it on. */
export interface QuestionToCluster {
  workspaceId: string;
  itemType: 'gap' | 'search';
  itemId: number;
  text: string;
  vector: number[];
  /** The model that made `vector`. */
  model: string;
}

/** What becomes of embedded questions (content gaps group them). */
export interface QuestionHandler {
  /** Before the worker's transaction, outside any: what handling the batch's questions needs from the model (`embed`). */
  prepare(db: SqlTarget, questions: QuestionToCluster[], embed: (texts: string[]) => Promise<number[][]>): Promise<void>;
  /** One question, inside the worker's transaction. */
  handle(tx: EntityManager, question: QuestionToCluster, nearestArticle: (vector: number[]) => Promise<Neighbour[]>): Promise<void>;
}

/**
 * Embeds queued items in the background, in every process: claims a batch with
 * `FOR UPDATE SKIP LOCKED` and a lease (so processes share the work and a crash only delays it),
 * embeds outside any transaction (PGlite blocks every connection while one is open), then stores
 * the vectors and hands unanswered questions on (to the content-gap clustering, see onQuestion).
 */
export class EmbeddingWorker {
  private readonly loop: PollingLoop;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly orm: MikroORM,
    private readonly embedder: Embedder,
    private readonly index: VectorIndex,
    private readonly onQuestion: QuestionHandler,
    logger: Logger,
    idleMs = 500,
  ) {
    this.loop = new PollingLoop('embedding', () => this.passOnce(), logger, idleMs);
    this.unsubscribe = onEmbeddingWork(() => this.loop.kick());
  }

  start(): void {
    this.loop.start();
  }

  async stop(): Promise<void> {
    this.unsubscribe();
    await this.loop.stop();
  }

  /** Processes until the queue (of one workspace, if given) is empty; resolves with the number of items embedded. */
  async drain(onProgress?: (done: number) => void, workspaceId?: string): Promise<number> {
    let total = 0;
    for (;;) {
      const n = await this.passOnce(workspaceId);
      total += n;
      if (n === 0) return total;
      onProgress?.(total);
    }
  }

  private async passOnce(workspaceId?: string): Promise<number> {
    const em = freshEm(this.orm);
    const claimed = await claimQueued(em, workspaceId ?? null, CLAIM_SECONDS, BATCH);
    if (!claimed.length) return 0;
    const texts = await this.texts(em, claimed);
    const work = claimed.filter((c) => texts.has(key(c)));
    const vectors = await this.embedAll(work.flatMap((c) => texts.get(key(c))!.map((p) => p.embed)));
    const firstVector = new Map<string, number[]>();
    let at = 0;
    for (const item of work) {
      firstVector.set(key(item), vectors[at]);
      at += texts.get(key(item))!.length;
    }
    const questions = new Map<string, QuestionToCluster>();
    for (const item of work) {
      if (item.item_type !== 'gap' && item.item_type !== 'search') continue;
      questions.set(key(item), {
        workspaceId: item.workspace_id,
        itemType: item.item_type,
        itemId: item.item_id,
        text: texts.get(key(item))![0].embed,
        vector: firstVector.get(key(item))!,
        model: this.embedder.model,
      });
    }
    if (questions.size) await this.onQuestion.prepare(em, [...questions.values()], (t) => this.embedAll(t));
    await inTransaction(em, async (tx) => {
      let from = 0;
      for (const item of work) {
        const passages = texts.get(key(item))!;
        const stored = passages.map((p, i) => ({ vector: vectors[from + i], text: p.source || null }));
        from += passages.length;
        await this.index.store(tx, item.workspace_id, item.item_type, item.item_id, this.embedder.model, stored);
        const question = questions.get(key(item));
        if (question) {
          await this.onQuestion.handle(tx, question, (vec) =>
            this.index.nearest(tx, item.workspace_id, ['article'], vec, this.embedder.model, 1),
          );
        }
      }
      for (const item of claimed) {
        // Re-enqueued while we worked (the text changed): leave it for the next pass.
        await dequeueEmbedded(tx, item);
      }
    });
    return claimed.length;
  }

  /** Vectors of `texts`, in order, EMBED_BATCH texts per call of the embedder. */
  private async embedAll(texts: string[]): Promise<number[][]> {
    const out: number[][] = [];
    for (let i = 0; i < texts.length; i += EMBED_BATCH) out.push(...(await this.embedder.embed(texts.slice(i, i + EMBED_BATCH))));
    return out;
  }

  /**
   * The passages to embed per claimed item (items deleted meanwhile are simply dropped): a
   * document's (article, changelog entry, memory note) as passagesOf cuts it, a question's whole.
   */
  private async texts(em: ReturnType<MikroORM['em']['fork']>, claimed: ClaimedItem[]): Promise<Map<string, Passage[]>> {
    const out = new Map<string, Passage[]>();
    for (const type of ['article', 'changelog', 'note', 'gap', 'search'] as ItemType[]) {
      const ids = claimed.filter((c) => c.item_type === type).map((c) => c.item_id);
      if (!ids.length) continue;
      for (const row of await textsToEmbed(em, type, ids))
        out.set(
          `${type}:${row.id}`,
          row.body === null ? [{ embed: row.title.slice(0, QUESTION_CHARS), source: '' }] : passagesOf(row.title, row.body),
        );
    }
    return out;
  }
}

const key = (c: { item_type: string; item_id: number }) => `${c.item_type}:${c.item_id}`;
