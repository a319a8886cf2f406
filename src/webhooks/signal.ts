import { EventEmitter } from 'node:events';

/** What a write recorded an event about, as the live hub matches its subscribers' interest. */
export interface Touched {
  workspaceId: string | null;
  action: string;
  targetType: string;
  targetId: string | null;
}

/** How long after a write its signal goes out: usually after the caller's commit (a read that misses it leaves it to the next poll). */
const SIGNAL_DELAY_MS = 25;

const signal = new EventEmitter();

/**
 * Wakes this process's dispatcher and live hub shortly (SIGNAL_DELAY_MS; other processes poll),
 * telling what the write touched (when the caller knows it), so the hub can tell whether any
 * of its subscribers cares.
 */
export function signalWebhookWork(write?: Touched): void {
  setTimeout(() => signal.emit('work', write ?? null), SIGNAL_DELAY_MS).unref?.();
}

/** `listener` hears each signal with what its write touched (null: not known, treat it as anything). */
export function onWebhookWork(listener: (write: Touched | null) => void): () => void {
  signal.on('work', listener);
  return () => signal.off('work', listener);
}
