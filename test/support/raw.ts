import { request } from 'node:http';
import { connect } from 'node:net';

/** An answer read off the wire: status, headers and body exactly as the server sent them. */
export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** The body parsed as JSON when it is JSON, else the text. */
  body: any;
}

/**
 * Sends `rawPath` byte for byte (no URL parsing, so `..` and `%2e%2e` reach the server as
 * written; `fetch` would normalise them away before sending).
 */
export function rawRequest(
  baseUrl: string,
  method: string,
  rawPath: string,
  options: { headers?: Record<string, string>; body?: string | Uint8Array } = {},
): Promise<RawAnswer> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = request({ host: hostname, port, method, path: rawPath, headers: options.headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        const json = String(res.headers['content-type'] ?? '').includes('json') && text;
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body: json ? JSON.parse(text) : text });
      });
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

/**
 * Writes `head` (and nothing else) on a fresh socket and resolves with what came back: the bytes
 * read before the server closed, and the socket error if it reset the connection instead.
 */
export function rawExchange(baseUrl: string, head: string): Promise<{ received: string; error: NodeJS.ErrnoException | null }> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port) });
    let received = '';
    let error: NodeJS.ErrnoException | null = null;
    socket.on('connect', () => socket.write(head));
    socket.on('data', (c: Buffer) => (received += c.toString()));
    socket.on('error', (e) => (error = e));
    socket.on('close', () => resolve({ received, error }));
  });
}
