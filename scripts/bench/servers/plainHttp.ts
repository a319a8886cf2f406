/**
 * Plain-pg baselines for `npm run bench`, in a process of their own (as the service is), built by
 * the bench only and never shipped: node:http and node-postgres, nothing else.
 *
 *   GET /note?path=…   reads the note row and writes it as JSON (what GET note does, minus the service)
 *   PUT /note          updates the note and writes its event (audit trail and webhook outbox) in one statement
 *                      (the service's PUT statement also carries the create branch and its quota slot)
 *
 * Environment: DATABASE_URL, WORKSPACE_ID, POOL (connections, default 20). Prints its URL.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { NOTE_COLUMNS, noteJson, type NoteInput, type NoteRow } from './noteRow.js';

const workspaceId = process.env.WORKSPACE_ID!;
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.POOL ?? 20) });

async function getNote(path: string) {
  const { rows } = await pool.query<NoteRow>(`select ${NOTE_COLUMNS} from memory_notes where workspace_id = $1 and path = $2`, [
    workspaceId,
    path,
  ]);
  return noteJson(rows[0]);
}

async function putNote(body: NoteInput) {
  const now = new Date();
  const { rows } = await pool.query<NoteRow>(
    `with written as (update memory_notes set kind = $1, body = $2, links = $3, tags = $4, updated_at = $5 where workspace_id = $6 and path = $7 returning ${NOTE_COLUMNS}),
     event as (insert into events (workspace_id, actor, action, target_type, target_id, created_at) select $6, 'agent', 'memory.note.updated', 'memory_note', $7, $5 from written)
     select * from written`,
    [body.kind, body.body, body.links, body.tags, now, workspaceId, body.path],
  );
  return rows[0];
}

const server = createServer((req, res) => {
  let raw = '';
  req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
  req.on('end', () => {
    const url = new URL(req.url ?? '/', 'http://x');
    const work = req.method === 'PUT' ? putNote(JSON.parse(raw) as NoteInput) : getNote(url.searchParams.get('path') ?? '');
    work.then(
      (out) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(out)),
      (error) => res.writeHead(500).end(String(error)),
    );
  });
});
server.listen(0, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}`));
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => void pool.end().then(() => process.exit(0)));
});
