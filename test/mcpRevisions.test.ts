import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MCP_FIRST_PARAGRAPH } from '../rest/mcp.js';
import { ROUTES } from '../rest/routes/index.js';
import { startTestApp, type TestApp } from './support/app.js';
import { tenant, type Tenant } from './support/factories.js';
import { MCP_CLIENTS } from './support/mcpClients.js';

// What the 2026-07-28 revision adds on the wire (no handshake, the version and capabilities in each
// request's _meta, Mcp-Method/Mcp-Name headers checked against the body, cache hints on list
// results), what hosts' directory reviews ask of every tool, and that both revisions share one
// boundary (key, rate limit). The acceptance tests of test/mcp.test.ts run with every client.
let app: TestApp;
let t: Tenant;
beforeAll(async () => {
  app = await startTestApp({ rateLimit: { max: 40, windowSeconds: 60 } });
  t = await tenant(app);
});
afterAll(async () => app?.close());

const MODERN = '2026-07-28';
const envelope = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {} };

/** One raw 2026-07-28 request: the headers a conforming client sends, overridable. */
async function modern(method: string, params: Record<string, unknown> = {}, headers: Record<string, string> = {}, key = t.key) {
  const name: Record<string, string> = typeof params.name === 'string' ? { 'mcp-name': params.name } : {};
  const res = await fetch(`${app.url}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN,
      'mcp-method': method,
      ...name,
      ...headers,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method, params: { ...params, _meta: envelope } }),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as any };
}

describe('MCP on the 2026-07-28 revision', () => {
  it('answers server/discover without a handshake or session: capabilities, instructions, cache hints', async () => {
    const res = await modern('server/discover');
    expect(res.status).toBe(200);
    expect(res.headers.get('mcp-session-id')).toBeNull();
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body.result).toMatchObject({
      supportedVersions: expect.arrayContaining([MODERN]),
      // tools/list_changed is delivered to subscriptions/listen streams that ask for it.
      capabilities: { tools: { listChanged: true } },
      ttlMs: 60_000,
      cacheScope: 'private',
    });
    expect(res.body.result.instructions.startsWith(`${MCP_FIRST_PARAGRAPH}\n\n`)).toBe(true);
  });

  it('lists tools in the route table order every time, with a private cache hint (the list depends on the caller)', async () => {
    const first = await modern('tools/list');
    const second = await modern('tools/list');
    expect(first.body.result).toMatchObject({ ttlMs: 300_000, cacheScope: 'private' });
    const names = first.body.result.tools.map((tool: { name: string }) => tool.name);
    expect(names).toEqual(ROUTES.map((r) => r.name));
    expect(second.body.result.tools).toEqual(first.body.result.tools);
  });

  it('refuses a request whose Mcp-Method or Mcp-Name header disagrees with its body (400, -32020), and one without a version', async () => {
    const method = await modern('tools/list', {}, { 'mcp-method': 'tools/call' });
    expect(method.status).toBe(400);
    expect(method.body.error.code).toBe(-32020);
    const name = await modern('tools/call', { name: 'changelog_list', arguments: {} }, { 'mcp-name': 'memory_put_note' });
    expect(name.status).toBe(400);
    expect(name.body.error.code).toBe(-32020);
    const ok = await modern('tools/call', { name: 'changelog_list', arguments: {} });
    expect(ok.status).toBe(200);
    expect(ok.body.result.isError).toBeFalsy();
  });

  it('answers tool errors as on 2025-11-25: an unknown tool is a not_found envelope in a tool error result', async () => {
    const res = await modern('tools/call', { name: 'no_such_tool', arguments: {} });
    expect(res.status).toBe(200);
    expect(res.body.result.isError).toBe(true);
    expect(JSON.parse(res.body.result.content[1].text).error).toMatchObject({ code: 'not_found', status: 404 });
  });
});

describe.each(MCP_CLIENTS)('what hosts read, $name', (kind) => {
  it('gives every tool a title and the read-only, destructive and open-world hints; instructions open with one short paragraph', async () => {
    const client = await kind.connect(app.url, t.key);
    try {
      const { tools } = await client.listTools();
      expect(tools).toHaveLength(ROUTES.length);
      for (const tool of tools) {
        expect(tool.title, tool.name).toEqual(expect.any(String));
        expect(typeof tool.annotations.readOnlyHint, tool.name).toBe('boolean');
        expect(typeof tool.annotations.destructiveHint, tool.name).toBe('boolean');
        expect(typeof tool.annotations.openWorldHint, tool.name).toBe('boolean');
      }
      // ChatGPT reads the first 512 characters of a server's instructions.
      const instructions = client.getInstructions()!;
      expect(MCP_FIRST_PARAGRAPH.length).toBeLessThanOrEqual(512);
      expect(instructions.slice(0, 512)).toContain(MCP_FIRST_PARAGRAPH);
    } finally {
      await client.close();
    }
  });
});

describe('one boundary for both revisions', () => {
  it('answers 401 with the challenge without a key, and 429 with Retry-After past the rate limit, on each revision', async () => {
    const anonymous = await fetch(`${app.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'mcp-protocol-version': MODERN, 'mcp-method': 'server/discover' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: envelope } }),
    });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toMatch(/^Bearer /);
    const busy = await tenant(app);
    let modernStatus = 0;
    // Up to two windows' worth (40 each) and more: a window that turns over during the loop cannot hide the limit.
    for (let i = 0; i < 85 && modernStatus !== 429; i++) modernStatus = (await modern('tools/list', {}, {}, busy.key)).status;
    expect(modernStatus).toBe(429);
    const legacy = await fetch(`${app.url}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${busy.key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(legacy.status).toBe(429);
    expect(legacy.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(((await legacy.json()) as { error: { code: string } }).error.code).toBe('rate_limited');
  });
});
