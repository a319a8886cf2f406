import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { wks } from './support/cli.js';
import { createKey, createOrg, createWorkspace, tenant, ALL_PERMISSIONS, type Tenant } from './support/factories.js';
import { png } from './support/images.js';

// Each CLI process compiles its sources at start (2–4 s on two busy cores); tests run several.
vi.setConfig({ testTimeout: 120_000 });

let app: TestApp;
let env: Record<string, string>;
let source: Tenant;
let uploadUrl: string;
const dir = mkdtempSync(join(tmpdir(), 'wks-archive-test-'));
const W = '/api/v1/workspaces/-';

/**
 * A workspace with every kind of record: sections, articles and their revisions, a proposal, changelog, notes and their
 * revisions, a content gap, an upload and an attached spec.
 */
async function seed(t: Tenant, on: TestApp = app): Promise<void> {
  const call = async (method: string, path: string, body?: unknown, form?: FormData) => {
    const res = await on.api(method, `${W}${path}`, { key: t.key, body, form });
    expect(res.status, `${method} ${path}: ${res.text}`).toBeLessThan(300);
    return res.body;
  };
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(png(3, 2))], { type: 'image/png' }), 'dot.png');
  uploadUrl = (await call('POST', '/uploads', undefined, form)).url;
  await call('POST', '/sections', { label: 'Guides' });
  await call('POST', '/articles', { title: 'Install', section: 'guides', markdown: `Steps.\n\n![dot](${uploadUrl})` });
  await call('PATCH', '/articles/install', { status: 'STABLE' });
  await call('POST', '/articles', { title: 'Upgrade', section: 'guides', markdown: 'Later.' });
  await call('POST', '/proposals', { article: 'install', markdown: 'Better steps.', summary: 'Clarify' });
  for (const [title, status] of [
    ['Faster search', 'published'],
    ['Dark mode', 'draft'],
  ])
    await call('POST', '/changelog', { title, markdown: `${title}.`, status, tags: ['ui'], published_at: null });
  await call('PUT', '/memory/note', { path: 'team/oncall', body: 'Ana this week', kind: 'note', links: [], tags: ['ops'] });
  await call('PUT', '/memory/note', { path: 'team/oncall', body: 'Bo this week', kind: 'note', links: ['team/roster'], tags: ['ops'] });
  await call('PUT', '/memory/note', { path: 'team/roster', body: 'Ana, Bo', kind: 'note', links: [], tags: [] });
  await call('POST', '/content-gaps', { question: 'How do I rotate keys?', slug: 'install' });
  await call('PUT', '/openapi', {
    spec: {
      openapi: '3.0.3',
      info: { title: 'Pets', version: '1' },
      paths: { '/pets': { get: { operationId: 'listPets', tags: ['pets'], responses: { 200: { description: 'OK' } } } } },
    },
  });
}

beforeAll(async () => {
  app = await startTestApp();
  env = { WKS_URL: app.url, WKS_ADMIN_TOKEN: app.adminToken };
  source = await tenant(app, { plan: 'pro' });
  await seed(source);
});
afterAll(() => app?.close());

interface Lines {
  header: any;
  records: { type: string; data: any }[];
  trailer: any;
}

function lines(file: string): Lines {
  const all = gunzipSync(readFileSync(file))
    .toString('utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  return { header: all[0], records: all.slice(1, -1), trailer: all.at(-1) };
}

/** Columns naming a member or an agent key: an import keeps them only when they are of the importing organization. */
const MEMBER_AND_KEY_IDS = ['agent_key_id', 'member_id', 'reviewed_by', 'written_by_key_id', 'replaced_by_key_id'];

/** The archive with those ids nulled, as an import into another organization leaves them. */
function withoutMemberAndKeyIds(archive: Lines): Lines {
  const records = archive.records.map((r) => ({
    ...r,
    data: Object.fromEntries(Object.entries(r.data).map(([k, v]) => [k, MEMBER_AND_KEY_IDS.includes(k) ? null : v])),
  }));
  return { ...archive, records };
}

/** What the format re-issues on import, replaced by placeholders: workspace id and export time, upload ids (and links to them). */
function normalise(archive: Lines): unknown {
  const uploads = archive.records.filter((r) => r.type === 'upload').map((r) => r.data.id as string);
  let text = JSON.stringify(archive.records);
  uploads.forEach((id, i) => (text = text.split(id).join(`UPLOAD${i}`)));
  return {
    header: { ...archive.header, workspace: { ...archive.header.workspace, id: 'ID' }, createdAt: 'T' },
    records: JSON.parse(text),
    trailerCounts: archive.trailer.counts,
  };
}

/** Rewrites an archive's lines and, unless `keepSum`, a matching trailer checksum. */
function rewrite(file: string, out: string, edit: (l: Lines) => void, keepSum = false): void {
  const archive = lines(file);
  edit(archive);
  const body = [archive.header, ...archive.records].map((l) => `${JSON.stringify(l)}\n`).join('');
  const trailer = keepSum ? archive.trailer : { ...archive.trailer, sha256: createHash('sha256').update(body).digest('hex') };
  writeFileSync(out, gzipSync(`${body}${JSON.stringify(trailer)}\n`));
}

async function postArchive(path: string, bytes: Buffer, token: string | null = app.adminToken) {
  const headers: Record<string, string> = { 'content-type': 'application/gzip' };
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await fetch(`${app.url}${path}`, { method: 'POST', headers, body: new Uint8Array(bytes) });
  return { status: res.status, body: (await res.json()) as any };
}

const emptyCounts = async (workspaceId: string) => {
  const res = await fetch(`${app.url}/admin/workspaces/${workspaceId}/export`, { headers: { authorization: `Bearer ${app.adminToken}` } });
  expect(res.status).toBe(200);
  const file = join(dir, `check-${workspaceId}.gz`);
  writeFileSync(file, Buffer.from(await res.arrayBuffer()));
  return lines(file).trailer.counts;
};

describe('workspace archives', () => {
  let first: string;

  it('export → import into a new workspace → export again: identical but for what is re-issued', async () => {
    first = join(dir, 'first.wks.gz');
    const exported = await wks(['export', source.workspace.id, first], env);
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.stderr).toMatch(/export: .* done in/);
    const a = lines(first);
    expect(a.header).toMatchObject({ format: 'wks-archive', version: 1, workspace: { id: source.workspace.id } });
    expect(a.trailer.counts).toEqual(a.header.counts);
    for (const type of [
      'section',
      'article',
      'article_revision',
      'proposal',
      'changelog_entry',
      'memory_note',
      'memory_note_revision',
      'content_gap_report',
      'upload',
      'openapi_spec',
    ])
      expect(a.trailer.counts[type], type).toBeGreaterThan(0);

    const imported = await wks(['import', first, '--json'], env);
    expect(imported.code, imported.stderr).toBe(0);
    const { workspaceId } = JSON.parse(imported.stdout);
    expect(workspaceId).not.toBe(source.workspace.id);
    console.log(`export ${exported.ms} ms, import ${imported.ms} ms (CLI process start included), ${readFileSync(first).length} bytes`);

    const second = join(dir, 'second.wks.gz');
    expect((await wks(['export', workspaceId, second], env)).code).toBe(0);
    expect(normalise(lines(second))).toEqual(normalise(a));
    expect(lines(second).header.workspace.id).toBe(workspaceId);

    // The imported workspace works: its key reads the article, whose image link points at the re-issued upload.
    const key = (await createKey(app, source.member.id, { permissions: ALL_PERMISSIONS, workspaceId })).key;
    const article = await app.api('GET', `${W}/articles/install`, { key });
    expect(article.status).toBe(200);
    const newUrl = /\/uploads\/[^)]+/.exec(article.body.markdown)![0];
    expect(newUrl).not.toBe(uploadUrl);
    const image = await fetch(`${app.url}${newUrl}`);
    expect(image.status).toBe(200);
    expect(Buffer.from(await image.arrayBuffer()).equals(png(3, 2))).toBe(true);
    expect((await app.api('GET', `${W}/memory/note?path=team%2Foncall`, { key })).body).toMatchObject({ body: 'Bo this week', version: 2 });
    expect((await app.api('GET', `${W}/openapi`, { key })).body).toMatchObject({ operationCount: 1 });
  });

  it('imports into an existing empty workspace, and refuses a workspace that has content (409)', async () => {
    const empty = await createWorkspace(app, source.org.id);
    const run = await wks(['import', first, '--into', empty.id, '--json'], env);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ workspaceId: empty.id });
    const again = await postArchive(`/admin/workspaces/${empty.id}/import`, readFileSync(first));
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ code: 'conflict', status: 409 });
  });

  it('refuses truncated, tampered, miscounted and future-version archives with the 400 envelope, writing nothing', async () => {
    const target = await createWorkspace(app, source.org.id);
    const bytes = readFileSync(first);
    const tampered = join(dir, 'tampered.gz');
    rewrite(first, tampered, (l) => (l.records.find((r) => r.type === 'article')!.data.title = 'Hacked'), true);
    const miscounted = join(dir, 'miscounted.gz');
    rewrite(first, miscounted, (l) => l.records.splice(l.records.map((r) => r.type).lastIndexOf('changelog_entry'), 1));
    const future = join(dir, 'future.gz');
    rewrite(first, future, (l) => (l.header.version = 2));
    const wrongType = join(dir, 'wrong-type.gz');
    rewrite(first, wrongType, (l) => (l.records.find((r) => r.type === 'memory_note')!.data.version = 'three'));
    const noTrailer = gzipSync(gunzipSync(bytes).toString('utf8').split('\n').slice(0, -2).join('\n') + '\n');
    const cases: [string, Buffer, RegExp][] = [
      ['truncated', bytes.subarray(0, Math.floor(bytes.length / 2)), /gzip/],
      ['tampered', readFileSync(tampered), /SHA-256/],
      ['miscounted', readFileSync(miscounted), /counts/],
      ['future version', readFileSync(future), /version 2 is not supported/],
      ['no trailer', noTrailer, /no trailer/],
      ['not gzip', Buffer.from('hello'), /gzip/],
      // Checksum and counts hold, but a value breaks the input contract.
      ['a value of the wrong type', readFileSync(wrongType), /memory_note\[\d+\]\.version: must be an integer/],
    ];
    for (const [name, body, message] of cases) {
      const res = await postArchive(`/admin/workspaces/${target.id}/import`, body);
      expect(res.status, name).toBe(400);
      expect(res.body.error, name).toMatchObject({ code: 'invalid_request', status: 400 });
      expect(res.body.error.message, name).toMatch(message);
    }
    expect(await emptyCounts(target.id)).toEqual({});

    const cli = await wks(['import', tampered, '--into', target.id], env);
    expect(cli.code).toBe(1);
    expect(cli.stderr).toContain('invalid_request (400)');
  });

  it('is admin-only: no token 401, an agent key 403, unknown workspace 404', async () => {
    expect((await postArchive('/admin/import', Buffer.from('x'), null)).status).toBe(401);
    const agent = await postArchive('/admin/import', Buffer.from('x'), source.key);
    expect(agent.status).toBe(403);
    expect(agent.body.error.code).toBe('permission_denied');
    const res = await fetch(`${app.url}/admin/workspaces/00000000-0000-0000-0000-000000000000/export`, {
      headers: { authorization: `Bearer ${app.adminToken}` },
    });
    expect(res.status).toBe(404);
    const badEscape = await fetch(`${app.url}/admin/workspaces/%E0%A4/export`, { headers: { authorization: `Bearer ${app.adminToken}` } });
    expect(badEscape.status).toBe(404);
    const cli = await wks(['export', 'nope', join(dir, 'x.gz')], env);
    expect(cli.code).toBe(1);
    expect(cli.stderr).toContain('not_found (404)');
  });
});

// On a PostgreSQL run, a second service on an embedded database: the move the format exists for.
describe.skipIf(!process.env.DATABASE_URL)('moving a workspace from the embedded database to PostgreSQL', () => {
  let embedded: TestApp;
  beforeAll(async () => {
    embedded = await startTestApp({ databaseUrl: undefined, embeddedDump: undefined });
  });
  afterAll(() => embedded?.close());

  it('exports from the embedded service, imports into PostgreSQL, and exports the same archive again', async () => {
    // Two different databases: the embedded one is PGlite (a newer PostgreSQL than the server's 15).
    const version = async (on: TestApp) => (await on.server.orm.em.fork().getConnection().execute('select version() as v'))[0].v as string;
    expect(await version(embedded)).not.toEqual(await version(app));
    const there = await tenant(embedded, { plan: 'pro' });
    await seed(there, embedded);
    const fromEmbedded = join(dir, 'from-embedded.wks.gz');
    const exported = await wks(['export', there.workspace.id, fromEmbedded], {
      WKS_URL: embedded.url,
      WKS_ADMIN_TOKEN: embedded.adminToken,
    });
    expect(exported.code, exported.stderr).toBe(0);
    // The archive's organization is not on this server: the answer says how to name one.
    const homeless = await wks(['import', fromEmbedded, '--json'], env);
    expect(homeless.code).toBe(1);
    expect(homeless.stderr).toContain('--org <id>');
    const org = await createOrg(app, { plan: 'pro' });
    const imported = await wks(['import', fromEmbedded, '--org', org.id, '--json'], env);
    expect(imported.code, imported.stderr).toBe(0);
    const { workspaceId } = JSON.parse(imported.stdout);
    const fromPostgres = join(dir, 'from-postgres.wks.gz');
    expect((await wks(['export', workspaceId, fromPostgres], env)).code).toBe(0);
    // Everything but what is re-issued, the organization it was moved into, and the ids of members
    // and keys of the organization it came from (not kept in another one).
    const again = lines(fromPostgres);
    expect(again.header.workspace.organizationId).toBe(org.id);
    again.header.workspace.organizationId = lines(fromEmbedded).header.workspace.organizationId;
    expect(normalise(again)).toEqual(normalise(withoutMemberAndKeyIds(lines(fromEmbedded))));
    expect(lines(fromEmbedded).records.some((r) => r.data.agent_key_id)).toBe(true);
  });
});
