/**
 * The hostile WebSocket clients of the bench, in a process of their own (so the load generator's
 * event loop is not theirs): `keyed` clients of one key sending connection_init and `anonymous`
 * clients sending nothing. With `reconnect` each opens a new socket a second after the server
 * closes (or refuses) its last one, as a graphql-ws client retries; without, each holds what the
 * server lets it hold. Started by sockets.ts with `<ws url> <key> <keyed> <anonymous> <reconnect>`;
 * it sends `ready` once every client has tried once, and on `stop` answers with what it saw (and
 * the CPU it spent itself, on the same cores as the service), then exits.
 */
import WebSocket from 'ws';

/** Hostile sockets come from their own loopback addresses: the console (127.0.0.1) is another client host, as in production. */
const KEYED_ADDRESS = '127.0.0.3';
const ANONYMOUS_ADDRESS = '127.0.0.2';
const RECONNECT_MS = 1000;

/** What the hostile clients saw: attempts, acknowledged sockets and close codes. */
class Tally {
  attempts = 0;
  acked = 0;
  readonly closes = new Map<number, number>();
  private readonly started = Date.now();
  private readonly cpu = process.cpuUsage();

  closed(code: number): void {
    this.closes.set(code, (this.closes.get(code) ?? 0) + 1);
  }

  text(): string {
    const seconds = Math.max(1, (Date.now() - this.started) / 1000);
    const codes = [...this.closes].map(([code, n]) => `${code} × ${n}`).join(', ');
    const { user, system } = process.cpuUsage(this.cpu);
    const cpu = Math.round((user + system) / 1000 / seconds);
    return `hostile: ${Math.round(this.attempts / seconds)} sockets/s, ${this.acked} acked, closes ${codes || 'none'}, own CPU ${cpu} ms/s`;
  }
}

const [url, key, keyed, anonymous, reconnect] = process.argv.slice(2);
const tally = new Tally();
let stopped = false;

/** One hostile client: opens a socket (with `token`, sends connection_init), and opens another a second after it is closed. */
function client(token: string | null, localAddress: string, first: () => void): void {
  tally.attempts++;
  const ws = new WebSocket(url, 'graphql-transport-ws', { localAddress });
  ws.on('error', () => undefined);
  ws.on('open', () => {
    first();
    if (token) ws.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${token}` } }));
  });
  ws.on('message', (data) => {
    if ((data as Buffer).toString().includes('"connection_ack"')) tally.acked++;
  });
  ws.on('close', (code) => {
    first();
    tally.closed(code);
    if (!stopped && reconnect === 'reconnect') setTimeout(() => !stopped && client(token, localAddress, () => undefined), RECONNECT_MS);
  });
}

await Promise.all([
  ...Array.from({ length: Number(keyed) }, () => new Promise<void>((resolve) => client(key, KEYED_ADDRESS, resolve))),
  ...Array.from({ length: Number(anonymous) }, () => new Promise<void>((resolve) => client(null, ANONYMOUS_ADDRESS, resolve))),
]);
process.send!('ready');
process.on('message', (message) => {
  if (message !== 'stop') return;
  stopped = true;
  process.send!(tally.text(), () => process.exit(0));
});
