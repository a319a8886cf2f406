// Entry of the embedded database's thread (started by embedded.ts): PGlite and the Postgres-protocol
// socket the ORM and sql() connect to, off the thread that answers requests. Plain JS importing npm
// packages and its sibling .mjs only, so the thread never needs the main thread's module loader.
import { Blob } from 'node:buffer';
import { setImmediate } from 'node:timers';
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { ProtocolServer } from './embeddedProtocol.mjs';

const { dataDir, dump, socketPath, maxConnections } = workerData;

/**
 * A failure of the database itself (a WebAssembly abort, out of memory) ends this thread with its
 * reason: the session's state is unknown after PGlite throws, so no later statement may run on it.
 */
function fatal(error) {
  parentPort.postMessage({ type: 'fatal', message: String(error?.message ?? error), stack: error?.stack });
  process.exit(1);
}

const db = await PGlite.create({ dataDir, loadDataDir: dump ? new Blob([dump]) : undefined, extensions: { vector } });
// PGlite serves every connection from one session, so a session setting holds for all of them.
// A new 16 MB WAL segment is not filled with zeros first: zero-filling one stalled the commit that
// crossed into it by ~90 ms. PostgreSQL allows skipping it; the segment's space is then taken as written.
await db.exec('set wal_init_zero = off');
/**
 * What autovacuum does on a server, which PGlite (PostgreSQL in single-user mode) never runs: a table
 * whose dead rows or changes since its last analysis pass autovacuum's default thresholds is
 * vacuumed and analysed (or only analysed). Without it, every update's dead row version and index
 * entry stayed for good, the full-text indexes' pending lists were merged only by the write that
 * overflowed them (one PUT then took ~100–300 ms, and every caller queued behind it), and the
 * planner never had statistics of data written after the migrations. One table per idle moment
 * (the socket runs this once no statement has come for a second), the most changed first: a
 * statement arriving meanwhile waits for that one table. Resolves true while more are due.
 */
async function maintain() {
  try {
    // Statistics reach the shared tables at most once a second, at the next statement: flush them now.
    await db.query('select pg_stat_force_next_flush()');
    const { rows } = await db.query(
      `select format('%I.%I', schemaname, relname) as name, n_dead_tup > 50 + 0.2 * n_live_tup as vacuum
         from pg_stat_user_tables
        where n_dead_tup > 50 + 0.2 * n_live_tup or n_mod_since_analyze > 50 + 0.1 * n_live_tup
        order by n_dead_tup + n_mod_since_analyze desc`,
    );
    const now = Date.now();
    // A table is taken at most once a minute (autovacuum's naptime), whatever its statistics say.
    const due = rows.filter((row) => !(now - (maintained.get(row.name) ?? -Infinity) < 60_000));
    if (!due.length) return false;
    const [table] = due;
    maintained.set(table.name, now);
    await db.exec(table.vacuum ? `vacuum (analyze) ${table.name}` : `analyze ${table.name}`);
    return due.length > 1;
  } catch (error) {
    // An error of SQL (a table dropped meanwhile, a session setting such as a statement timeout) skips this round.
    if (error?.code) return false;
    throw error; // PGlite itself failed
  }
}
/** When each table was last vacuumed or analysed by `maintain`. */
const maintained = new Map();

// A failure of PGlite itself ends the thread (errors of SQL travel inside the protocol and never throw).
const server = new ProtocolServer({ db, path: socketPath, maxConnections, onFatal: fatal, onIdle: maintain });
await server.start();

parentPort.on('message', async (message) => {
  try {
    if (message.type === 'dump') {
      const tarball = await (await db.dumpDataDir('none')).arrayBuffer();
      parentPort.postMessage({ type: 'dumped', id: message.id, tarball }, [tarball]);
    } else if (message.type === 'close') {
      await server.stop();
      await db.close();
      parentPort.postMessage({ type: 'closed', id: message.id });
    } else if (message.type === 'fault') {
      // Tests: the thread dies as it would on a WebAssembly abort (an exception nothing catches).
      setImmediate(() => {
        throw new Error(message.reason);
      });
    }
  } catch (error) {
    fatal(error);
  }
});
parentPort.postMessage({ type: 'ready' });
