// Entry of the spec worker (started by specWorker.ts): parses, bounds, validates and renders one
// client document at a time, off the main thread. Plain JS, and it imports plain JS only (the
// module named in workerData: a compiled build's parse.js, or the sources transpiled by the main
// thread), so the worker never needs a module loader.
import { parentPort, workerData } from 'node:worker_threads';

const core = await import(workerData.module);

parentPort.on('message', async ({ id, text, timeoutMs }) => {
  try {
    const spec = await core.parseSpecText(text, { timeoutMs });
    parentPort.postMessage({ id, spec });
  } catch (error) {
    parentPort.postMessage({ id, ...describe(error) });
  }
});
parentPort.postMessage({ ready: true });

/** A client fault travels as a rejection (message and findings); anything else as a failure (ours). */
function describe(error) {
  if (error instanceof core.SpecRejection) return { rejection: { message: error.message, findings: error.findings } };
  return { failure: { name: error?.name ?? 'Error', message: String(error?.message ?? error), stack: error?.stack } };
}
