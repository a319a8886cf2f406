import { InvalidRequestError } from '../errors.js';
import { SpecRejection } from './rejection.js';
import type { ParsedSpec } from './parsedSpec.js';
import { SpecWorker, type SpecWorkerLimits } from './specWorker.js';

export { SPEC_EXPANSION_BUDGET, SPEC_MAX_DEPTH } from './expansion.js';
export type { Finding } from './rejection.js';
export { SPEC_WORKER_LIMITS, type SpecWorkerLimits } from './specWorker.js';

export type { ParsedSpec, SpecOperation } from './parsedSpec.js';

// A client's document can be made to take seconds or gigabytes: it is only ever handled in this
// worker (parse.ts does the work), never on the thread that serves requests.
const worker = new SpecWorker();

/** Reads, validates and renders a client's OpenAPI document (JSON or YAML text) in the spec worker. */
export async function parseSpecDocument(text: string): Promise<ParsedSpec> {
  try {
    return await worker.run(text);
  } catch (error) {
    // Only the document's faults (invalid, over budget, too slow, out of memory) are 400s; ours stay errors.
    if (error instanceof SpecRejection) throw new InvalidRequestError(error.message, error.findings);
    throw error;
  }
}

/** Ends the spec worker (call when the server closes); a later parse starts a new one. */
export function closeSpecWorker(): Promise<void> {
  return worker.close();
}

/** Changes the spec worker's limits (tests force a timeout with a short one); answers the previous ones. */
export function configureSpecWorker(limits: Partial<SpecWorkerLimits>): SpecWorkerLimits {
  return worker.configure(limits);
}
