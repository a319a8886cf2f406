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
// A failure of PGlite itself ends the thread (errors of SQL travel inside the protocol and never throw).
const server = new ProtocolServer({ db, path: socketPath, maxConnections, onFatal: fatal });
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
