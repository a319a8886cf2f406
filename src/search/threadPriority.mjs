// Background work runs nicer than requests: a model's thread started with `workerData.niceness`
// lowers its own CPU priority (on Linux a thread's nice value is its own, and its threads inherit
// it). Where that cannot be set, the thread runs at the process's priority. Plain JS, imported by
// the model threads.
import { setPriority } from 'node:os';
import { workerData } from 'node:worker_threads';

if (workerData?.niceness) {
  try {
    setPriority(workerData.niceness);
  } catch {
    // not permitted here: keep the process's priority
  }
}
