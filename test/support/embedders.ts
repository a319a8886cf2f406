import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Embedder } from '../../src/search/embedder.js';

/** An embedder with a bug: every call throws a plain Error carrying `secret` (it must never reach a client). */
export function failingEmbedder(secret: string): Embedder {
  return {
    model: 'failing-test',
    embed: () => Promise.reject(new Error(`${secret} (internal detail at /srv/embedder/model.bin)`)),
  };
}

/** A local OpenAI-style `/embeddings` endpoint: the same unit vector for every text while `healthy`, else 503; records each request's Authorization. */
export async function startEmbeddingsEndpoint() {
  const state = { healthy: true, authorizations: [] as (string | undefined)[], inputs: [] as string[] };
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      state.authorizations.push(req.headers.authorization);
      if (!state.healthy) return void res.writeHead(503).end();
      const input = (JSON.parse(body) as { input: string[] }).input;
      state.inputs.push(...input);
      const data = input.map((_, index) => ({ index, embedding: Array.from({ length: 8 }, (__, i) => (i === 0 ? 1 : 0)) }));
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    state,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
