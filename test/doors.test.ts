import { request as httpRequest } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BODY_LIMITS } from '../src/contract/rules.js';
import type { Embedder } from '../src/search/embedder.js';
import { startTestApp, type TestApp } from './support/app.js';
import { createKey, tenant, type Tenant } from './support/factories.js';
import { png } from './support/images.js';

// The three doors (REST, GraphQL, MCP) hold the same line: the same refusals, the same rate
// limit per operation, the same order of checks, and safe output.
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.close());

const W = '/api/v1/workspaces/-';

async function mcpClient(key: string) {
  const client = new Client({ name: 'doors-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${app.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }),
  );
  return client;
}

const toolError = (result: any) => JSON.parse(result.content[1].text).error;

describe('one input contract for every door', () => {
  it('refuses the same over-long path, title and tag list with the same 400 on REST, GraphQL and MCP', async () => {
    const t = await tenant(app);
    const client = await mcpClient(t.key);
    const cases: { field: string; rest: () => Promise<any>; gql: () => Promise<any>; mcp: () => Promise<any> }[] = [
      {
        field: 'path',
        rest: () =>
          app.api('PUT', `${W}/memory/note`, { key: t.key, body: { path: 'p'.repeat(513), body: 'b', kind: 'note', links: [], tags: [] } }),
        gql: () =>
          app.gql(
            'mutation($p: String!) { putMemoryNote(workspace: "-", input: { path: $p, body: "b", kind: "note", links: [], tags: [] }) { path } }',
            { p: 'p'.repeat(513) },
            t.key,
          ),
        mcp: () =>
          client.callTool({ name: 'memory_put_note', arguments: { path: 'p'.repeat(513), body: 'b', kind: 'note', links: [], tags: [] } }),
      },
      {
        field: 'title',
        rest: () =>
          app.api('POST', `${W}/changelog`, {
            key: t.key,
            body: { title: 't'.repeat(201), markdown: 'm', status: 'draft', tags: [], published_at: null },
          }),
        gql: () =>
          app.gql(
            'mutation($t: String!) { createChangelogEntry(workspace: "-", input: { title: $t, markdown: "m", status: draft, tags: [] }) { id } }',
            { t: 't'.repeat(201) },
            t.key,
          ),
        mcp: () =>
          client.callTool({
            name: 'changelog_create',
            arguments: { title: 't'.repeat(201), markdown: 'm', status: 'draft', tags: [], published_at: null },
          }),
      },
      {
        field: 'tags',
        rest: () =>
          app.api('PUT', `${W}/memory/note`, {
            key: t.key,
            body: { path: 'x', body: 'b', kind: 'note', links: [], tags: Array.from({ length: 21 }, (_, i) => `t${i}`) },
          }),
        gql: () =>
          app.gql(
            'mutation($t: [String!]!) { putMemoryNote(workspace: "-", input: { path: "x", body: "b", kind: "note", links: [], tags: $t }) { path } }',
            { t: Array.from({ length: 21 }, (_, i) => `t${i}`) },
            t.key,
          ),
        mcp: () =>
          client.callTool({
            name: 'memory_put_note',
            arguments: { path: 'x', body: 'b', kind: 'note', links: [], tags: Array.from({ length: 21 }, (_, i) => `t${i}`) },
          }),
      },
    ];
    for (const c of cases) {
      const rest = await c.rest();
      const gql = await c.gql();
      const mcp = await c.mcp();
      expect(rest.status, c.field).toBe(400);
      const restIssue = rest.body.error.details.find((d: any) => d.field === c.field);
      const gqlIssue = gql.errors[0].extensions.details.find((d: any) => d.field === c.field);
      const mcpIssue = toolError(mcp).details.find((d: any) => d.field === c.field);
      expect(gql.errors[0].extensions.code, c.field).toBe('invalid_request');
      expect(toolError(mcp).code, c.field).toBe('invalid_request');
      expect(gqlIssue.message, c.field).toBe(restIssue.message);
      expect(mcpIssue.message, c.field).toBe(restIssue.message);
    }
    expect((await app.api('GET', `${W}/memory`, { key: t.key })).body).toEqual([]);
    await client.close();
  });

  it('states the same numbers in the OpenAPI document, the SDL and the MCP tool schemas', async () => {
    const t = await tenant(app);
    const openapi = (await (await fetch(`${app.url}/api/v1/openapi.json`)).json()) as any;
    const putBody = openapi.paths['/workspaces/{workspace}/memory/note'].put.requestBody.content['application/json'].schema.properties;
    expect(putBody.path).toMatchObject({ maxLength: 512, minLength: 1 });
    expect(putBody.path.description).toMatch(/512 bytes in UTF-8/);
    const sdl = await app.gql('{ __type(name: "PutMemoryNoteInput") { inputFields { name description } } }', {}, null);
    expect(sdl.data.__type.inputFields.find((f: any) => f.name === 'path').description).toMatch(/512 bytes in UTF-8/);
    const client = await mcpClient(t.key);
    const tool = (await client.listTools()).tools.find((x) => x.name === 'memory_put_note')!;
    expect((tool.inputSchema.properties as any).path).toMatchObject({ maxLength: 512 });
    expect((tool.inputSchema.properties as any).tags).toMatchObject({ maxItems: 20 });
    await client.close();
  });
});

describe('rate limit per operation', () => {
  let limited: TestApp;
  beforeAll(async () => {
    limited = await startTestApp({ rateLimit: { max: 5, windowSeconds: 3600 } });
  });
  afterAll(async () => limited?.close());

  it('charges every GraphQL root field, aliases included, like one REST request each', async () => {
    const t = await tenant(limited);
    const four = `{ ${Array.from({ length: 4 }, (_, i) => `a${i}: sections(workspace: "-") { key }`).join(' ')} }`;
    const first = await fetch(`${limited.url}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: four }),
    });
    expect(first.status).toBe(200);
    const second = await fetch(`${limited.url}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: four }),
    });
    expect(second.status).toBe(429);
    expect(Number(second.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(((await second.json()) as any).errors[0].extensions.code).toBe('rate_limited');
    const rest = await limited.api('GET', `${W}/sections`, { key: t.key });
    expect(rest.status).toBe(429);
  });

  it('refuses JSON-RPC batches on /mcp (one message per request, one charge each)', async () => {
    const t = await tenant(limited);
    const batch = Array.from({ length: 30 }, (_, i) => ({
      jsonrpc: '2.0',
      id: i,
      method: 'tools/call',
      params: { name: 'sections_list', arguments: {} },
    }));
    const res = await fetch(`${limited.url}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify(batch),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).error.code).toBe(-32600);
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      const one = await fetch(`${limited.url}/mcp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify(batch[0]),
      });
      statuses.push(one.status);
    }
    // The refused batch was one charge: four single calls pass, then the window is spent.
    expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
  });
});

describe('MCP transport', () => {
  it('answers malformed JSON with a JSON-RPC parse error (400) and an over-size body with a 413 envelope', async () => {
    const t = await tenant(app);
    const headers = { authorization: `Bearer ${t.key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const bad = await fetch(`${app.url}/mcp`, { method: 'POST', headers, body: '{"jsonrpc": "2.0", "id": 1, "method": ' });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as any).error.code).toBe(-32700);
    const big = await fetch(`${app.url}/mcp`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'x', params: { pad: 'x'.repeat(BODY_LIMITS.mcp) } }),
    });
    expect(big.status).toBe(413);
    expect(((await big.json()) as any).error).toMatchObject({ code: 'payload_too_large', status: 413 });
  });

  it('takes 2 MiB and 9.5 MiB images through the upload tool, like POST uploads', async () => {
    const t = await tenant(app);
    const client = await mcpClient(t.key);
    for (const side of [1448, 3156]) {
      const image = png(side, side, false, true);
      const result = await client.callTool({
        name: 'uploads_create',
        arguments: { file: image.toString('base64'), filename: 'noise.png' },
      });
      expect(result.isError, `${image.length} bytes`).toBeFalsy();
      expect(result.structuredContent).toMatchObject({ contentType: 'image/png', size: image.length, width: side });
    }
    await client.close();
  }, 60_000);
});

describe('order of checks', () => {
  it('refuses an upload from a key without upload.image before its bytes stream in', async () => {
    const t = await tenant(app);
    const reader = await createKey(app, t.member.id, { permissions: ['article.read'], workspaceId: t.workspace.id });
    const url = new URL(`${app.url}${W}/uploads`);
    // Headers and the first bytes of a 10 MiB body; the answer must come without the rest.
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest(
        url,
        {
          method: 'POST',
          headers: {
            authorization: `Bearer ${reader.key}`,
            'content-type': 'multipart/form-data; boundary=x',
            'content-length': String(10 * 1024 * 1024),
          },
        },
        (res) => {
          let body = '';
          res.on('data', (c) => (body += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      req.on('error', reject);
      req.write('--x\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\n\r\n');
      req.write(Buffer.alloc(64 * 1024));
    });
    expect(answer.status).toBe(403);
    expect(JSON.parse(answer.body).error).toMatchObject({ code: 'permission_denied', details: { missing: ['upload.image'] } });
  });

  it('serves an idempotent replay only to a caller who passes the same checks', async () => {
    const t = await tenant(app);
    const body = { title: 'Once', markdown: 'm', status: 'draft', tags: [], published_at: null };
    const first = await app.api('POST', `${W}/changelog`, { key: t.key, body, headers: { 'idempotency-key': 'k-1' } });
    expect(first.status).toBe(201);
    const replay = await app.api('POST', `${W}/changelog`, { key: t.key, body, headers: { 'idempotency-key': 'k-1' } });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    await app.gql('mutation($id: ID!) { updateOrganization(id: $id, input: { requireTwoFactor: true }) { id } }', { id: t.org.id });
    const refused = await app.api('POST', `${W}/changelog`, { key: t.key, body, headers: { 'idempotency-key': 'k-1' } });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('two_factor_required');
  });
});

describe('GraphQL transport', () => {
  it('answers an over-size body with 413 and malformed JSON with 400, never a 5xx', async () => {
    const big = await fetch(`${app.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ __typename }', variables: { pad: 'x'.repeat(BODY_LIMITS.json) } }),
    });
    expect(big.status).toBe(413);
    expect(((await big.json()) as any).errors[0].extensions.code).toBe('payload_too_large');
    const bad = await fetch(`${app.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query": ' });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as any).errors[0].extensions.code).toBe('invalid_request');
  });

  it('reads backlinks only with memory.read', async () => {
    const t = await tenant(app, { permissions: ['memory.write'] });
    const res = await app.gql(
      'mutation { putMemoryNote(workspace: "-", input: { path: "a", body: "b", kind: "note", links: [], tags: [] }) { path backlinks { path } } }',
      {},
      t.key,
    );
    expect(res.errors?.[0].extensions).toMatchObject({ code: 'permission_denied', details: { missing: ['memory.read'] } });
    const reader = await tenant(app, { permissions: ['memory.write', 'memory.read'] });
    const ok = await app.gql(
      'mutation { putMemoryNote(workspace: "-", input: { path: "a", body: "b", kind: "note", links: [], tags: [] }) { path backlinks { path } } }',
      {},
      reader.key,
    );
    expect(ok.data.putMemoryNote).toEqual({ path: 'a', backlinks: [] });
  });
});

describe('output safety', () => {
  it('escapes stored text in search and memory-search snippets, adding only <mark>', async () => {
    const t = await tenant(app);
    await app.api('POST', `${W}/sections`, { key: t.key, body: { label: 'Docs', key: 'docs' } });
    const markdown =
      'Broken image <img src=x onerror=alert(1)> <img/src=x/onerror=alert(1)> when 1 < 2 & 3 > 2, or "quoted" \uE000forged\uE001 marks';
    const created = await app.api('POST', `${W}/articles`, { key: t.key, body: { title: 'Images', section: 'docs', markdown } });
    await app.api('PATCH', `${W}/articles/${created.body.slug}`, { key: t.key, body: { status: 'STABLE' } });
    const hits = (await app.api('GET', `${W}/search?q=image`, { key: t.key })).body;
    expect(hits[0].snippet).toContain('1 &lt; 2 &amp; 3 &gt; 2');
    expect(hits[0].snippet).toContain('&quot;quoted&quot;');
    expect(hits[0].snippet).toContain('forged marks');
    expect(hits[0].snippet.replace(/<\/?mark>/g, '')).not.toMatch(/[<>]/);
    expect(hits[0].snippet.match(/<mark>/g)).toHaveLength(hits[0].snippet.match(/<\/mark>/g)!.length);
    expect(hits[0].snippet).toMatch(/<mark>[^<]+<\/mark>/);
    await app.api('PUT', `${W}/memory/note`, {
      key: t.key,
      body: { path: 'xss', body: 'the note says a<b and c>d & <i>more</i>', kind: 'note', links: [], tags: [] },
    });
    const notes = (await app.api('GET', `${W}/memory/search?q=note`, { key: t.key })).body;
    expect(notes[0].snippet).toContain('&amp;');
    expect(notes[0].snippet.replace(/<\/?mark>/g, '')).not.toMatch(/[<>]/);
  });

  it('refuses internal webhook targets without echoing the address, including site-local, 6to4 and Teredo', async () => {
    const t = await tenant(app);
    const strict = await startTestApp({ outboundAllowLoopback: false });
    try {
      for (const url of [
        'http://10.0.0.1/',
        'http://localhost/',
        'http://[fec0::1]/',
        'http://[2002:a00:1::1]/',
        'http://[2001:0:a00:1::1]/',
        'http://169.254.169.254/',
      ]) {
        const res = await strict.gql('mutation($o: ID!, $u: String!) { createWebhook(input: { organizationId: $o, url: $u }) { id } }', {
          o: t.org.id,
          u: url,
        });
        expect(res.errors?.[0].extensions.code, url).toBe('invalid_request');
        expect(res.errors?.[0].message, url).not.toMatch(/127\.0\.0\.1|::1|10\.0\.0\.1|169\.254|fec0|2002|2001/);
      }
    } finally {
      await strict.close();
    }
  });

  it('keeps recent query vectors per workspace: another workspace asking the same question pays its own inference', async () => {
    const calls: string[] = [];
    const embedder: Embedder = {
      model: 'counting-test',
      embed: async (texts) => {
        calls.push(...texts);
        return texts.map(() => Array.from({ length: 8 }, (_, i) => (i === 0 ? 1 : 0)));
      },
    };
    const counted = await startTestApp({ embedder });
    try {
      const a = await tenant(counted);
      const b = await tenant(counted);
      const ask = (k: Tenant) =>
        counted.api('GET', `${W}/search?q=${encodeURIComponent('how do I rotate keys')}&semantic=true`, { key: k.key });
      await ask(a);
      await ask(a);
      expect(calls.filter((c) => c === 'how do I rotate keys')).toHaveLength(1);
      await ask(b);
      expect(calls.filter((c) => c === 'how do I rotate keys')).toHaveLength(2);
    } finally {
      await counted.close();
    }
  });
});
