/**
 * The bench's scenarios, one row each, like the REST route table: the runner reads only this.
 * Consecutive autocannon variants of a row run side by side (every round runs each once in turn);
 * sequential and pgbench variants run once, where they stand. Variants on another server than the
 * service (the plain baselines, the database alone) run on PostgreSQL only.
 */
import {
  conditionalTree,
  cycling,
  embeddingIdle,
  settledService,
  FTS_PATHS,
  FTS_WARM_PATHS,
  FTS_QUESTION_PATHS,
  FTS_WARM_QUESTION_PATHS,
  mixedWorkload,
  noteCreates,
  noteUpdates,
  postgraphileGets,
  postgraphileUpdates,
  pngUploads,
  SEMANTIC_PATHS,
  HYBRID_NEW_PATHS,
  HYBRID_PATHS,
  SEMANTIC_WARM_PATHS,
  serviceNote,
  SERVICE_NOTE_ROUTE,
  spreadGets,
} from './loads.js';
import { importInBackground } from './archives.js';
import { imageImport, searchIndexMemory, threeUploads, twentyPuts } from './stall.js';
import { mcpListeners } from './listeners.js';
import { hostileSockets } from './sockets.js';
import { autoFailoverDrill, promotionDrill } from './failover.js';
import { OPTIONS } from './options.js';
import type { AutocannonLoad, Bench, ConnectLoad, Drive, Scenario, SequentialLoad } from './types.js';

/** A variant driven by autocannon (side by side with its autocannon neighbours). */
const autocannon = (load: (b: Bench) => AutocannonLoad): Drive => ({ kind: 'autocannon', load });
/** A variant driven one request at a time. */
const sequential = (load: (b: Bench) => SequentialLoad): Drive => ({ kind: 'sequential', load });
/** A variant of WebSocket connections, one at a time. */
const connect = (load: (b: Bench) => ConnectLoad): Drive => ({ kind: 'connect', load });

/** The hostile WebSocket clients of the sockets scenario: 500 of one key, 500 that never authenticate. */
const HOSTILE = (b: Bench, reconnect: boolean) => () => hostileSockets(b, 500, 500, reconnect);
const SIMPLE_GET = (b: Bench) => ({ url: `${b.base}/api/v1/workspaces/-/changelog?limit=10`, headers: b.auth });

const HOT_NOTE = 'team/7/note-7';

/** The stall probe: a note GET every 10 ms, while `during` (if any) runs. */
const STALL_PROBE =
  (during?: SequentialLoad['during']) =>
  (b: Bench): SequentialLoad => ({
    paths: [serviceNote(b, HOT_NOTE).slice(b.base.length)],
    headers: b.auth,
    // With other work, only while it runs: every GET measured waited beside it.
    count: during ? 1 : 300,
    warmPaths: Array.from({ length: 300 }, () => serviceNote(b, HOT_NOTE).slice(b.base.length)),
    paceMs: 10,
    during,
  });
const GRAPHQL_NOTE =
  'query($p: String!) { memoryNote(workspace: "-", path: $p) { id workspaceId path kind body links tags createdAt updatedAt accessedAt } }';

/** Every scenario, in the order they run. */
export const SCENARIOS: Scenario[] = [
  {
    id: 'note-get',
    alias: 1,
    name: '1 GET note',
    needs: ['notes'],
    variants: [
      {
        id: 'rest',
        label: 'REST',
        connections: 10,
        drive: autocannon((b) => ({ options: { url: serviceNote(b, HOT_NOTE), headers: b.auth } })),
      },
      {
        id: 'graphql',
        label: 'POST /graphql',
        connections: 10,
        drive: autocannon((b) => ({
          options: {
            url: `${b.base}/graphql`,
            method: 'POST',
            headers: { ...b.auth, 'content-type': 'application/json' },
            body: JSON.stringify({ query: GRAPHQL_NOTE, variables: { p: HOT_NOTE } }),
          },
        })),
      },
      {
        id: 'plain-http',
        label: 'plain pg baseline',
        connections: 10,
        server: 'plain-http',
        drive: autocannon((b) => ({ options: { url: `${b.base}/note?path=${HOT_NOTE}` } })),
      },
      {
        id: 'rest-50',
        label: 'REST, 10k notes',
        connections: 50,
        drive: autocannon((b) => ({ ...spreadGets(b, SERVICE_NOTE_ROUTE, b.auth), databaseStats: b.pool })),
      },
      {
        id: 'koa-50',
        label: 'plain Koa+pg (select + accessed_at update), 10k notes',
        connections: 50,
        server: 'plain-koa',
        drive: autocannon((b) => spreadGets(b, '/note', {})),
      },
      {
        id: 'koa-indexed-50',
        label: 'plain Koa+pg, own table with only the search index (select + accessed_at update), 10k notes',
        connections: 50,
        server: 'plain-koa-indexed',
        drive: autocannon((b) => ({ ...spreadGets(b, '/note', {}), databaseStats: b.pool })),
      },
      {
        id: 'postgraphile-50',
        label: "PostGraphile 5 on the plain server's own table (select by the unique key), 10k notes",
        connections: 50,
        server: 'postgraphile',
        drive: autocannon((b) => ({ ...postgraphileGets(b), databaseStats: b.pool })),
      },
    ],
    ratios: [
      {
        key: 'restOverGraphql',
        label: 'REST / POST /graphql',
        of: { variant: 'rest', name: 'REST' },
        over: { variant: 'graphql', name: 'POST /graphql' },
      },
      {
        key: 'restOverPlainPg',
        label: 'REST / plain pg',
        of: { variant: 'rest', name: 'REST' },
        over: { variant: 'plain-http', name: 'plain pg' },
      },
      {
        key: 'getNoteOverPlainKoa',
        label: 'GET note',
        of: { variant: 'rest-50', name: 'service' },
        over: { variant: 'koa-50', name: 'plain Koa+pg' },
        target: { min: 0.8 },
      },
      {
        key: 'getNoteOverPlainIndexed',
        label: 'GET note, plain server on its own table',
        of: { variant: 'rest-50', name: 'service' },
        over: { variant: 'koa-indexed-50', name: 'plain Koa+pg (own table)' },
        target: { min: 0.9, cpuAtMost: 0.25 },
      },
      {
        key: 'getNotePostGraphileOverPlainIndexed',
        label: 'GET note, PostGraphile 5 against the plain server on its own table',
        of: { variant: 'postgraphile-50', name: 'PostGraphile 5' },
        over: { variant: 'koa-indexed-50', name: 'plain Koa+pg (own table)' },
      },
      {
        key: 'getNoteOverPostGraphile',
        label: 'GET note, the service against PostGraphile 5',
        of: { variant: 'rest-50', name: 'service' },
        over: { variant: 'postgraphile-50', name: 'PostGraphile 5' },
      },
    ],
    notes:
      'One hot note at 10 connections: REST vs the same query over POST /graphql vs node:http + pg reading the row. ' +
      'Then every seeded note in turn at 50 connections: the service vs a plain Koa + pg server with the same two statements (select, accessed_at update), ' +
      "on the service's table and on a table of its own holding only the unique (workspace, path) key and the search index; " +
      'WAL and rows written per request (HOT updates among them) for the service and the plain server on its own table.',
  },
  {
    id: 'note-put',
    alias: 2,
    name: '2 PUT note',
    needs: ['notes'],
    variants: [
      {
        id: 'update',
        label: 'update',
        connections: 50,
        drive: autocannon((b) => ({ ...noteUpdates(`${b.base}${SERVICE_NOTE_ROUTE}`, b.auth), databaseStats: b.pool })),
      },
      {
        id: 'update-plain-http',
        label: 'update, plain pg baseline (note + audit + outbox, one statement)',
        connections: 50,
        server: 'plain-http',
        drive: autocannon((b) => noteUpdates(`${b.base}/note`, {})),
      },
      {
        id: 'update-koa',
        label: 'update, plain Koa+pg (insert … on conflict do update)',
        connections: 50,
        server: 'plain-koa',
        drive: autocannon((b) => noteUpdates(`${b.base}/note`, {})),
      },
      {
        id: 'update-koa-indexed',
        label: 'update, plain Koa+pg, own table with only the search index (insert … on conflict do update)',
        connections: 50,
        server: 'plain-koa-indexed',
        drive: autocannon((b) => ({ ...noteUpdates(`${b.base}/note`, {}), databaseStats: b.pool })),
      },
      {
        id: 'update-postgraphile',
        label: "update, PostGraphile 5 on the plain server's own table (its generated update by the unique key)",
        connections: 50,
        server: 'postgraphile',
        drive: autocannon((b) => ({ ...postgraphileUpdates(b), databaseStats: b.pool })),
      },
      {
        id: 'update-small',
        label: 'update, bodies of a few bytes',
        connections: 50,
        drive: autocannon((b) => noteUpdates(`${b.base}${SERVICE_NOTE_ROUTE}`, b.auth, true)),
      },
      {
        id: 'update-small-koa',
        label: 'update, bodies of a few bytes, plain Koa+pg',
        connections: 50,
        server: 'plain-koa',
        drive: autocannon((b) => noteUpdates(`${b.base}/note`, {}, true)),
      },
      {
        id: 'update-lean',
        label: 'update, note history and near-duplicate check off',
        connections: 50,
        server: 'service-lean',
        drive: autocannon((b) => noteUpdates(`${b.base}${SERVICE_NOTE_ROUTE}`, b.auth)),
      },
      { id: 'create', label: 'create', connections: 50, drive: autocannon((b) => noteCreates(`${b.base}${SERVICE_NOTE_ROUTE}`, b.auth)) },
      {
        id: 'create-lean',
        label: 'create, note history and near-duplicate check off',
        connections: 50,
        server: 'service-lean',
        drive: autocannon((b) => noteCreates(`${b.base}${SERVICE_NOTE_ROUTE}`, b.auth)),
      },
      {
        id: 'pgbench',
        label: 'update statement, database alone (pgbench)',
        connections: 50,
        server: 'database',
        drive: { kind: 'pgbench' },
      },
    ],
    ratios: [
      {
        key: 'putNoteOverPlainKoa',
        label: 'PUT note',
        of: { variant: 'update', name: 'service' },
        over: { variant: 'update-koa', name: 'plain Koa+pg' },
        target: { min: 0.6, p99Below: 60 },
      },
      {
        key: 'putNoteOverPlainIndexed',
        label: 'PUT note, plain server on its own table',
        of: { variant: 'update', name: 'service' },
        over: { variant: 'update-koa-indexed', name: 'plain Koa+pg (own table)' },
        target: { min: 0.9, p99AtMost: 1.3, cpuAtMost: 0.35, walAtMost: 2 },
      },
      {
        key: 'putNotePostGraphileOverPlainIndexed',
        label: 'PUT note, PostGraphile 5 against the plain server on its own table',
        of: { variant: 'update-postgraphile', name: 'PostGraphile 5' },
        over: { variant: 'update-koa-indexed', name: 'plain Koa+pg (own table)' },
      },
      {
        key: 'putNoteOverPostGraphile',
        label: 'PUT note, the service against PostGraphile 5',
        of: { variant: 'update', name: 'service' },
        over: { variant: 'update-postgraphile', name: 'PostGraphile 5' },
      },
      {
        key: 'putSmallNoteOverPlainKoa',
        label: 'PUT note, bodies of a few bytes',
        of: { variant: 'update-small', name: 'service' },
        over: { variant: 'update-small-koa', name: 'plain Koa+pg' },
        target: { min: 0.6 },
      },
    ],
    notes:
      'Updates spread over the 10k seeded notes at 50 connections (one hot row would measure its lock), side by side with the ' +
      "one-statement update (audit + outbox) over node:http + pg and the bare upsert over Koa + pg (on the service's table, and on a table of " +
      'its own with only the search index); creates of new paths; then the database alone. WAL and rows written per PUT for the service and ' +
      'the plain server on its own table.',
  },
  {
    id: 'lists',
    alias: 3,
    name: '3 lists',
    needs: ['articles'],
    countQueries: true,
    variants: [
      {
        id: 'changelog',
        label: 'changelog limit=50',
        connections: 10,
        drive: autocannon((b) => ({ options: { url: `${b.base}/api/v1/workspaces/-/changelog?limit=50`, headers: b.auth } })),
      },
      {
        id: 'tree',
        label: 'article tree',
        connections: 10,
        drive: autocannon((b) => ({ options: { url: `${b.base}/api/v1/workspaces/-/articles`, headers: b.auth } })),
      },
      { id: 'tree-etag', label: 'article tree, If-None-Match: previous ETag', connections: 10, drive: autocannon(conditionalTree) },
    ],
    notes:
      'The changelog page and the sidebar tree of 2,000 articles; the conditional variant sends the ETag of the previous answer ' +
      'and counts 304s against 200s. Statements per request are counted afterwards at 5 and 50 items.',
  },
  {
    id: 'search',
    alias: 4,
    name: '4 search',
    needs: ['search'],
    settle: embeddingIdle,
    variants: [
      {
        id: 'fulltext-latency',
        label: (b) => `full text (${b.corpus} articles)`,
        connections: 1,
        drive: sequential((b) => ({ paths: FTS_PATHS, headers: b.searchAuth, count: 600, ranking: 'fulltext', warmPaths: FTS_WARM_PATHS })),
      },
      {
        id: 'fulltext-questions-latency',
        label: (b) => `full text, 20-word questions (${b.corpus} articles)`,
        connections: 1,
        drive: sequential((b) => ({
          paths: FTS_QUESTION_PATHS,
          headers: b.searchAuth,
          count: 200,
          ranking: 'fulltext',
          warmPaths: FTS_WARM_QUESTION_PATHS,
          noteAfter: () => searchIndexMemory(b.service),
        })),
      },
      {
        id: 'semantic-new-latency',
        label: (b) => `semantic, new queries (${b.corpus})`,
        connections: 1,
        drive: sequential((b) => ({
          paths: SEMANTIC_PATHS,
          headers: b.searchAuth,
          count: SEMANTIC_PATHS.length,
          ranking: 'semantic',
          warmPaths: SEMANTIC_WARM_PATHS,
        })),
      },
      {
        id: 'semantic-repeated-latency',
        label: (b) => `semantic, repeated queries (${b.corpus})`,
        connections: 1,
        drive: sequential((b) => ({ paths: SEMANTIC_PATHS, headers: b.searchAuth, count: 600, ranking: 'semantic' })),
      },
      {
        id: 'hybrid-new-latency',
        label: (b) => `hybrid, new queries (${b.corpus})`,
        connections: 1,
        drive: sequential((b) => ({ paths: HYBRID_NEW_PATHS, headers: b.searchAuth, count: HYBRID_NEW_PATHS.length, ranking: 'hybrid' })),
      },
      {
        id: 'hybrid-repeated-latency',
        label: (b) => `hybrid, repeated queries (${b.corpus})`,
        connections: 1,
        drive: sequential((b) => ({ paths: HYBRID_PATHS, headers: b.searchAuth, count: 600, ranking: 'hybrid' })),
      },
      {
        id: 'fulltext',
        label: (b) => `full text (${b.corpus} articles)`,
        connections: 10,
        drive: autocannon((b) => cycling(b, FTS_PATHS, b.searchAuth)),
      },
      {
        id: 'semantic',
        label: (b) => `semantic (${b.corpus}, query vectors cached)`,
        connections: 10,
        drive: autocannon((b) => cycling(b, SEMANTIC_PATHS, b.searchAuth)),
      },
    ],
    notes:
      'Latency one request at a time on an idle service (every new semantic query is embedded; repeated ones hit the query-vector cache), ' +
      'then throughput at 10 connections. PostgreSQL: its own workspace of 10k articles (--large: 100k); embedded: the 2k articles.',
  },
  {
    id: 'uploads',
    alias: 5,
    name: '5 uploads',
    needs: [],
    variants: [{ id: 'png', label: '1 MiB PNG', connections: 10, drive: autocannon(pngUploads) }],
    notes: 'Multipart uploads of incompressible 1 MiB PNGs, each distinct.',
  },
  {
    id: 'mixed',
    alias: 6,
    name: '6 mixed',
    needs: ['notes', 'articles'],
    variants: [{ id: 'mixed', label: '70/20/10', connections: 20, drive: autocannon(mixedWorkload) }],
    notes: 'An agent workload: 70 % reads (a note or the changelog), 20 % note writes, 10 % full-text search.',
  },
  {
    id: 'sockets',
    alias: 7,
    name: '7 sockets',
    needs: [],
    variants: [
      { id: 'get', label: 'REST GET changelog', connections: 10, drive: autocannon((b) => ({ options: SIMPLE_GET(b) })) },
      {
        id: 'get-held',
        label: 'REST GET changelog, 1,000 hostile sockets held',
        connections: 10,
        drive: autocannon((b) => ({ options: SIMPLE_GET(b), background: HOSTILE(b, false) })),
      },
      {
        id: 'get-flood',
        label: 'REST GET changelog, 1,000 hostile sockets reconnecting',
        connections: 10,
        drive: autocannon((b) => ({ options: SIMPLE_GET(b), background: HOSTILE(b, true) })),
      },
      ...(['quiet', 'held', 'reconnecting'] as const).map((mode) => ({
        id: mode === 'quiet' ? 'console' : `console-${mode === 'held' ? 'held' : 'flood'}`,
        label: `console socket (admin token) open → ack${mode === 'quiet' ? '' : `, 1,000 hostile sockets ${mode}`}`,
        connections: 1,
        drive: connect((b) => ({
          token: OPTIONS.adminToken,
          count: 100,
          everyMs: 100,
          background: mode === 'quiet' ? undefined : HOSTILE(b, mode === 'reconnecting'),
        })),
      })),
    ],
    ratios: [
      {
        key: 'getUnderHeldSockets',
        label: 'REST GET with 1,000 hostile sockets held',
        of: { variant: 'get-held', name: 'hostile' },
        over: { variant: 'get', name: 'quiet' },
      },
      {
        key: 'getUnderSocketFlood',
        label: 'REST GET with 1,000 hostile sockets reconnecting',
        of: { variant: 'get-flood', name: 'hostile' },
        over: { variant: 'get', name: 'quiet' },
      },
    ],
    notes:
      'A simple REST GET at 10 connections side by side: alone, with 1,000 hostile WebSocket clients (500 of one viewer key, 500 that ' +
      'never send connection_init, from two other loopback addresses) holding what the service lets them hold, and with the same ' +
      'clients reconnecting a second after each close (a flood of connection attempts, their own process on the same cores); then the ' +
      'console (admin token, from 127.0.0.1) connecting 100 times, one every 100 ms, timed from open to connection_ack, in each case.',
  },
  {
    id: 'listeners',
    alias: 11,
    name: '11 MCP listeners',
    needs: ['notes'],
    variants: [
      {
        id: 'put',
        label: 'PUT note, no listeners',
        connections: 50,
        drive: autocannon((b) => noteUpdates(`${b.base}${SERVICE_NOTE_ROUTE}`, b.auth)),
      },
      {
        id: 'put-listeners',
        label: 'PUT note, 1,000 MCP listeners open (on another note, changed every 500 ms)',
        connections: 50,
        drive: autocannon((b) => ({ ...noteUpdates(`${b.base}${SERVICE_NOTE_ROUTE}`, b.auth), background: () => mcpListeners(b, 1000) })),
      },
    ],
    ratios: [
      {
        key: 'putNoteUnderListeners',
        label: 'PUT note with 1,000 MCP listeners open',
        of: { variant: 'put-listeners', name: 'listeners' },
        over: { variant: 'put', name: 'none' },
        target: { min: 0.9 },
      },
    ],
    notes:
      'Note PUTs at 50 connections side by side: alone, and with 1,000 open subscriptions/listen streams (2026-07-28, 100 keys of ten ' +
      'slots, held by a process of their own) on one other note, which that process changes through REST every 500 ms while timing each ' +
      "change's arrival on all 1,000 streams (p50, p99, max in the note column, with the service's resident memory per listener).",
  },
  {
    id: 'archive',
    alias: 8,
    name: '8 /healthz during a 50 MB import',
    needs: [],
    variants: [
      { id: 'idle', label: 'idle', connections: 1, drive: sequential(() => ({ paths: ['/healthz'], headers: {}, count: 300 })) },
      {
        id: 'images',
        label: 'importing five 10 MiB PNGs',
        connections: 1,
        drive: sequential(() => ({ paths: ['/healthz'], headers: {}, count: 300, during: importInBackground('images') })),
      },
      {
        id: 'text',
        label: 'importing 1,200 articles and 1,500 notes (50 MB of text)',
        connections: 1,
        drive: sequential(() => ({ paths: ['/healthz'], headers: {}, count: 300, during: importInBackground('text') })),
      },
    ],
    notes:
      '/healthz answers from the process alone (no database): its latency while an archive is checked and written is the ' +
      "event loop's delay as a client sees it. Each import makes a new workspace; its time is in the note column.",
  },
  {
    id: 'stall',
    alias: 9,
    name: '9 GET note every 10 ms while another agent writes',
    needs: ['hot-note'],
    settle: settledService,
    variants: [
      { id: 'idle', label: 'nothing else', connections: 1, drive: sequential(STALL_PROBE()) },
      { id: 'uploads', label: 'three 10 MiB uploads at once', connections: 1, drive: sequential(STALL_PROBE(threeUploads)) },
      { id: 'puts', label: 'twenty 16 KB note PUTs', connections: 1, drive: sequential(STALL_PROBE(twentyPuts)) },
      { id: 'import', label: 'a 50 MB archive import (five 10 MiB PNGs)', connections: 1, drive: sequential(STALL_PROBE(imageImport)) },
    ],
    notes:
      'One agent GETs a memory note every 10 ms (one request at a time; the next starts 10 ms after the previous started, or at ' +
      'once when it took longer) while a second agent writes, until the writes are done (300 GETs with nothing else). The max ' +
      "is the longest a GET waited; the note column has the writes' statuses and time, and the service's worst event-loop delay " +
      'meanwhile (prom-client’s histogram, read from /metrics before and after). Run it on both databases.',
  },
  {
    id: 'embedded',
    alias: 10,
    name: '10 notes: the embedded database beside PostgreSQL',
    needs: ['notes'],
    variants: [
      {
        id: 'get-postgres',
        label: 'GET, on PostgreSQL',
        connections: 10,
        drive: autocannon((b) => spreadGets(b, SERVICE_NOTE_ROUTE, b.auth)),
      },
      {
        id: 'get-embedded',
        label: 'GET, on the embedded database',
        connections: 10,
        server: 'service-embedded',
        drive: autocannon((b) => spreadGets(b, SERVICE_NOTE_ROUTE, b.auth)),
      },
      {
        id: 'put-postgres',
        label: 'PUT (update), on PostgreSQL',
        connections: 10,
        drive: autocannon((b) => noteUpdates(`${b.base}${SERVICE_NOTE_ROUTE}`, b.auth)),
      },
      {
        id: 'put-embedded',
        label: 'PUT (update), on the embedded database',
        connections: 10,
        server: 'service-embedded',
        drive: autocannon((b) => noteUpdates(`${b.base}${SERVICE_NOTE_ROUTE}`, b.auth)),
      },
    ],
    ratios: [
      {
        key: 'getNoteEmbeddedOverPostgres',
        label: 'GET note, embedded database',
        of: { variant: 'get-embedded', name: 'embedded' },
        over: { variant: 'get-postgres', name: 'PostgreSQL' },
        target: { min: 0.6 },
      },
      {
        key: 'putNoteEmbeddedOverPostgres',
        label: 'PUT note, embedded database',
        of: { variant: 'put-embedded', name: 'embedded' },
        over: { variant: 'put-postgres', name: 'PostgreSQL' },
        target: { min: 0.6 },
      },
    ],
    notes:
      'PostgreSQL only (DATABASE_URL): a second service on a fresh embedded database (its own DATA_DIR, seeded with the same ' +
      "10,000 notes through its API) beside the bench's service on PostgreSQL, each measured alone in turn in every round: " +
      'note GETs spread over the seeded notes and note updates of 1–4 KB, at 10 connections.',
  },
  {
    id: 'failover',
    alias: 12,
    name: '12 failover: the primary lost under four writers',
    needs: [],
    variants: [
      {
        id: 'promote',
        label: 'crash, pg_ctl promote 2 s later (two-host URL)',
        connections: 4,
        drive: { kind: 'drill', run: promotionDrill },
      },
      {
        id: 'pg-auto-failover',
        label: "pg_auto_failover's own promotion (its default timings)",
        connections: 4,
        drive: { kind: 'drill', run: autoFailoverDrill },
      },
    ],
    notes:
      "Brings its own servers (either database): the service as `npm start` runs it on libpq's two-host URL with " +
      'target_session_attrs=read-write, four agents writing new notes one after another, each PUT with its path as ' +
      'Idempotency-Key and a refused one retried with the same key every 200 ms; 10 s of steady writing, the primary lost, ' +
      '10 s after the first write on the new primary. req/s: writes acknowledged per second over the whole drill; ' +
      'latencies: every request, refusals included. `promote`: a primary and its synchronous standby (initdb, ' +
      'pg_basebackup), the primary crashed (pg_ctl stop -m immediate) and the standby promoted by hand 2 s later. ' +
      "`pg-auto-failover`: a monitor, a primary and a secondary (Debian's pg_auto_failover), the primary's node killed " +
      '(SIGKILL), the monitor promoting the secondary by itself. The note column: writes acknowledged, lost and applied ' +
      'twice (a version above 1), 5xx without Retry-After, the longest stretch without a successful write, the slowest ' +
      'request, and the time from the promotion (the monitor reporting wait_primary) to the first successful write.',
  },
];
