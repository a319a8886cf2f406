import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { createKey, tenant, type Tenant } from './support/factories.js';
import { png, TINY } from './support/images.js';
import { rawRequest } from './support/raw.js';

let app: TestApp;
let t: Tenant;
beforeAll(async () => {
  app = await startTestApp();
  t = await tenant(app);
});
afterAll(async () => app?.close());

const URL_ = '/api/v1/workspaces/-/uploads';

function form(bytes: Buffer, name: string, type: string, field = 'file') {
  const f = new FormData();
  f.append(field, new Blob([new Uint8Array(bytes)], { type }), name);
  return f;
}

const upload = (bytes: Buffer, name = 'x.png', type = 'image/png', key = t.key) =>
  app.api('POST', URL_, { key, form: form(bytes, name, type) });

describe('uploads (20)', () => {
  it.each([
    ['png', png(3, 2), 'image/png', 'png', 3, 2],
    ['jpeg', TINY.jpeg, 'image/jpeg', 'jpg', 1, 1],
    ['webp', TINY.webp, 'image/webp', 'webp', 1, 1],
    ['gif', TINY.gif, 'image/gif', 'gif', 1, 1],
  ])('stores a tiny %s and serves the exact bytes back with its type', async (_n, bytes, type, ext, width, height) => {
    const res = await upload(bytes as Buffer, `whatever.bin`, 'application/octet-stream');
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({ contentType: type, size: (bytes as Buffer).length, width, height });
    expect(res.body.url).toMatch(new RegExp(`^/uploads/[A-Za-z0-9_-]{22}\\.${ext}$`));
    const served = await fetch(`${app.url}${res.body.url}`);
    expect(served.status).toBe(200);
    expect(served.headers.get('content-type')).toBe(type);
    expect(served.headers.get('x-content-type-options')).toBe('nosniff');
    expect(served.headers.get('cache-control')).toMatch(/immutable/);
    expect(Buffer.from(await served.arrayBuffer()).equals(bytes as Buffer)).toBe(true);
  });

  it('returns the same URL for the same bytes in a workspace', async () => {
    const bytes = png(5, 5);
    const a = await upload(bytes);
    const b = await upload(bytes);
    expect(b.body.url).toBe(a.body.url);
  });

  it('replays an upload sent again with its Idempotency-Key, and refuses other bytes under the same key with 409', async () => {
    const send = (bytes: Buffer) =>
      app.api('POST', URL_, { key: t.key, form: form(bytes, 'x.png', 'image/png'), headers: { 'idempotency-key': 'upload-1' } });
    const first = await send(png(9, 4));
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    const replay = await send(png(9, 4));
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.url).toBe(first.body.url);
    // The request's hash holds the file's digest: other bytes under the same key are another request.
    const other = await send(png(4, 9));
    expect(other.status).toBe(409);
    expect(other.body.error.code).toBe('conflict');
  });

  it('never lets a stored row that lies (type, digest, CR/LF) break the public URL or be handed to another upload', async () => {
    const own = await tenant(app);
    const genuine = png(7, 3);
    const digest = (await import('node:crypto')).createHash('sha256').update(genuine).digest('hex');
    const html = Buffer.from('<html><meta http-equiv="refresh" content="0;url=https://evil.test"><form action="https://evil.test"></form>');
    const sql = (text: string, params: unknown[]) => app.server.orm.em.fork().getConnection().execute(text, params);
    const plant = async (id: string, contentType: string, sha256: string) => {
      await sql(`insert into upload_parts (workspace_id, upload_id, part, data) values (?, ?, 0, ?)`, [own.workspace.id, id, html]);
      await sql(
        `insert into uploads (id, workspace_id, content_type, extension, size, width, height, sha256, created_at)
         values (?, ?, ?, 'png', ?, 1, 1, ?, now())`,
        [id, own.workspace.id, contentType, html.length, sha256],
      );
    };
    // A row as an unchecked import could leave it: HTML under a .png name, typed text/html, with the genuine file's digest.
    await plant('plantedAAAAAAAAAAAAAAA', 'text/html', digest);
    await plant('plantedBBBBBBBBBBBBBBB', 'image/png\r\nSet-Cookie: a=b', `${digest.slice(0, 10)}\r\nX-Evil: 1`);
    for (const id of ['plantedAAAAAAAAAAAAAAA', 'plantedBBBBBBBBBBBBBBB']) {
      const served = await fetch(`${app.url}/uploads/${id}.png`);
      expect(served.status, id).toBe(200);
      expect(served.headers.get('content-type')).toBe('image/png');
      expect(served.headers.get('x-content-type-options')).toBe('nosniff');
      expect(served.headers.get('content-security-policy')).toBe("default-src 'none'");
      expect(served.headers.get('set-cookie')).toBeNull();
      expect(served.headers.get('x-evil')).toBeNull();
    }
    expect((await fetch(`${app.url}/uploads/plantedBBBBBBBBBBBBBBB.png`)).headers.get('etag')).toMatch(/^"[0-9a-f]{10}%0D%0AX-Evil: 1"$/);
    // The genuine PNG with the planted digest gets a URL of its own that serves its own bytes.
    const res = await upload(genuine, 'x.png', 'image/png', own.key);
    expect(res.status).toBe(201);
    expect(res.body.url).not.toContain('planted');
    expect(Buffer.from(await (await fetch(`${app.url}${res.body.url}`)).arrayBuffer()).equals(genuine)).toBe(true);
    expect((await upload(genuine, 'x.png', 'image/png', own.key)).body.url).toBe(res.body.url);
  });

  it.each([
    ['a text file named .png', Buffer.from('hello, I am text'), 'evil.png', 'image/png'],
    [
      'an SVG',
      Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script></svg>'),
      'x.svg',
      'image/svg+xml',
    ],
    ['a PDF named .jpg', Buffer.from('%PDF-1.4\n%âãÏÓ\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF'), 'x.jpg', 'image/jpeg'],
    ['an empty file', Buffer.alloc(0), 'x.png', 'image/png'],
    ['a huge-dimension PNG (decompression bomb)', png(100_000, 100_000, true), 'bomb.png', 'image/png'],
  ])('refuses %s with 400', async (_n, bytes, name, type) => {
    const res = await upload(bytes, name, type);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_request');
    expect(res.body.error.details[0].field).toBe('file');
  });

  it('refuses a file just over 10 MiB with 400', async () => {
    const big = Buffer.concat([png(1, 1), randomBytes(10 * 1024 * 1024 + 1 - png(1, 1).length)]);
    expect(big.length).toBe(10 * 1024 * 1024 + 1);
    const res = await upload(big);
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/at most/);
  });

  it('accepts exactly 10 MiB', async () => {
    const head = png(1, 1);
    const exact = Buffer.concat([head, randomBytes(10 * 1024 * 1024 - head.length)]);
    const res = await upload(exact);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  });

  it('refuses a missing field, a wrong field name, JSON, and two files', async () => {
    expect((await app.api('POST', URL_, { key: t.key, form: form(png(1, 1), 'a.png', 'image/png', 'image') })).status).toBe(400);
    expect((await app.api('POST', URL_, { key: t.key, body: { file: 'abc' } })).status).toBe(400);
    const two = form(png(1, 1), 'a.png', 'image/png');
    two.append('file', new Blob([new Uint8Array(png(2, 2))]), 'b.png');
    expect((await app.api('POST', URL_, { key: t.key, form: two })).status).toBe(400);
  });

  it('needs upload.image, and a URL that does not exist is 404', async () => {
    const reader = await createKey(app, t.member.id, { permissions: ['article.read'], workspaceId: t.workspace.id });
    const res = await upload(png(1, 1), 'a.png', 'image/png', reader.key);
    expect(res.status).toBe(403);
    expect(res.body.error.details).toEqual({ missing: ['upload.image'] });
    expect((await fetch(`${app.url}/uploads/AAAAAAAAAAAAAAAAAAAAAA.png`)).status).toBe(404);
  });

  it('answers raw traversal paths under /uploads/ with a 404 envelope, never a file', async () => {
    const stored = await upload(png(6, 6));
    expect(stored.status).toBe(201);
    // The same raw client reaches a real upload, so the 404s below come from the uploads handler's lookup.
    const real = await rawRequest(app.url, 'GET', stored.body.url);
    expect(real.status).toBe(200);
    expect(real.headers['content-type']).toBe('image/png');
    const id = stored.body.url.slice('/uploads/'.length);
    for (const path of [
      '/uploads/../../etc/passwd',
      '/uploads/..%2f..%2fetc%2fpasswd',
      '/uploads/%2e%2e/%2e%2e/etc/passwd',
      '/uploads/%2e%2e%2f%2e%2e%2fetc%2fpasswd',
      '/uploads/%252e%252e%252fetc%252fpasswd',
      '/uploads/..%5c..%5cetc%5cpasswd',
      `/uploads/${id}/../../../etc/passwd`,
      `/uploads/..%2f${id}`,
      `/uploads/${id}%00.txt`,
    ]) {
      const res = await rawRequest(app.url, 'GET', path);
      expect(res.status, path).toBe(404);
      expect(res.body.error, path).toMatchObject({ code: 'not_found', status: 404 });
      expect(res.text, path).not.toMatch(/root:|\bbin\b/);
    }
  });

  it('accepts a GraphQL multipart request on /graphql too', async () => {
    const f = new FormData();
    f.append(
      'operations',
      JSON.stringify({
        query: 'mutation($file: Upload!) { uploadImage(workspace: "-", file: $file) { url contentType width } }',
        variables: { file: null },
      }),
    );
    f.append('map', JSON.stringify({ 0: ['variables.file'] }));
    f.append('0', new Blob([new Uint8Array(png(4, 4))]), 'g.png');
    const res = await fetch(`${app.url}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.key}`, 'apollo-require-preflight': 'true' },
      body: f,
    });
    const json = await res.json();
    expect(json.errors).toBeUndefined();
    expect(json.data.uploadImage).toMatchObject({ contentType: 'image/png', width: 4 });
  });
});
