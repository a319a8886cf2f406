/**
 * Plain-pg baselines for `npm run bench`, in a process of their own (as the service is), built by
 * the bench only and never shipped: node:http and node-postgres, nothing else.
 *
 *   GET /note?path=…   reads the note row and writes it as JSON (what GET note does, minus the service)
 *   PUT /note          updates the note and writes its audit event and outbox event in one statement
 *                      (the service's PUT statement also carries the create branch and its quota slot)
 *
 * Environment: DATABASE_URL, WORKSPACE_ID, POOL (connections, default 20). Prints its URL.
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';

const workspaceId = process.env.WORKSPACE_ID!;
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.POOL ?? 20) });
const COLUMNS = 'id, workspace_id, path, kind, body, links, tags, created_at, updated_at, accessed_at';

async function getNote(path: string) {
  const { rows } = await pool.query(`select ${COLUMNS} from memory_notes where workspace_id = $1 and path = $2`, [workspaceId, path]);
  const n = rows[0];
  return { id: n.id, workspaceId: n.workspace_id, path: n.path, kind: n.kind, body: n.body, links: n.links, tags: n.tags, createdAt: n.created_at, updatedAt: n.updated_at, accessedAt: n.accessed_at };
}

async function putNote(body: { path: string; body: string; kind: string; links: string[]; tags: string[] }) {
  const now = new Date();
  const payload = JSON.stringify({ workspaceId, target: { type: 'memory_note', id: body.path } });
  const { rows } = await pool.query(
    `with written as (update memory_notes set kind = $1, body = $2, links = $3, tags = $4, updated_at = $5 where workspace_id = $6 and path = $7 returning ${COLUMNS}),
     audit as (insert into audit_events (workspace_id, actor, action, target_type, target_id, created_at) select $6, 'agent', 'memory.note.updated', 'memory_note', $7, $5 from written),
     outbox as (insert into webhook_events (id, workspace_id, type, payload, fanned_out, created_at) select $8, $6, 'memory.note.updated', $9::jsonb, false, $5 from written)
     select * from written`,
    [body.kind, body.body, body.links, body.tags, now, workspaceId, body.path, `msg_${randomBytes(16).toString('base64url')}`, payload],
  );
  return rows[0];
}

const server = createServer((req, res) => {
  let raw = '';
  req.on('data', (chunk) => (raw += chunk));
  req.on('end', () => {
    const url = new URL(req.url ?? '/', 'http://x');
    const work = req.method === 'PUT' ? putNote(JSON.parse(raw)) : getNote(url.searchParams.get('path') ?? '');
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
