import WebSocket from 'ws';

/** How the server closed a socket. */
export interface Closed {
  code: number;
  reason: string;
}

/** A graphql-transport-ws message. */
export interface Message {
  type: string;
  id?: string;
  payload?: any;
}

/** A raw graphql-transport-ws socket: its messages, and how it ended. */
export interface RawSocket {
  ws: WebSocket;
  /** Resolves once the socket is open (or with false if it never opens). */
  opened: Promise<boolean>;
  /** Resolves once it is closed, with the code and reason. */
  closed: Promise<Closed>;
  /** How it was closed, once it is. */
  close: Closed | null;
  /** The HTTP status of a refused upgrade (then there was never a socket: `close` is 1006). */
  refusedWith: number | null;
  messages: Message[];
  /** Resolves with the first message of `type` (or matching the test), or null once the socket closes without one. */
  next(match: string | ((m: Message) => boolean)): Promise<Message | null>;
  send(message: unknown): void;
}

/**
 * Opens a socket to `/graphql` of `baseUrl`, optionally from another local address (a second client
 * host on loopback) or with another subprotocol (null: none).
 */
export function openSocket(baseUrl: string, options: { localAddress?: string; protocol?: string | null } = {}): RawSocket {
  const protocol = options.protocol === undefined ? 'graphql-transport-ws' : options.protocol;
  const ws = new WebSocket(`${baseUrl.replace(/^http/, 'ws')}/graphql`, protocol === null ? [] : protocol, {
    localAddress: options.localAddress,
  });
  const waiters: (() => void)[] = [];
  const socket: RawSocket = {
    ws,
    opened: new Promise((resolve) => {
      ws.once('open', () => resolve(true));
      ws.once('close', () => resolve(false));
    }),
    closed: new Promise((resolve) =>
      ws.once('close', (code, reason) => {
        socket.close = { code, reason: reason.toString() };
        resolve(socket.close);
        for (const wake of waiters.splice(0)) wake();
      }),
    ),
    close: null,
    refusedWith: null,
    messages: [],
    async next(match) {
      const test = typeof match === 'string' ? (m: Message) => m.type === match : match;
      for (;;) {
        const found = socket.messages.find(test);
        if (found) return found;
        if (socket.close) return null;
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
    },
    send: (message) => ws.send(typeof message === 'string' ? message : JSON.stringify(message)),
  };
  ws.on('message', (data) => {
    socket.messages.push(JSON.parse(String(data)));
    for (const wake of waiters.splice(0)) wake();
  });
  ws.on('error', (error) => {
    // A refused upgrade is an error of the handshake; a socket the server closed is asserted through its close.
    const status = /^Unexpected server response: (\d+)$/.exec(error.message);
    if (status) socket.refusedWith = Number(status[1]);
  });
  return socket;
}

/** A socket after its connection_init: acknowledged, or closed by the server. */
export type Connected = RawSocket & { acked: boolean };

/** Opens a socket and sends connection_init with `token` (null: no credential); resolves once it is acknowledged or closed. */
export async function connectSocket(baseUrl: string, token: string | null, options: { localAddress?: string } = {}): Promise<Connected> {
  const socket = openSocket(baseUrl, options);
  if (await socket.opened) socket.send({ type: 'connection_init', payload: token ? { authorization: `Bearer ${token}` } : {} });
  const ack = await socket.next('connection_ack');
  return Object.assign(socket, { acked: ack !== null });
}

/** Runs one operation on an acknowledged socket; resolves with its first `next` or `error` message (null if the socket closes first). */
export async function operate(socket: RawSocket, id: string, payload: { query: string; operationName?: string; variables?: unknown }) {
  socket.send({ type: 'subscribe', id, payload });
  return socket.next((m) => m.id === id && (m.type === 'next' || m.type === 'error'));
}

/** Closes every socket and waits until they are closed. */
export async function closeAll(sockets: RawSocket[]): Promise<void> {
  for (const s of sockets) if (!s.close) s.ws.close(1000);
  await Promise.all(sockets.map((s) => s.closed));
}
