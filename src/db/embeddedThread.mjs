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
 * planner never had statistics of data written after the migrations.
 *
 * The socket runs this once no statement has come for a second; a statement arriving meanwhile
 * waits for the step in progress, so the work is cut into steps, one per idle moment: each GIN
 * index's pending list merged, the table vacuumed without its TOAST table, the TOAST table, then an
 * analysis from a sample of 3,000 rows (statistics target 10; the default's 30,000 took ~5× as long
 * on a 10,000-note table). The most changed table first; each at most once a minute (autovacuum's
 * naptime). Resolves true after a step (the next idle moment goes on), false once no table is due.
 */
async function maintain() {
  try {
    if (!steps.length) await plan();
    const step = steps.shift();
    if (!step) return false; // no table is due
    // A vacuum cannot run in a transaction block; an analysis takes its sample size there.
    if (step.startsWith('analyze')) await db.transaction((tx) => tx.exec(`set local default_statistics_target = 10; ${step}`));
    else await db.exec(step);
    return true; // the next idle moment takes the next step, or looks for the next due table
  } catch (error) {
    steps.length = 0;
    // An error of SQL (a table dropped meanwhile, a session setting such as a statement timeout) skips this round.
    if (error?.code) return false;
    throw error; // PGlite itself failed
  }
}
/** The steps of the table being maintained, in order (SQL, one statement each). */
const steps = [];
/** When each table was last taken by `maintain`. */
const maintained = new Map();

/** Chooses the table most past autovacuum's thresholds that was not taken in the last minute, and lists its steps. */
async function plan() {
  // Statistics reach the shared tables at most once a second, at the next statement: flush them now.
  await db.query('select pg_stat_force_next_flush()');
  const { rows } = await db.query(
    `select format('%I.%I', s.schemaname, s.relname) as name, s.n_dead_tup > 50 + 0.2 * s.n_live_tup as vacuum,
            (select format('%I.%I', n.nspname, t.relname) from pg_class t join pg_namespace n on n.oid = t.relnamespace
              where t.oid = c.reltoastrelid) as toast,
            array(select x.indexrelid::int8 from pg_index x join pg_class i on i.oid = x.indexrelid
                   join pg_am am on am.oid = i.relam where x.indrelid = s.relid and am.amname = 'gin') as gin
       from pg_stat_user_tables s join pg_class c on c.oid = s.relid
      where s.n_dead_tup > 50 + 0.2 * s.n_live_tup or s.n_mod_since_analyze > 50 + 0.1 * s.n_live_tup
      order by s.n_dead_tup + s.n_mod_since_analyze desc`,
  );
  const now = Date.now();
  const table = rows.find((row) => !(now - (maintained.get(row.name) ?? -Infinity) < 60_000));
  if (!table) return;
  maintained.set(table.name, now);
  if (table.vacuum) {
    // Indexes by their oid (a number): no name is written into the statement as a literal.
    for (const index of table.gin) steps.push(`select gin_clean_pending_list(${Number(index)}::oid::regclass)`);
    steps.push(`vacuum (process_toast false) ${table.name}`);
    if (table.toast) steps.push(`vacuum ${table.toast}`);
  }
  steps.push(`analyze ${table.name}`);
}

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
