import { EventEmitter } from 'node:events';

/** What a write recorded an event about, as the live hub matches its subscribers' interest. */
export interface Touched {
  workspaceId: string | null;
  action: string;
  targetType: string;
  targetId: string | null;
}

/** How long after a write its signal goes out (after the caller's commit). */
const SIGNAL_DELAY_MS = 25;

const signal = new EventEmitter();
/** The writes signalled since the last signal went out (null: one did not say what it touched). */
let touched: Touched[] | null = [];
let timer: NodeJS.Timeout | null = null;

/**
 * Wakes this process's dispatcher and live hub shortly (after the caller's commit; other processes
 * poll). The writes of SIGNAL_DELAY_MS go out together, one timer for all of them, with what each
 * touched, so the hub can tell whether any of its subscribers cares.
 */
export function signalWebhookWork(write?: Touched): void {
  if (!write) touched = null;
  else touched?.push(write);
  timer ??= setTimeout(() => {
    const writes = touched;
    touched = [];
    timer = null;
    signal.emit('work', writes);
  }, SIGNAL_DELAY_MS);
  timer.unref?.();
}

/** `listener` hears each signal with the writes it covers (null: not known, treat it as anything). */
export function onWebhookWork(listener: (writes: readonly Touched[] | null) => void): () => void {
  signal.on('work', listener);
  return () => signal.off('work', listener);
}
