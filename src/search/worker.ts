import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { freshEm } from '../db/orm.js';
import { PollingLoop } from '../jobs.js';
import { sql } from '../db/sql.js';
import { cosine, type Embedder } from './embedder.js';
import { onEmbeddingWork, type ItemType, type VectorIndex } from './vectors.js';

const BATCH = 32;
const CLAIM_SECONDS = 120;
const MAX_CHARS = 2000; // the sentence encoder is for short text: title + the beginning is enough
export const GROUP_SIMILARITY = 0.7;
export const NEAREST_ARTICLE_FLOOR = 0.3;

interface Claimed {
  item_type: ItemType;
  item_id: number;
  workspace_id: string;
  enqueued_at: Date;
}

/**
 * Embeds queued items in the background, in every process: claims a batch with
 * `FOR UPDATE SKIP LOCKED` and a lease (so processes share the work and a crash only delays it),
 * embeds outside any transaction (PGlite blocks every connection while one is open), then stores
 * the vectors and clusters unanswered questions into content-gap groups.
 */
export class EmbeddingWorker {
  private readonly loop: PollingLoop;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly orm: MikroORM,
    private readonly embedder: Embedder,
    private readonly index: VectorIndex,
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

  /** Processes until the queue is empty; resolves with the number of items embedded. */
  async drain(onProgress?: (done: number) => void): Promise<number> {
    let total = 0;
    for (;;) {
      const n = await this.passOnce();
      total += n;
      if (n === 0) return total;
      onProgress?.(total);
    }
  }

  private async passOnce(): Promise<number> {
    const em = freshEm(this.orm);
    const claimed = await sql<Claimed>(
      em,
      `update embedding_queue q set claimed_until = clock_timestamp() + interval '${CLAIM_SECONDS} seconds', attempts = q.attempts + 1
        from (select item_type, item_id from embedding_queue
               where claimed_until is null or claimed_until < clock_timestamp()
               order by enqueued_at limit ${BATCH} for update skip locked) c
       where q.item_type = c.item_type and q.item_id = c.item_id
       returning q.item_type, q.item_id, q.workspace_id, q.enqueued_at`,
    );
    if (!claimed.length) return 0;
    const texts = await this.texts(em, claimed);
    const work = claimed.filter((c) => texts.has(key(c)));
    const vectors = work.length ? await this.embedder.embed(work.map((c) => texts.get(key(c))!)) : [];
    await em.transactional(async (tx) => {
      for (let i = 0; i < work.length; i++) {
        const item = work[i];
        await this.index.store(tx, item.workspace_id, item.item_type, item.item_id, this.embedder.model, vectors[i]);
        if (item.item_type === 'gap' || item.item_type === 'search') await this.group(tx, item, texts.get(key(item))!, vectors[i]);
      }
      for (const item of claimed) {
        // Re-enqueued while we worked (the text changed): leave it for the next pass.
        await sql(tx, 'delete from embedding_queue where item_type = ? and item_id = ? and enqueued_at = ?', [item.item_type, item.item_id, item.enqueued_at]);
      }
    });
    return claimed.length;
  }

  /** The text to embed per claimed item (items deleted meanwhile are simply dropped). */
  private async texts(em: ReturnType<MikroORM['em']['fork']>, claimed: Claimed[]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    const ids = (type: ItemType) => `{${claimed.filter((c) => c.item_type === type).map((c) => c.item_id).join(',')}}`;
    const load = async (type: ItemType, query: string) => {
      if (!claimed.some((c) => c.item_type === type)) return;
      for (const row of await sql(em, query, [ids(type)])) out.set(`${type}:${row.id}`, String(row.text).slice(0, MAX_CHARS));
    };
    await load('article', `select id, title || E'\\n' || markdown as text from articles where id = any(?::int[])`);
    await load('changelog', `select id, title || E'\\n' || markdown as text from changelog_entries where id = any(?::int[])`);
    await load('gap', `select id, question as text from content_gap_reports where id = any(?::int[]) and question is not null and question <> ''`);
    await load('search', `select id, query as text from search_log where id = any(?::int[])`);
    return out;
  }

  /** Puts an unanswered question into the most similar open group of its workspace, or starts one. */
  private async group(em: ReturnType<MikroORM['em']['fork']>, item: Claimed, text: string, vec: number[]) {
    const groups = await sql(em, 'select id, centroid, report_count, search_count from content_gap_groups where workspace_id = ? and resolved_at is null order by id for update', [item.workspace_id]);
    let best: { id: number; similarity: number; row: Record<string, any> } | null = null;
    for (const g of groups) {
      const similarity = cosine(vec, g.centroid as number[]);
      if (similarity >= GROUP_SIMILARITY && (!best || similarity > best.similarity)) best = { id: g.id, similarity, row: g };
    }
    const isReport = item.item_type === 'gap';
    const table = isReport ? 'content_gap_reports' : 'search_log';
    const [{ created_at: seen }] = await sql(em, `select created_at from ${table} where id = ?`, [item.item_id]);
    let groupId: number;
    if (best) {
      const n = Number(best.row.report_count) + Number(best.row.search_count);
      const centroid = (best.row.centroid as number[]).map((c, i) => (c * n + vec[i]) / (n + 1));
      await sql(
        em,
        `update content_gap_groups set centroid = ?::real[], report_count = report_count + ?, search_count = search_count + ?,
           first_seen = least(first_seen, ?), last_seen = greatest(last_seen, ?) where id = ?`,
        [`{${centroid.join(',')}}`, isReport ? 1 : 0, isReport ? 0 : 1, seen, seen, best.id],
      );
      groupId = best.id;
    } else {
      const [nearest] = await this.index.nearest(em, item.workspace_id, ['article'], vec, this.embedder.model, 1);
      let slug: string | null = null;
      if (nearest && nearest.similarity >= NEAREST_ARTICLE_FLOOR) {
        const [row] = await sql(em, 'select slug from articles where id = ?', [nearest.itemId]);
        slug = row?.slug ?? null;
      }
      const [row] = await sql(
        em,
        `insert into content_gap_groups (workspace_id, label, centroid, report_count, search_count, first_seen, last_seen, nearest_article_slug)
         values (?, ?, ?::real[], ?, ?, ?, ?, ?) returning id`,
        [item.workspace_id, text.slice(0, 256), `{${vec.join(',')}}`, isReport ? 1 : 0, isReport ? 0 : 1, seen, seen, slug],
      );
      groupId = row.id;
    }
    await sql(em, `update ${table} set group_id = ? where id = ?`, [groupId, item.item_id]);
  }
}

const key = (c: { item_type: string; item_id: number }) => `${c.item_type}:${c.item_id}`;
