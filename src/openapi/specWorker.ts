import { Worker } from 'node:worker_threads';
import { workerModuleUrl } from './workerModules.js';
import { neededTooMuchMemory, SpecRejection, tookTooLong, type Finding } from './rejection.js';
import type { ParsedSpec } from './parsedSpec.js';

/** The bounds of the spec worker: its heap and stack, and the wall-clock time one document may take. */
export interface SpecWorkerLimits {
  timeoutMs: number;
  maxOldGenerationSizeMb: number;
  maxYoungGenerationSizeMb: number;
  stackSizeMb: number;
}

/** The limits the service runs with. */
export const SPEC_WORKER_LIMITS: Readonly<SpecWorkerLimits> = Object.freeze({
  timeoutMs: 20_000,
  maxOldGenerationSizeMb: 256,
  maxYoungGenerationSizeMb: 32,
  stackSizeMb: 4,
});

/** How long a fresh worker may take to load its code before it counts as broken. */
const BOOT_TIMEOUT_MS = 60_000;

interface Job {
  id: number;
  text: string;
  resolve(spec: ParsedSpec): void;
  reject(error: Error): void;
  timer?: NodeJS.Timeout;
  timeoutMs?: number;
}

/** What the worker answers for one job (see specThread.mjs). */
interface Answer {
  id: number;
  spec?: ParsedSpec;
  rejection?: { message: string; findings: Finding[] };
  failure?: { name: string; message: string; stack?: string };
}

/**
 * One worker thread, started on first use and reused, that runs one document at a time (the rest
 * wait in order). A job past its wall-clock limit, or a worker out of memory, ends that worker:
 * the job is the client's fault (a SpecRejection) and the next job gets a fresh worker. The idle
 * worker is unref'd, so it never keeps the process alive.
 */
export class SpecWorker {
  private worker: Worker | null = null;
  private ready = false;
  /** The heap limit the current worker was started with (limits may change while it runs). */
  private heapMb = 0;
  private bootTimer: NodeJS.Timeout | null = null;
  private running: Job | null = null;
  private readonly queue: Job[] = [];
  private nextId = 1;
  private limits: SpecWorkerLimits = { ...SPEC_WORKER_LIMITS };
  private moduleUrl: URL | null = null;

  /** Parses one document in the worker; rejects with a SpecRejection when the document is at fault. */
  run(text: string): Promise<ParsedSpec> {
    return new Promise((resolve, reject) => {
      this.queue.push({ id: this.nextId++, text, resolve, reject });
      this.pump();
    });
  }

  /** Changes limits (memory ones apply from the next worker, started now when idle); answers the previous ones. */
  configure(limits: Partial<SpecWorkerLimits>): SpecWorkerLimits {
    const previous = this.limits;
    this.limits = { ...previous, ...limits };
    const resized = (['maxOldGenerationSizeMb', 'maxYoungGenerationSizeMb', 'stackSizeMb'] as const).some(
      (k) => this.limits[k] !== previous[k],
    );
    if (resized && !this.running) {
      void this.discard();
      this.pump();
    }
    return previous;
  }

  /** Ends the worker; jobs running or waiting fail (the service is closing). */
  async close(): Promise<void> {
    const jobs = [...(this.running ? [this.running] : []), ...this.queue.splice(0)];
    this.running = null;
    const ended = this.discard();
    for (const job of jobs) settle(job, undefined, new Error('The spec worker was closed.'));
    await ended;
  }

  /** Starts the next job when the worker is free and ready; lets an idle worker go. */
  private pump(): void {
    if (this.running) return;
    if (!this.queue.length) {
      this.worker?.unref();
      return;
    }
    const worker = this.worker ?? this.start();
    if (!this.ready) return;
    const job = this.queue.shift()!;
    this.running = job;
    worker.ref();
    job.timeoutMs = this.limits.timeoutMs;
    job.timer = setTimeout(() => this.timedOut(job), job.timeoutMs);
    worker.postMessage({ id: job.id, text: job.text, timeoutMs: job.timeoutMs });
    job.text = '';
  }

  private start(): Worker {
    const { maxOldGenerationSizeMb, maxYoungGenerationSizeMb, stackSizeMb } = this.limits;
    // No inherited loader flags: the worker imports plain JavaScript (see workerModuleUrl).
    const worker = new Worker(new URL('./specThread.mjs', import.meta.url), {
      execArgv: [],
      workerData: { module: (this.moduleUrl ??= workerModuleUrl()).href },
      resourceLimits: { maxOldGenerationSizeMb, maxYoungGenerationSizeMb, stackSizeMb },
    });
    this.worker = worker;
    this.ready = false;
    this.heapMb = maxOldGenerationSizeMb;
    this.bootTimer = setTimeout(
      () => this.crashed(worker, new Error(`the spec worker did not start within ${BOOT_TIMEOUT_MS / 1000} s`)),
      BOOT_TIMEOUT_MS,
    );
    this.bootTimer.unref();
    worker.on('message', (answer: Answer & { ready?: true }) => this.answered(worker, answer));
    worker.on('error', (error) => this.crashed(worker, error));
    worker.on('exit', (code) => this.crashed(worker, new Error(`the spec worker exited with code ${code}`)));
    return worker;
  }

  private answered(worker: Worker, answer: Answer & { ready?: true }): void {
    if (worker !== this.worker) return;
    if (answer.ready) {
      this.ready = true;
      if (this.bootTimer) clearTimeout(this.bootTimer);
      this.bootTimer = null;
    } else if (this.running?.id === answer.id) {
      const job = this.running;
      this.running = null;
      settle(job, answer.spec, toError(answer));
    }
    this.pump();
  }

  private timedOut(job: Job): void {
    if (this.running !== job) return;
    this.running = null;
    void this.discard();
    settle(job, undefined, tookTooLong(job.timeoutMs!));
    this.pump();
  }

  /** The worker died or failed to start: out of memory is the document's fault, anything else ours. */
  private crashed(worker: Worker, error: Error): void {
    if (worker !== this.worker) return;
    const booting = !this.ready;
    const job = this.running;
    const heapMb = this.heapMb;
    this.running = null;
    void this.discard();
    const outOfMemory = (error as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY';
    if (job) settle(job, undefined, outOfMemory ? neededTooMuchMemory(heapMb) : workerFailure(error));
    // A worker that cannot even start fails every waiting job instead of being restarted forever.
    if (booting) for (const waiting of this.queue.splice(0)) settle(waiting, undefined, workerFailure(error));
    this.pump();
  }

  /** Forgets the current worker and ends it (its late events are ignored); resolves once it is gone. */
  private async discard(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    this.ready = false;
    if (this.bootTimer) clearTimeout(this.bootTimer);
    this.bootTimer = null;
    await worker?.terminate().catch(() => undefined);
  }
}

function settle(job: Job, spec: ParsedSpec | undefined, error: Error | undefined): void {
  if (job.timer) clearTimeout(job.timer);
  if (error) job.reject(error);
  else job.resolve(spec!);
}

/** The error an answer carries, if any: the document's fault (SpecRejection) or ours (Error). */
function toError(answer: Answer): Error | undefined {
  if (answer.rejection) return new SpecRejection(answer.rejection.message, answer.rejection.findings);
  if (!answer.failure) return undefined;
  const error = new Error(`The spec worker failed: ${answer.failure.name}: ${answer.failure.message}`);
  if (answer.failure.stack) error.stack = `${error.message}\n--- in the spec worker ---\n${answer.failure.stack}`;
  return error;
}

function workerFailure(error: Error): Error {
  return new Error(`The spec worker failed: ${error.message}`, { cause: error });
}
