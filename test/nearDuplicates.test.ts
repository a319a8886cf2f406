import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { similarity, trigrams } from '../src/services/nearDuplicates.js';
import { startTestApp, type TestApp } from './support/app.js';
import { createKey, tenant, type Tenant } from './support/factories.js';
import { ownDatabase } from './support/ownDatabase.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.close());

const NOTE = '/api/v1/workspaces/-/memory/note';
const BASE =
  'Deploys go out from the release branch every Tuesday. Before merging, run the migration check, ' +
  'confirm the staging smoke tests passed, and post the changelog draft in the team channel. ' +
  'Rollbacks use the previous image tag; never edit the database by hand during an incident.';

function put(t: Tenant, path: string, body: string) {
  return app.api('PUT', NOTE, { key: t.key, body: { path, body, kind: 'runbook', links: [], tags: [] } });
}
const sql = (text: string, params: unknown[] = []) => app.server.orm.em.fork().getConnection().execute(text, params);

describe('near-duplicate warning on memory writes', () => {
  it('adds `similar` when a new path is written with a body very close to existing notes, and still writes it', async () => {
    const t = await tenant(app);
    expect((await put(t, 'ops/deploys', BASE)).status).toBe(200);
    expect(
      (await put(t, 'ops/unrelated', 'Lunch orders are collected on Fridays before noon by whoever is on the rota this week.')).status,
    ).toBe(200);
    const copy = await put(t, 'team/deploy-process', BASE.replace('every Tuesday', 'every Wednesday'));
    expect(copy.status).toBe(200);
    expect(copy.body.similar).toHaveLength(1);
    expect(copy.body.similar[0].path).toBe('ops/deploys');
    expect(copy.body.similar[0].score).toBeGreaterThanOrEqual(0.9);
    expect(copy.body.similar[0].score).toBeLessThan(1);
    // The note was written; reading it, or updating it, never carries `similar`.
    const read = await app.api('GET', `${NOTE}?path=team/deploy-process`, { key: t.key });
    expect(read.status).toBe(200);
    expect(read.body).not.toHaveProperty('similar');
    const update = await put(t, 'team/deploy-process', BASE);
    expect(update.status).toBe(200);
    expect(update.body).not.toHaveProperty('similar');
  });

  it('leaves the answer exactly as before when nothing is close, for short bodies, and across tenants', async () => {
    const t = await tenant(app);
    const other = await tenant(app);
    expect((await put(other, 'ops/deploys', BASE)).status).toBe(200);
    const first = await put(t, 'ops/deploys', BASE);
    expect(Object.keys(first.body).sort()).toEqual([
      'accessedAt',
      'body',
      'createdAt',
      'id',
      'kind',
      'links',
      'path',
      'tags',
      'updatedAt',
      'version',
      'workspaceId',
    ]);
    // Short bodies are never compared, even when identical.
    expect((await put(t, 'a', 'ok thanks')).status).toBe(200);
    expect((await put(t, 'b', 'ok thanks')).body).not.toHaveProperty('similar');
    // A different text on a similar subject is not a near-duplicate.
    const distinct = await put(
      t,
      'ops/releases',
      'Releases are tagged by the on-call engineer after the weekly planning meeting; the notes list every merged change and its owner.',
    );
    expect(distinct.body).not.toHaveProperty('similar');
  });

  it('reports at most 5, closest first, with scores equal to the trigram similarity of the bodies', async () => {
    const t = await tenant(app);
    const bodies = Array.from({ length: 7 }, (_, i) => `${BASE} Variant ${'x'.repeat(i + 1)} ${i % 2 ? 'odd' : 'even'}.`);
    for (const [i, body] of bodies.entries()) await put(t, `copies/${i}`, body);
    const probe = `${BASE} Variant x even.`;
    const res = await put(t, 'copies/new', probe);
    expect(res.body.similar).toHaveLength(5);
    const scores = res.body.similar.map((s: any) => s.score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    for (const s of res.body.similar) {
      const i = Number(s.path.split('/')[1]);
      expect(s.score).toBeCloseTo(similarity(trigrams(probe), trigrams(bodies[i])), 3);
    }
    // On a server with pg_trgm, the score is what similarity() says.
    const [trgm] = await sql("select count(*)::int as n from pg_available_extensions where name = 'pg_trgm'");
    if (process.env.DATABASE_URL && trgm.n) {
      await sql('create extension if not exists pg_trgm');
      const [row] = await sql('select similarity(?, ?) as s', [probe, bodies[0]]);
      expect(similarity(trigrams(probe), trigrams(bodies[0]))).toBeCloseTo(Number(row.s), 3);
    }
  });

  it('is the same over GraphQL', async () => {
    const t = await tenant(app);
    await put(t, 'ops/deploys', BASE);
    const res = await app.gql(
      'mutation($input: PutMemoryNoteInput!) { putMemoryNote(workspace: "-", input: $input) { path similar { path score } } }',
      { input: { path: 'ops/copy', body: BASE, kind: 'note', links: [], tags: [] } },
      t.key,
    );
    expect(res.errors).toBeUndefined();
    expect(res.data.putMemoryNote.similar).toEqual([{ path: 'ops/deploys', score: 1 }]);
  });

  it('never tells a key that may not read notes which notes are close (no paths, no scores), on REST and GraphQL', async () => {
    const t = await tenant(app);
    expect((await put(t, 'secrets/prod-db', BASE)).status).toBe(200);
    const writer = await createKey(app, t.member.id, { permissions: ['memory.write'], workspaceId: t.workspace.id });
    expect((await app.api('GET', `${NOTE}?path=secrets/prod-db`, { key: writer.key })).status).toBe(403);
    const probe = await app.api('PUT', NOTE, {
      key: writer.key,
      body: { path: 'probe/one', body: BASE, kind: 'note', links: [], tags: [] },
    });
    expect(probe.status).toBe(200);
    expect(probe.body).not.toHaveProperty('similar');
    const res = await app.gql(
      'mutation($input: PutMemoryNoteInput!) { putMemoryNote(workspace: "-", input: $input) { path similar { path score } } }',
      { input: { path: 'probe/two', body: BASE.replace('Tuesday', 'Friday'), kind: 'note', links: [], tags: [] } },
      writer.key,
    );
    expect(res.errors).toBeUndefined();
    expect(res.data.putMemoryNote).toEqual({ path: 'probe/two', similar: null });
    // The same probe by a key that may read notes is told (the check itself still runs).
    const reader = await put(t, 'probe/three', BASE);
    expect(reader.body.similar.map((s: any) => s.path).sort()).toEqual(['probe/one', 'probe/two', 'secrets/prod-db']);
  });

  it('gives notes written before detection their keys in the housekeeping pass', async () => {
    const t = await tenant(app);
    await put(t, 'old/one', BASE);
    await sql('update memory_notes set near_keys = null where workspace_id = ?', [t.workspace.id]);
    const before = await put(t, 'old/two', BASE);
    expect(before.body).not.toHaveProperty('similar');
    const { backfillNearKeys } = await import('../src/services/nearDuplicates.js');
    while ((await backfillNearKeys(app.server.orm.em.fork())) > 0);
    const [{ n }] = await sql('select count(*)::int as n from memory_notes where workspace_id = ? and near_keys is null', [t.workspace.id]);
    expect(n).toBe(0);
    expect((await put(t, 'old/three', BASE)).body.similar.map((s: any) => s.path)).toEqual(['old/one', 'old/two']);
  });
});

describe('with MEMORY_HISTORY_KEPT=0 and MEMORY_NEAR_DUPLICATES=off', () => {
  it('keeps no revisions and reports no near-duplicates; notes written meanwhile get no keys until the check is on', async () => {
    // A database of its own on PostgreSQL: other test processes run the check, and their housekeeping
    // would rightly give this workspace's notes their keys.
    const database = await ownDatabase('wks_lean');
    const lean = await startTestApp({
      memoryHistoryKept: 0,
      memoryNearDuplicates: false,
      databaseUrl: database?.url,
      databaseDirectUrl: database?.directUrl,
    });
    try {
      const t = await tenant(lean);
      const write = (path: string, body: string) =>
        lean.api('PUT', NOTE, { key: t.key, body: { path, body, kind: 'note', links: [], tags: [] } });
      expect((await write('a', BASE)).status).toBe(200);
      expect((await write('a', `${BASE} Again.`)).body.version).toBe(2);
      expect((await write('b', BASE)).body).not.toHaveProperty('similar');
      const history = await lean.api('GET', `${NOTE}/history?path=a`, { key: t.key });
      expect(history.status).toBe(200);
      expect(history.body).toEqual([]);
      expect((await lean.api('DELETE', `${NOTE}?path=b`, { key: t.key })).status).toBe(200);
      expect((await lean.api('GET', `${NOTE}/history?path=b`, { key: t.key })).status).toBe(404);
      const conn = lean.server.orm.em.fork().getConnection();
      const [{ n }] = await conn.execute('select count(*)::int as n from memory_notes where workspace_id = ? and near_keys is null', [
        t.workspace.id,
      ]);
      expect(n).toBe(1);
    } finally {
      await lean.close();
      await database?.drop();
    }
  });
});
