import type { Embedder } from '../../src/search/embedder.js';

/** An embedder with a bug: every call throws a plain Error carrying `secret` (it must never reach a client). */
export function failingEmbedder(secret: string): Embedder {
  return {
    model: 'failing-test',
    embed: () => Promise.reject(new Error(`${secret} (internal detail at /srv/embedder/model.bin)`)),
  };
}
