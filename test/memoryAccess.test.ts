/**
 * A note's access time lives beside the note (reads touch a narrow row, not the note's), and is
 * written apart from the read, gathered per process and flushed every second: the read's own answer
 * shows it at once, every other answer and payload that carries `accessedAt` once flushed.
 */
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { tenant, type Tenant } from './support/factories.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ embeddingWorker: false });
});
afterAll(async () => app?.close());

const W = '/api/v1/workspaces/-';
const NOTE = `${W}/memory/note`;
const EVENTS = 'query($w: ID!) { auditEvents(workspaceId: $w, limit: 50) { action object } }';
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function ok(res: Promise<{ status: number; body: any }>): Promise<any> {
  const r = await res;
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body;
}

const put = (t: Tenant, path: string, body: string, links: string[] = []) =>
  ok(app.api('PUT', NOTE, { key: t.key, body: { path, body, kind: 'note', links, tags: ['t'] } }));
const get = (t: Tenant, path: string) => ok(app.api('GET', `${NOTE}?path=${path}`, { key: t.key }));

/** The workspace's memory events, oldest first. */
async function events(t: Tenant): Promise<any[]> {
  const res = await app.gql(EVENTS, { w: t.workspace.id });
  expect(res.errors).toBeUndefined();
  return [...res.data.auditEvents].reverse().filter((e: any) => e.action.startsWith('memory.'));
}

describe('accessedAt of memory notes', () => {
  it('advances on a read (1-second resolution) and shows in the read, the index, backlinks and the next write and its event', async () => {
    const t = await tenant(app);
    const created = await put(t, 'a/note', 'first');
    await put(t, 'b/linker', 'links to a', ['a/note']);
    await pause(1100);
    const read = await get(t, 'a/note');
    expect(Date.parse(read.accessedAt)).toBeGreaterThan(Date.parse(created.accessedAt));
    // A read moves it only when it is a second old or more (a slow machine may take that long between two reads).
    const moved = Date.parse((await get(t, 'a/note')).accessedAt) - Date.parse(read.accessedAt);
    expect(moved === 0 || moved >= 1000).toBe(true);
    await app.server.flushNoteAccess();
    const index = await ok(app.api('GET', `${W}/memory?prefix=a`, { key: t.key }));
    expect(index.map((e: any) => [e.path, e.accessedAt])).toEqual([['a/note', read.accessedAt]]);
    const backlinks = await app.gql('{ memoryNote(workspace: "-", path: "b/linker") { path } }', {}, t.key);
    expect(backlinks.errors).toBeUndefined();
    const hub = await app.gql('{ memoryNote(workspace: "-", path: "a/note") { accessedAt backlinks { path accessedAt } } }', {}, t.key);
    expect(hub.errors).toBeUndefined();
    expect(hub.data.memoryNote.backlinks).toEqual([{ path: 'b/linker', accessedAt: expect.any(String) }]);
    // The write keeps the access time and its event carries the answer.
    const latest = (await get(t, 'a/note')).accessedAt;
    await app.server.flushNoteAccess();
    const updated = await put(t, 'a/note', 'second');
    expect(updated.accessedAt).toBe(latest);
    expect(updated.version).toBe(2);
    const list = await events(t);
    expect(list.filter((e) => e.action === 'memory.note.updated').at(-1).object).toEqual(updated);
  });

  it("a delete's event and an archive export carry the time of the last read", async () => {
    const t = await tenant(app);
    const created = await put(t, 'gone', 'soon deleted');
    await put(t, 'kept', 'stays');
    await pause(1100);
    const read = await get(t, 'gone');
    const readKept = await get(t, 'kept');
    expect(read.accessedAt).not.toBe(created.accessedAt);
    await app.server.flushNoteAccess();
    const res = await fetch(`${app.url}/admin/workspaces/${t.workspace.id}/export`, {
      headers: { authorization: `Bearer ${app.adminToken}` },
    });
    expect(res.status).toBe(200);
    const records = gunzipSync(Buffer.from(await res.arrayBuffer()))
      .toString('utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .filter((r: any) => r.type === 'memory_note');
    const exported = Object.fromEntries(records.map((r: any) => [r.data.path, Date.parse(r.data.accessed_at)]));
    expect(exported).toEqual({ gone: Date.parse(read.accessedAt), kept: Date.parse(readKept.accessedAt) });
    await ok(app.api('DELETE', `${NOTE}?path=gone`, { key: t.key }));
    const deleted = (await events(t)).find((e) => e.action === 'memory.note.deleted');
    expect(deleted.object).toEqual({ ...read });
    // A note made again at the path starts with its own time, not the deleted note's reads.
    const remade = await put(t, 'gone', 'back');
    expect(Date.parse(remade.accessedAt)).toBeGreaterThan(Date.parse(read.accessedAt));
    const reread = Date.parse((await get(t, 'gone')).accessedAt) - Date.parse(remade.accessedAt);
    expect(reread === 0 || reread >= 1000).toBe(true);
  });

  it('answers 404 for a missing note and for another workspace’s note, touching nothing', async () => {
    const a = await tenant(app);
    const b = await tenant(app);
    const note = await put(b, 'secret', 'theirs');
    await pause(1100);
    expect((await app.api('GET', `${NOTE}?path=missing`, { key: a.key })).status).toBe(404);
    expect((await app.api('GET', `/api/v1/workspaces/${b.workspace.id}/memory/note?path=secret`, { key: a.key })).status).toBe(404);
    expect((await app.api('GET', `${NOTE}?path=secret`, { key: a.key })).status).toBe(404);
    const index = await ok(app.api('GET', `${W}/memory`, { key: b.key }));
    expect(index[0].accessedAt).toBe(note.accessedAt);
  });

  it('reaches every other answer within about a second by itself', async () => {
    const t = await tenant(app);
    const created = await put(t, 'drifts', 'read me');
    await pause(1100);
    const read = await get(t, 'drifts');
    expect(Date.parse(read.accessedAt)).toBeGreaterThan(Date.parse(created.accessedAt));
    // Gathered in this process, written by the next flush (every second), with no request needed.
    const before = await ok(app.api('GET', `${W}/memory?prefix=drifts`, { key: t.key }));
    let shown = before[0].accessedAt as string;
    for (let i = 0; i < 30 && shown !== read.accessedAt; i++) {
      await pause(100);
      shown = (await ok(app.api('GET', `${W}/memory?prefix=drifts`, { key: t.key })))[0].accessedAt as string;
    }
    expect(shown).toBe(read.accessedAt);
  });
});
