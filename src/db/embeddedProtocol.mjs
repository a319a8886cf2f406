// The Postgres-protocol socket in front of the embedded PGlite (started by embeddedThread.mjs).
// PGlite is one PostgreSQL session: every socket connection shares it, one unit of work at a time.
// A unit is a whole round of the extended query protocol (Parse … Sync, as node-postgres sends
// one statement with parameters), a simple query, or a start-up message, so one connection's
// Parse/Bind/Execute can never be split by another's: statements keep their parameters (no values
// inlined into SQL text), and named prepared statements are shared by every connection, as they
// live in the one session (see `Prepared`). While the session is inside a transaction, only the
// connection that opened it is served, as on a server where it would own its backend.
import { createServer } from 'node:net';
import { clearTimeout, setTimeout } from 'node:timers';
// Lets the event loop read the sockets (a check phase) before the next unit is chosen.
import { setImmediate as yieldToIo } from 'node:timers/promises';

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;
const CANCEL_REQUEST = 80877102;
const PROTOCOL_3 = 196608;
/** What the server answers to a Parse it skips because the session already holds the statement. */
const PARSE_COMPLETE = Buffer.from([0x31, 0, 0, 0, 4]);
/** Messages of the extended protocol gathered until the Sync (or Flush) that ends their round. */
const EXTENDED = new Set(['P', 'B', 'D', 'E', 'C']);
/** Text that may drop prepared statements (DEALLOCATE, DISCARD): the unit's effect is read back from the session. */
const MAY_DROP = /deallocate|discard/i;
/** Message types a client may send after start-up; anything else closes its connection. */
const FRONTEND = new Set(['P', 'B', 'D', 'E', 'C', 'S', 'H', 'Q', 'F', 'd', 'c', 'f', 'p', 'X']);
/** The longest start-up packet PostgreSQL accepts. */
const MAX_STARTUP = 10_000;
/**
 * A unit of at most this many bytes (a read, a note of a few KB) may be served before larger ones
 * queued ahead of it (an upload's 128 KiB part, a long note), each of which it passes over at most
 * MAX_PASSES times: see ProtocolServer's #next.
 */
const SMALL_UNIT_BYTES = 8 * 1024;
const MAX_PASSES = 4;

/**
 * Named prepared statements of the session, by name: what their Parse carried (text and parameter
 * types). node-postgres remembers per connection which names it prepared; a second connection
 * preparing a name the session already holds would fail ("already exists"), so that Parse is
 * answered here with ParseComplete and the statement is shared. A name prepared again with other
 * text goes to PostgreSQL, which refuses it as a server would on one connection. What the map holds
 * is read back from the session (`pg_prepared_statements`) after a unit that prepared a new name or
 * may have dropped some (a Close of a statement, DEALLOCATE, DISCARD), so it never claims a
 * statement the session lacks, nor forgets one it has.
 */
class Prepared {
  #statements = new Map();

  /** The Parse's name, text and the rest of its body (text and types), or null for the unnamed statement. */
  static read(message) {
    const end = message.indexOf(0, 5);
    if (end <= 5) return null;
    const textEnd = message.indexOf(0, end + 1);
    return { name: message.toString('latin1', 5, end), text: message.toString('utf8', end + 1, textEnd), body: message.subarray(end + 1) };
  }

  /** Whether a unit's messages may drop statements of the session. */
  static mayDrop(messages) {
    return messages.some(
      (m) =>
        (m[0] === 0x43 /* C */ && m[5] === 0x53) /* of a statement */ ||
        ((m[0] === 0x51 || m[0] === 0x50) && MAY_DROP.test(m.toString('latin1', 5))),
    );
  }

  holds(parse) {
    return this.#statements.get(parse.name)?.equals(parse.body) ?? false;
  }

  /**
   * After a unit that prepared `parsed` (null: none) or may have dropped statements: the map as the
   * session now holds it. An error of SQL reading it (a failed transaction) leaves the map as it
   * was: in such a transaction the unit's own statements failed too.
   */
  async settle(db, parsed) {
    let rows;
    try {
      ({ rows } = await db.query('select name, statement from pg_prepared_statements'));
    } catch (error) {
      if (error?.code) return;
      throw error;
    }
    const held = new Map(rows.map((row) => [row.name, row.statement]));
    for (const name of this.#statements.keys()) if (!held.has(name)) this.#statements.delete(name);
    if (parsed && held.get(parsed.name) === parsed.text) this.#statements.set(parsed.name, Buffer.from(parsed.body));
  }
}

/** One socket connection: its unread bytes, the extended-protocol messages of the round being gathered. */
class Connection {
  constructor(socket) {
    this.socket = socket;
    /** Bytes received and not yet cut into messages, kept as they came until `need` of them are there. */
    this.chunks = [];
    this.size = 0;
    this.need = 0;
    this.round = [];
    this.started = false;
    this.open = true;
    /** It said Terminate, or its socket ended: closed once its queued units have run. */
    this.ending = false;
    /** Its last unit ended with Flush, not Sync: it is inside a round, which nothing may split. */
    this.midRound = false;
  }
}

export class ProtocolServer {
  #db;
  #path;
  #maxConnections;
  #onFatal;
  #server = null;
  #connections = new Set();
  /** Units waiting for the session, in arrival order: { connection, messages, end, bytes, passed }. */
  #queue = [];
  #running = false;
  /** The connection whose unit ran last: inside a transaction, only it is served. */
  #owner = null;
  #prepared = new Prepared();
  #failed = false;
  #onIdle;
  #idleMs;
  #idleTimer = null;
  /** Units served since the idle work last ran: without any, there is nothing new for it to do. */
  #servedSinceIdle = 0;
  /** The serving loop or the idle work running now, if either is. */
  #busy = null;
  #stopping = false;

  /**
   * `onFatal(error)`: PGlite itself threw (a WebAssembly abort): the session cannot go on.
   * `onIdle()`: work for the session once no unit has come for `idleMs` after some were served
   * (units arriving meanwhile wait for it, as for any unit); never inside a transaction. It resolves
   * true when it has more to do at the next idle moment; what it throws is fatal.
   */
  constructor({ db, path, maxConnections, onFatal, onIdle, idleMs = 1000 }) {
    this.#db = db;
    this.#path = path;
    this.#maxConnections = maxConnections;
    this.#onFatal = onFatal;
    this.#onIdle = onIdle;
    this.#idleMs = idleMs;
  }

  start() {
    this.#server = createServer((socket) => this.#accept(socket));
    this.#server.maxConnections = this.#maxConnections;
    return new Promise((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(this.#path, () => {
        this.#server.off('error', reject);
        resolve();
      });
    });
  }

  /** Stops serving: no unit starts after this; the one running (or the idle work) is waited for. */
  async stop() {
    const server = this.#server;
    this.#server = null;
    this.#stopping = true;
    clearTimeout(this.#idleTimer);
    this.#onIdle = undefined;
    for (const connection of this.#connections) this.#close(connection);
    if (server) await new Promise((resolve) => server.close(() => resolve()));
    await this.#busy;
  }

  #accept(socket) {
    const connection = new Connection(socket);
    this.#connections.add(connection);
    socket.setNoDelay(true);
    socket.on('data', (data) => this.#received(connection, data));
    socket.on('error', () => this.#end(connection));
    socket.on('close', () => this.#end(connection));
  }

  /** Cuts the connection's complete messages out of its bytes and queues them as units. */
  #received(connection, data) {
    if (!connection.open || connection.ending) return;
    connection.chunks.push(data);
    connection.size += data.length;
    // A large message arrives in many reads: they are joined once it is whole, not at every read.
    if (connection.size < connection.need) return;
    let buffer = connection.chunks.length === 1 ? connection.chunks[0] : Buffer.concat(connection.chunks, connection.size);
    connection.need = 0;
    while (connection.open) {
      if (!connection.started) {
        // Before start-up, messages carry no type byte: a length, then a code or the protocol version.
        if (buffer.length < 8) break;
        const length = buffer.readInt32BE(0);
        if (length < 8 || length > MAX_STARTUP) {
          this.#close(connection); // not the protocol
          break;
        }
        if (buffer.length < length) {
          connection.need = length;
          break;
        }
        const code = buffer.readInt32BE(4);
        const message = buffer.subarray(0, length);
        buffer = buffer.subarray(length);
        if (code === SSL_REQUEST || code === GSSENC_REQUEST) connection.socket.write('N');
        else if (code === CANCEL_REQUEST)
          this.#close(connection); // no backend to signal: the request is dropped, as its connection expects no answer
        else if (code === PROTOCOL_3 && message[length - 1] === 0) {
          connection.started = true;
          this.#enqueue(connection, [message]);
        } else {
          this.#close(connection);
        }
        continue;
      }
      if (buffer.length < 5) break;
      const length = 1 + buffer.readInt32BE(1);
      if (length < 5) {
        this.#close(connection); // not the protocol
        break;
      }
      if (buffer.length < length) {
        connection.need = length;
        break;
      }
      const message = buffer.subarray(0, length);
      buffer = buffer.subarray(length);
      const type = String.fromCharCode(message[0]);
      if (!FRONTEND.has(type)) {
        this.#close(connection); // not a message a client sends: PGlite would take it for a start-up packet, or fail
      } else if (type === 'X') {
        this.#end(connection);
      } else if (EXTENDED.has(type)) {
        connection.round.push(message);
      } else if (type === 'S' || type === 'H') {
        connection.round.push(message);
        this.#enqueue(connection, connection.round);
        connection.round = [];
      } else {
        // A simple query, a password, COPY data: a unit of its own (after any round gathered before it).
        if (connection.round.length) {
          this.#enqueue(connection, connection.round);
          connection.round = [];
        }
        this.#enqueue(connection, [message]);
      }
    }
    connection.chunks = buffer.length ? [buffer] : [];
    connection.size = buffer.length;
  }

  #enqueue(connection, messages, end = false) {
    let bytes = 0;
    for (const message of messages ?? []) bytes += message.length;
    this.#queue.push({ connection, messages, end, bytes, passed: 0 });
    this.#run();
  }

  /**
   * The queued unit to serve next outside a transaction: the first in arrival order, unless it is
   * large (an upload's part, a long note) and a small one of another connection waits behind it
   * (a read, a short write): that one goes first, as a caller waiting for a small answer should
   * not wait for every large write queued before it. A unit is passed over at most MAX_PASSES
   * times, so large ones are never starved; a connection's own units keep their order.
   */
  #next() {
    const head = this.#queue[0];
    if (this.#queue.length < 2 || head.bytes <= SMALL_UNIT_BYTES || head.passed >= MAX_PASSES) return 0;
    const behind = new Set([head.connection]);
    for (let i = 1; i < this.#queue.length; i++) {
      const unit = this.#queue[i];
      if (!behind.has(unit.connection) && !unit.end && unit.bytes <= SMALL_UNIT_BYTES) {
        head.passed++;
        return i;
      }
      behind.add(unit.connection);
    }
    return 0;
  }

  /**
   * Serves queued units one at a time; inside a transaction (or a round its connection has not
   * ended with Sync) only its owner's. A transaction whose connection ended is rolled back before
   * anything else runs.
   */
  #run() {
    if (this.#running || this.#failed || this.#stopping) return;
    this.#running = true;
    // Served from the next check phase: the statement runs on this thread and holds it, so the other
    // sockets' bytes that came meanwhile are read (and their units queued) first, for #next to choose.
    this.#busy = yieldToIo()
      .then(() => this.#serve())
      .finally(() => {
        this.#running = false;
        this.#busy = null;
        this.#armIdle();
      });
  }

  async #serve() {
    try {
      while (!this.#stopping && (this.#queue.length || (this.#db.isInTransaction() && !this.#owner?.open))) {
        let index;
        const owner = this.#owner;
        if (this.#db.isInTransaction() && !owner?.open) {
          await this.#db.exec('rollback'); // takes the session's query lock itself
          continue;
        }
        if (owner?.open && (owner.midRound || this.#db.isInTransaction())) {
          index = this.#queue.findIndex((unit) => unit.connection === owner);
          if (index < 0) break; // the owner's next message has not arrived yet
        } else index = this.#next();
        const [unit] = this.#queue.splice(index, 1);
        if (!unit.connection.open) continue;
        if (unit.end) {
          this.#close(unit.connection);
          continue;
        }
        this.#owner = unit.connection;
        this.#servedSinceIdle++;
        await this.#execute(unit);
        await yieldToIo();
      }
    } catch (error) {
      this.#failed = true;
      this.#onFatal(error);
    }
  }

  /** (Re)starts the wait for the idle work: `idleMs` without a unit, after some were served. */
  #armIdle() {
    if (!this.#onIdle || this.#failed || !this.#servedSinceIdle) return;
    clearTimeout(this.#idleTimer);
    this.#idleTimer = setTimeout(() => this.#idle(), this.#idleMs);
    this.#idleTimer.unref();
  }

  #idle() {
    const owner = this.#owner;
    if (this.#running || this.#stopping || this.#queue.length || this.#failed || !this.#onIdle) return;
    if (this.#db.isInTransaction() || (owner?.open && owner.midRound)) return;
    this.#running = true;
    this.#servedSinceIdle = 0;
    this.#busy = this.#onIdle()
      .then(
        (more) => {
          if (more) this.#servedSinceIdle++; // more to do: wait for the next idle moment
        },
        (error) => {
          this.#failed = true;
          this.#onFatal(error);
        },
      )
      .finally(() => {
        this.#running = false;
        this.#busy = null;
        this.#run(); // units that came meanwhile
      });
  }

  async #execute({ connection, messages }) {
    let prefix = null;
    let parse = null;
    const first = messages[0];
    if (first[0] === 0x50 /* P */) {
      parse = Prepared.read(first);
      if (parse && this.#prepared.holds(parse)) {
        messages = messages.slice(1);
        prefix = PARSE_COMPLETE;
        parse = null;
      }
    }
    const write = (bytes) => {
      if (connection.open && connection.socket.writable) connection.socket.write(Buffer.from(bytes));
    };
    if (prefix) write(prefix);
    if (!messages.length) return;
    const input = messages.length === 1 ? messages[0] : Buffer.concat(messages);
    await this.#db.runExclusive(() =>
      this.#db.execProtocolRawStream(new Uint8Array(input.buffer, input.byteOffset, input.length), { onRawData: write }),
    );
    connection.midRound = messages[messages.length - 1][0] === 0x48; /* H: Flush */
    // Read back what the session holds; not inside a round (the reading's own statement would split it).
    if ((parse || Prepared.mayDrop(messages)) && !connection.midRound) await this.#prepared.settle(this.#db, parse);
  }

  /**
   * A connection said Terminate or its socket ended: what it sent before still runs (a COMMIT
   * followed by Terminate commits, as on a server), then it is closed.
   */
  #end(connection) {
    if (!connection.open || connection.ending) return;
    connection.ending = true;
    if (this.#queue.some((unit) => unit.connection === connection)) this.#enqueue(connection, null, true);
    else this.#close(connection);
  }

  /** A connection ends: its waiting units are dropped, and a transaction it left open is rolled back (see #run). */
  #close(connection) {
    if (!connection.open) return;
    connection.open = false;
    this.#connections.delete(connection);
    this.#queue = this.#queue.filter((unit) => unit.connection !== connection);
    if (!connection.socket.destroyed) connection.socket.destroy();
    this.#run();
  }
}
