import { EventEmitter } from 'node:events';

const signal = new EventEmitter();

/** Wakes this process's dispatcher shortly (after the caller's commit); other processes poll. */
export function signalWebhookWork(): void {
  setTimeout(() => signal.emit('work'), 25).unref?.();
}

export function onWebhookWork(listener: () => void): () => void {
  signal.on('work', listener);
  return () => signal.off('work', listener);
}
