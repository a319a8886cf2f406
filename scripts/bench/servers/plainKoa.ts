/**
 * The plain Koa baseline for `npm run bench`, in a process of its own, built by the bench only and
 * never shipped: Koa + @koa/router + node-postgres (pool 10, as the service's statement pool), with
 * exactly the statements a note needs and nothing more — what an ordinary hand-written Koa service does.
 * It serves the service's own `memory_notes` table (paying for every index the service chose), or
 * with TABLE=bench_plain.notes a table of its own holding only what note search needs (see servers.ts).
 *
 *   GET /note?path=…   selects the note by (workspace_id, path), then updates its accessed_at; JSON
 *   PUT /note          inserts the note, or on (workspace_id, path) conflict updates it; JSON of the row
 *
 * Environment: DATABASE_URL, WORKSPACE_ID, TABLE (default memory_notes). Prints its URL.
 */
import type { AddressInfo } from 'node:net';
import Router from '@koa/router';
import Koa, { type Context } from 'koa';
import pg from 'pg';
import { NOTE_COLUMNS, noteJson, type NoteInput, type NoteRow } from './noteRow.js';

const workspaceId = process.env.WORKSPACE_ID!;
const table = process.env.TABLE ?? 'memory_notes';
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });

/** The request body as JSON (no body-parser middleware: the baseline stays Koa, the router and pg). */
async function jsonBody<T>(ctx: Context): Promise<T> {
  const chunks: Buffer[] = [];
  for await (const chunk of ctx.req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as T;
}

const router = new Router();

router.get('/note', async (ctx) => {
  const path = String(ctx.query.path ?? '');
  const found = await pool.query<NoteRow>(`SELECT ${NOTE_COLUMNS} FROM ${table} WHERE workspace_id = $1 AND path = $2`, [
    workspaceId,
    path,
  ]);
  if (!found.rows[0]) {
    ctx.status = 404;
    ctx.body = { error: 'not_found' };
    return;
  }
  // By the unique key, not by id: the plain indexed table has no index on id.
  const touched = await pool.query<NoteRow>(
    `UPDATE ${table} SET accessed_at = $1 WHERE workspace_id = $2 AND path = $3 RETURNING ${NOTE_COLUMNS}`,
    [new Date(), workspaceId, path],
  );
  ctx.body = noteJson(touched.rows[0] ?? found.rows[0]);
});

router.put('/note', async (ctx) => {
  const note = await jsonBody<NoteInput>(ctx);
  const now = new Date();
  const { rows } = await pool.query<NoteRow>(
    `insert into ${table} (workspace_id, path, kind, body, links, tags, created_at, updated_at, accessed_at)
     values ($1, $2, $3, $4, $5, $6, $7, $7, $7)
     on conflict (workspace_id, path) do update set kind = excluded.kind, body = excluded.body, links = excluded.links, tags = excluded.tags, updated_at = excluded.updated_at
     returning ${NOTE_COLUMNS}`,
    [workspaceId, note.path, note.kind, note.body, note.links, note.tags, now],
  );
  ctx.body = noteJson(rows[0]);
});

const app = new Koa();
app.use(router.routes()).use(router.allowedMethods());
const server = app.listen(0, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}`));
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => void pool.end().then(() => process.exit(0)));
});
