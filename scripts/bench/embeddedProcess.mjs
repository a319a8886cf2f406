// The embedded database in a child process instead of a worker thread: the other half of the
// measurement in scripts/bench-embedded-host.ts (the service runs the thread: src/db/embeddedThread.mjs).
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { ProtocolServer } from '../../src/db/embeddedProtocol.mjs';

const [dataDir, socketPath] = process.argv.slice(2);
const db = await PGlite.create({ dataDir, extensions: { vector } });
await db.exec('set wal_init_zero = off');
const server = new ProtocolServer({
  db,
  path: socketPath,
  maxConnections: 64,
  onFatal: (error) => {
    console.error(error);
    process.exit(1);
  },
});
await server.start();
process.on('message', async (message) => {
  if (message === 'close') {
    await server.stop();
    await db.close();
    process.exit(0);
  }
});
process.send('ready');
