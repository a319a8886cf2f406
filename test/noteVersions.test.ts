import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { createKey, tenant, type Tenant } from './support/factories.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.close());

const MEMORY = '/api/v1/workspaces/-/memory';
const NOTE = `${MEMORY}/note`;
const q = (path: string) => `?path=${encodeURIComponent(path)}`;
const note = (path: string, body = `Body of ${path}`, over: Record<string, unknown> = {}) => ({
  path,
  body,
  kind: 'note',
  links: [],
  tags: [],
  ...over,
});

function put(t: Tenant, path: string, body?: string, headers: Record<string, string> = {}, target: TestApp = app) {
  return target.api('PUT', NOTE, { key: t.key, body: note(path, body), headers });
}
const get = (t: Tenant, path: string, headers: Record<string, string> = {}) => app.api('GET', `${NOTE}${q(path)}`, { key: t.key, headers });
const del = (t: Tenant, path: string, headers: Record<string, string> = {}) =>
  app.api('DELETE', `${NOTE}${q(path)}`, { key: t.key, headers });
const history = (t: Tenant, path: string, extra = '') => app.api('GET', `${NOTE}/history${q(path)}${extra}`, { key: t.key });
const revision = (t: Tenant, path: string, version: number | string) =>
  app.api('GET', `${NOTE}/revisions/${version}${q(path)}`, { key: t.key });

/** Writes `count` versions of a note (v1 … v<count>), asserting each. */
async function versions(t: Tenant, path: string, count: number): Promise<void> {
  for (let v = 1; v <= count; v++) {
    const res = await put(t, path, `body ${v}`);
    expect(res.status).toBe(200);
    expect(res.body.version).toBe(v);
  }
}

describe('memory note versions and conditional requests', () => {
  it('gives every answer a version and an ETag "v<version>"; GET with a current If-None-Match is 304', async () => {
    const t = await tenant(app);
    await versions(t, 'a', 2);
    const res = await get(t, 'a');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ version: 2, body: 'body 2' });
    expect(res.headers.get('etag')).toBe('"v2"');
    for (const header of ['"v2"', 'W/"v2"', '"v1", "v2"', '*']) {
      const cached = await get(t, 'a', { 'if-none-match': header });
      expect(cached.status, header).toBe(304);
      expect(cached.text).toBe('');
      expect(cached.headers.get('etag')).toBe('"v2"');
    }
    expect((await get(t, 'a', { 'if-none-match': '"v1"' })).status).toBe(200);
    expect((await get(t, 'missing', { 'if-none-match': '*' })).status).toBe(404);
  });

  it('applies If-Match only to the version it names; a stale one is 412 with the current ETag, and nothing changes', async () => {
    const t = await tenant(app);
    await versions(t, 'shared', 2);
    const ok = await put(t, 'shared', 'agent A', { 'if-match': '"v2"' });
    expect(ok.status).toBe(200);
    expect(ok.body.version).toBe(3);
    const stale = await put(t, 'shared', 'agent B', { 'if-match': '"v2"' });
    expect(stale.status).toBe(412);
    expect(stale.body.error).toMatchObject({ code: 'precondition_failed', details: { etag: '"v3"' } });
    expect((await get(t, 'shared')).body).toMatchObject({ version: 3, body: 'agent A' });
    expect((await history(t, 'shared')).body.map((r: any) => r.version)).toEqual([2, 1]);
    // A list naming the current version, and `*` (any existing note).
    expect((await put(t, 'shared', 'list', { 'if-match': '"v1", "v3"' })).body.version).toBe(4);
    expect((await put(t, 'shared', 'any', { 'if-match': '*' })).body.version).toBe(5);
  });

  it('never creates under If-Match (412, etag null); If-None-Match: * creates only', async () => {
    const t = await tenant(app);
    for (const header of ['"v1"', '*']) {
      const res = await put(t, 'new', 'x', { 'if-match': header });
      expect(res.status, header).toBe(412);
      expect(res.body.error.details).toEqual({ etag: null });
    }
    expect((await get(t, 'new')).status).toBe(404);
    const created = await put(t, 'new', 'first', { 'if-none-match': '*' });
    expect(created.status).toBe(200);
    expect(created.body.version).toBe(1);
    const again = await put(t, 'new', 'second', { 'if-none-match': '*' });
    expect(again.status).toBe(412);
    expect(again.body.error.details).toEqual({ etag: '"v1"' });
    expect((await get(t, 'new')).body.body).toBe('first');
    // If-None-Match with tags: no write while the note is at one of them.
    expect((await put(t, 'new', 'third', { 'if-none-match': '"v1"' })).status).toBe(412);
    expect((await put(t, 'new', 'third', { 'if-none-match': '"v7"' })).body.version).toBe(2);
  });

  it('honours If-Match on DELETE, keeps the last state, and continues the versions when the path is created again', async () => {
    const t = await tenant(app);
    await versions(t, 'gone', 2);
    const stale = await del(t, 'gone', { 'if-match': '"v1"' });
    expect(stale.status).toBe(412);
    expect(stale.body.error.details).toEqual({ etag: '"v2"' });
    expect((await get(t, 'gone')).status).toBe(200);
    expect((await del(t, 'gone', { 'if-match': '"v2"' })).status).toBe(200);
    expect((await del(t, 'gone', { 'if-match': '"v2"' })).status).toBe(404);
    const after = await history(t, 'gone');
    expect(after.status).toBe(200);
    expect(after.body.map((r: any) => [r.version, r.deleted])).toEqual([
      [2, true],
      [1, false],
    ]);
    expect((await revision(t, 'gone', 2)).body).toMatchObject({ body: 'body 2', deleted: true });
    // The old ETag never names the new note.
    const reborn = await put(t, 'gone', 'again');
    expect(reborn.body.version).toBe(3);
    expect((await put(t, 'gone', 'x', { 'if-match': '"v2"' })).status).toBe(412);
  });

  it('answers 400 naming the header for an over-long If-Match, and checks permissions and the workspace before any condition', async () => {
    const t = await tenant(app);
    await versions(t, 'a', 1);
    const long = await put(t, 'a', 'x', { 'if-match': `"v${'1'.repeat(300)}"` });
    expect(long.status).toBe(400);
    expect(long.body.error.details).toEqual([expect.objectContaining({ field: 'if-match', in: 'header' })]);
    const { key: reader } = await createKey(app, t.member.id, { permissions: ['memory.read'], workspaceId: t.workspace.id });
    expect((await app.api('PUT', NOTE, { key: reader, body: note('a'), headers: { 'if-match': '"v9"' } })).status).toBe(403);
    expect((await app.api('DELETE', `${NOTE}${q('a')}`, { key: reader, headers: { 'if-match': '"v9"' } })).status).toBe(403);
    const other = await tenant(app);
    expect((await app.api('PUT', `/api/v1/workspaces/${t.workspace.id}/memory/note`, { key: other.key, body: note('a') })).status).toBe(
      404,
    );
    expect((await get(t, 'a')).body.version).toBe(1);
  });
});

describe('memory note history', () => {
  it('lists replaced states newest first, paginated, and returns one with its body', async () => {
    const t = await tenant(app);
    await versions(t, 'doc', 4);
    const first = await history(t, 'doc', '&limit=2');
    expect(first.status).toBe(200);
    expect(first.body.map((r: any) => r.version)).toEqual([3, 2]);
    expect(first.body[0]).toMatchObject({
      path: 'doc',
      kind: 'note',
      tags: [],
      links: [],
      size: 6,
      writtenByKeyId: t.keyId,
      replacedByKeyId: t.keyId,
      deleted: false,
    });
    expect(first.body[0]).not.toHaveProperty('body');
    const next = /<([^>]+)>; rel="next"/.exec(first.headers.get('link') ?? '')?.[1];
    expect(next).toBeTruthy();
    const url = new URL(next!, app.url);
    const second = await app.api('GET', url.pathname + url.search, { key: t.key });
    expect(second.body.map((r: any) => r.version)).toEqual([1]);
    expect(second.headers.get('link')).toBeNull();
    const one = await revision(t, 'doc', 2);
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ version: 2, body: 'body 2' });
  });

  it('is empty for a note never changed; 404 for an unknown path, an unknown version, the current version and another tenant', async () => {
    const t = await tenant(app);
    await versions(t, 'once', 1);
    expect((await history(t, 'once')).body).toEqual([]);
    expect((await history(t, 'nothing')).status).toBe(404);
    await versions(t, 'twice', 2);
    expect((await revision(t, 'twice', 1)).status).toBe(200);
    expect((await revision(t, 'twice', 2)).status).toBe(404); // the current version is the note itself
    expect((await revision(t, 'twice', 99)).status).toBe(404);
    expect((await revision(t, 'twice', 0)).status).toBe(400);
    expect((await revision(t, 'twice', 'x')).status).toBe(400);
    const other = await tenant(app);
    expect((await history(other, 'twice')).status).toBe(404);
    expect((await revision(other, 'twice', 1)).status).toBe(404);
    const { key: writer } = await createKey(app, t.member.id, { permissions: ['memory.write'], workspaceId: t.workspace.id });
    expect((await app.api('GET', `${NOTE}/history${q('twice')}`, { key: writer })).status).toBe(403);
    expect((await app.api('GET', `${NOTE}/revisions/1${q('twice')}`, { key: writer })).status).toBe(403);
  });

  it('keeps the last 50 revisions of a note, outside the quota; a refused write keeps none', async () => {
    const t = await tenant(app, { plan: 'free' });
    await versions(t, 'busy', 53);
    const all = await history(t, 'busy', '&limit=100');
    expect(all.body.map((r: any) => r.version)).toEqual(Array.from({ length: 50 }, (_, i) => 52 - i));
    // 400 and 412 write nothing.
    expect((await app.api('PUT', NOTE, { key: t.key, body: note('busy', 'x', { kind: 'bad kind' }) })).status).toBe(400);
    expect((await put(t, 'busy', 'x', { 'if-match': '"v1"' })).status).toBe(412);
    expect((await history(t, 'busy', '&limit=1')).body[0].version).toBe(52);
    // 50 revisions, yet the free plan's 200 notes are all still there to create (quota counts notes only).
    const db = app.server.orm.em.fork().getConnection();
    expect((await db.execute('select used from memory_usage where workspace_id = ?', [t.workspace.id]))[0].used).toBe(1);
  }, 60_000);

  it("keeps a deleted note's history readable for 30 days, then drops it", async () => {
    const t = await tenant(app);
    await versions(t, 'old', 2);
    expect((await del(t, 'old')).status).toBe(200);
    const db = app.server.orm.em.fork().getConnection();
    const age = (days: number) =>
      db.execute(`update memory_note_revisions set replaced_at = now() - interval '${days} days' where workspace_id = ? and deleted`, [
        t.workspace.id,
      ]);
    await age(29);
    expect((await history(t, 'old')).body).toHaveLength(2);
    await age(31);
    expect((await history(t, 'old')).status).toBe(404);
    expect((await revision(t, 'old', 1)).status).toBe(404);
    const { purgeNoteHistory } = await import('../src/services/noteHistory.js');
    await purgeNoteHistory(app.server.orm.em.fork());
    expect((await db.execute('select count(*)::int as n from memory_note_revisions where workspace_id = ?', [t.workspace.id]))[0].n).toBe(
      0,
    );
  });
});

describe('the same rules on GraphQL and MCP', () => {
  it('refuses a stale ifMatch with precondition_failed on GraphQL and as a tool error on MCP', async () => {
    const t = await tenant(app);
    await versions(t, 'n', 2);
    const gql = await app.gql(
      'mutation($i: PutMemoryNoteInput!) { putMemoryNote(workspace: "-", input: $i, ifMatch: "\\"v1\\"") { version } }',
      { i: note('n', 'gql') },
      t.key,
    );
    expect(gql.errors?.[0].extensions).toMatchObject({ code: 'precondition_failed', details: { etag: '"v2"' } });
    const ok = await app.gql(
      'mutation($i: PutMemoryNoteInput!) { putMemoryNote(workspace: "-", input: $i, ifMatch: "\\"v2\\"") { version } }',
      { i: note('n', 'gql') },
      t.key,
    );
    expect(ok.data.putMemoryNote.version).toBe(3);
    const hist = await app.gql('{ memoryNoteHistory(workspace: "-", path: "n") { items { version } nextCursor } }', {}, t.key);
    expect(hist.data.memoryNoteHistory.items.map((r: any) => r.version)).toEqual([2, 1]);

    const client = new Client({ name: 'versions-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${app.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${t.key}` } } }),
    );
    try {
      const stale: any = await client.callTool({ name: 'memory_put_note', arguments: { ...note('n', 'mcp'), ifMatch: '"v2"' } });
      expect(stale.isError).toBe(true);
      expect(stale.structuredContent.error).toMatchObject({ status: 412, code: 'precondition_failed' });
      const revisions: any = await client.callTool({ name: 'memory_note_revision', arguments: { path: 'n', version: 1 } });
      expect(revisions.structuredContent).toMatchObject({ version: 1, body: 'body 1' });
    } finally {
      await client.close();
    }
  });
});

// Two processes on one database: only a PostgreSQL server can be shared.
describe.runIf(process.env.DATABASE_URL)('If-Match across processes', () => {
  it('lets exactly one of many writers racing the same If-Match win, on two processes', async () => {
    const other = await startTestApp();
    try {
      const t = await tenant(app);
      await versions(t, 'race', 1);
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) => put(t, 'race', `writer ${i}`, { 'if-match': '"v1"' }, i % 2 ? other : app)),
      );
      const statuses = answers.map((a) => a.status).sort();
      expect(statuses.filter((s) => s === 200)).toHaveLength(1);
      expect(statuses.filter((s) => s === 412)).toHaveLength(19);
      const winner = answers.find((a) => a.status === 200)!;
      expect((await get(t, 'race')).body).toMatchObject({ version: 2, body: winner.body.body });
      expect((await history(t, 'race')).body.map((r: any) => r.version)).toEqual([1]);
    } finally {
      await other.close();
    }
  });
});

// A transaction of another connection holding the workspace's row: only a PostgreSQL server has one.
describe.runIf(process.env.DATABASE_URL)("a note's update and its workspace's row", () => {
  it('updates a note (with its revision) while another transaction holds the workspace row, and a deleted workspace takes its revisions', async () => {
    const t = await tenant(app);
    await versions(t, 'unlocked', 2);
    const db = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await db.connect();
    try {
      // A foreign key from the revision to the workspace would make the PUT wait for this lock.
      await db.query('begin');
      await db.query('select 1 from workspaces where id = $1 for update', [t.workspace.id]);
      const res = await Promise.race([put(t, 'unlocked', 'body 3'), new Promise<null>((r) => setTimeout(() => r(null), 5000))]);
      expect(res?.status).toBe(200);
      expect(res?.body.version).toBe(3);
      await db.query('rollback');
      expect((await history(t, 'unlocked')).body.map((r: any) => r.version)).toEqual([2, 1]);
      const count = async () =>
        Number((await db.query('select count(*) from memory_note_revisions where workspace_id = $1', [t.workspace.id])).rows[0].count);
      expect(await count()).toBe(2);
      await db.query('delete from workspaces where id = $1', [t.workspace.id]);
      expect(await count()).toBe(0);
    } finally {
      await db.query('rollback').catch(() => undefined);
      await db.end();
    }
  });
});
