// Entry of the embedded database's thread (started by embedded.ts): PGlite and the Postgres-protocol
// socket the ORM and sql() connect to, off the thread that answers requests. Plain JS importing npm
// packages only, so the thread never needs the main thread's module loader.
import { Blob } from 'node:buffer';
import { setImmediate } from 'node:timers';
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

const { dataDir, dump, socketPath, maxConnections } = workerData;

/**
 * A failure of the database itself (a WebAssembly abort, out of memory) ends this thread with its
 * reason: the socket server's queue stops for good after a query throws, so every later statement
 * would wait for ever. Errors of SQL travel inside the protocol and never throw here.
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
const execute = db.execProtocolRawStream.bind(db);
db.execProtocolRawStream = async (...args) => {
  try {
    return await execute(...args);
  } catch (error) {
    fatal(error);
    throw error;
  }
};

const server = new PGLiteSocketServer({ db, path: socketPath, maxConnections });
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
