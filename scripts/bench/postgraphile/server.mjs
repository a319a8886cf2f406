/**
 * PostGraphile 5 (the amber preset, its own node:http server through grafserv) serving the plain
 * indexed baseline's table, for the bench's side-by-side note GET and PUT: a generic GraphQL layer
 * over the same rows, in a process of its own. Built by the bench only and never shipped; its
 * dependencies are this folder's own (`npm ci` here, done by the bench on first use).
 *
 *   GET  note: query  { note: benchPlainNoteByWorkspaceIdAndPath(workspaceId, path) { …columns } }
 *   PUT  note: mutation updateBenchPlainNoteByWorkspaceIdAndPath(input: { workspaceId, path, benchPlainNotePatch })
 *
 * Environment: DATABASE_URL, SCHEMA (the schema holding only the table). Prints its URL.
 */
import { createServer } from 'node:http';

// PostGraphile 5 asks for Node 22 (its `engines`); the one thing it uses that Node 20 lacks is
// Promise.withResolvers, given here before it loads (hence the dynamic imports below).
if (!Promise.withResolvers) {
  Promise.withResolvers = function withResolvers() {
    let resolve;
    let reject;
    const promise = new this((res, rej) => {
      resolve = res;
      reject = rej;
    });
    return { promise, resolve, reject };
  };
}
const { postgraphile } = await import('postgraphile');
const { makePgService } = await import('postgraphile/adaptors/pg');
const { grafserv } = await import('postgraphile/grafserv/node');
const { PostGraphileAmberPreset } = await import('postgraphile/presets/amber');

const preset = {
  extends: [PostGraphileAmberPreset],
  // Pool of 10 connections, as the service's statement pool and the plain server's.
  pgServices: [
    makePgService({ connectionString: process.env.DATABASE_URL, schemas: [process.env.SCHEMA ?? 'bench_plain'], poolConfig: { max: 10 } }),
  ],
  grafserv: { watch: false, graphiql: false },
  grafast: { explain: false },
};

const pgl = postgraphile(preset);
const serv = pgl.createServ(grafserv);
const server = createServer();
server.on('error', (error) => {
  console.error(error);
  process.exit(1);
});
await serv.addTo(server);
server.listen(0, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${server.address().port}`));
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => void pgl.release().then(() => process.exit(0)));
});
