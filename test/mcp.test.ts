import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROUTES } from '../rest/routes/index.js';
import { startTestApp, type TestApp } from './support/app.js';
import { createKey, tenant } from './support/factories.js';
import { png } from './support/images.js';
import { startReceiver } from './support/receiver.js';
import { MCP_CLIENTS, type McpClientKind } from './support/mcpClients.js';

let app: TestApp;
beforeAll(async () => {
  // Same retry schedule as the webhook tests: on a shared database either dispatcher may deliver their events.
  app = await startTestApp({
    outboundAllowLoopback: true,
    webhookDispatcher: true,
    webhookRetryScheduleMs: [150, 300],
    embeddingWorker: false,
  });
});
afterAll(async () => app?.close());

let kind: McpClientKind;
const connect = (key: string) => kind.connect(app.url, key);

// The agent-facing endpoints written out (name, method, path): a row dropped from the route table
// disappears from the tools, the document and the router at once, so only a list kept apart notices.
const ENDPOINTS: [string, string, string][] = [
  ['changelog_list', 'GET', '/workspaces/{workspace}/changelog'],
  ['changelog_create', 'POST', '/workspaces/{workspace}/changelog'],
  ['changelog_delete', 'DELETE', '/workspaces/{workspace}/changelog/{id}'],
  ['changelog_update', 'PATCH', '/workspaces/{workspace}/changelog/{id}'],
  ['memory_list_notes', 'GET', '/workspaces/{workspace}/memory'],
  ['memory_get_note', 'GET', '/workspaces/{workspace}/memory/note'],
  ['memory_put_note', 'PUT', '/workspaces/{workspace}/memory/note'],
  ['memory_delete_note', 'DELETE', '/workspaces/{workspace}/memory/note'],
  ['memory_note_history', 'GET', '/workspaces/{workspace}/memory/note/history'],
  ['memory_note_revision', 'GET', '/workspaces/{workspace}/memory/note/revisions/{version}'],
  ['memory_search', 'GET', '/workspaces/{workspace}/memory/search'],
  ['search', 'GET', '/workspaces/{workspace}/search'],
  ['fetch', 'GET', '/workspaces/{workspace}/documents'],
  ['content_gaps_report', 'POST', '/workspaces/{workspace}/content-gaps'],
  ['content_gaps_list', 'GET', '/workspaces/{workspace}/content-gaps'],
  ['content_gaps_propose', 'POST', '/workspaces/{workspace}/content-gaps/{group}/proposal'],
  ['content_gaps_draft', 'GET', '/workspaces/{workspace}/content-gaps/{group}/draft'],
  ['articles_tree', 'GET', '/workspaces/{workspace}/articles'],
  ['articles_create', 'POST', '/workspaces/{workspace}/articles'],
  ['articles_get', 'GET', '/workspaces/{workspace}/articles/{slug}'],
  ['articles_update', 'PATCH', '/workspaces/{workspace}/articles/{slug}'],
  ['articles_place', 'POST', '/workspaces/{workspace}/articles/{slug}/placement'],
  ['articles_revisions', 'GET', '/workspaces/{workspace}/articles/{slug}/revisions'],
  ['articles_revision', 'GET', '/workspaces/{workspace}/articles/{slug}/revisions/{version}'],
  ['articles_diff', 'GET', '/workspaces/{workspace}/articles/{slug}/diff'],
  ['articles_restore', 'POST', '/workspaces/{workspace}/articles/{slug}/revisions/{version}/restore'],
  ['proposals_list', 'GET', '/workspaces/{workspace}/proposals'],
  ['proposals_create', 'POST', '/workspaces/{workspace}/proposals'],
  ['sections_list', 'GET', '/workspaces/{workspace}/sections'],
  ['sections_create', 'POST', '/workspaces/{workspace}/sections'],
  ['uploads_create', 'POST', '/workspaces/{workspace}/uploads'],
  ['openapi_status', 'GET', '/workspaces/{workspace}/openapi'],
  ['openapi_attach', 'PUT', '/workspaces/{workspace}/openapi'],
  ['openapi_detach', 'DELETE', '/workspaces/{workspace}/openapi'],
  ['openapi_pages', 'GET', '/workspaces/{workspace}/openapi/pages'],
  ['openapi_detach_page', 'DELETE', '/workspaces/{workspace}/openapi/pages/{slug}'],
  ['openapi_place_page', 'POST', '/workspaces/{workspace}/openapi/pages/{slug}/placement'],
  ['openapi_create_section', 'POST', '/workspaces/{workspace}/openapi/sections'],
  ['openapi_sync', 'POST', '/workspaces/{workspace}/openapi/sync'],
  ['guidance_get', 'GET', '/workspaces/{workspace}/guidance'],
  ['guidance_set', 'PUT', '/workspaces/{workspace}/guidance'],
];

const text = (result: any) => JSON.parse(result.content[result.isError ? 1 : 0].text);

// Every acceptance test runs with each client: the v1 SDK (most hosts today) and the v2 SDK on each revision.
describe.each(MCP_CLIENTS)('MCP server (POST /mcp), $name', (client) => {
  beforeAll(() => {
    kind = client;
  });

  it('has one tool per REST endpoint of the written-out contract, each served by REST and documented', async () => {
    const expected = ENDPOINTS.map(([name]) => name).sort();
    expect(ROUTES.map((r) => [r.name, r.method, r.path])).toEqual(ENDPOINTS);
    const t = await tenant(app);
    const client = await connect(t.key);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(expected);
    const doc = (await (await fetch(`${app.url}/api/v1/openapi.json`)).json()) as { paths: Record<string, Record<string, any>> };
    const documented = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops).map(([method, op]) => `${op.operationId} ${method.toUpperCase()} ${path}`),
    );
    expect(documented.sort()).toEqual(ENDPOINTS.map(([name, method, path]) => `${name} ${method} ${path}`).sort());
    // REST serves each one: without a key it is a 401, never the router's "No endpoint" 404.
    for (const [name, method, path] of ENDPOINTS) {
      const res = await app.api(method, `/api/v1${path.replace(/\{(\w+)\}/g, (_, p: string) => (p === 'workspace' ? '-' : '1'))}`);
      expect(res.status, name).toBe(401);
    }
    const put = tools.find((tool) => tool.name === 'memory_put_note')!;
    expect(put.inputSchema.required?.sort()).toEqual(['body', 'kind', 'links', 'path', 'tags']);
    expect(put.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: true });
    expect(tools.find((tool) => tool.name === 'search')!.annotations).toMatchObject({ readOnlyHint: true });
    expect(tools.find((tool) => tool.name === 'changelog_create')!.annotations).toMatchObject({
      readOnlyHint: false,
      idempotentHint: false,
    });
    expect(client.getInstructions()).toMatch(/memory notes/i);
    expect(client.getInstructions()).toMatch(/content_gaps_report/);
    await client.close();
  });

  it("lists only the tools the key's effective permissions allow", async () => {
    const t = await tenant(app, { role: 'viewer', permissions: ['memory.read', 'memory.write', 'search.read'] });
    const client = await connect(t.key);
    const names = (await client.listTools()).tools.map((tool) => tool.name).sort();
    // memory.write is above the viewer ceiling; the workspace's guidance needs no permission, and fetch
    // needs what reads the kind of document it is asked for (memory.read, for a note)
    expect(names).toEqual([
      'fetch',
      'guidance_get',
      'memory_get_note',
      'memory_list_notes',
      'memory_note_history',
      'memory_note_revision',
      'memory_search',
      'search',
    ]);
    await client.close();
  });

  it('calls a write tool and a read tool, with the same audit trail and a webhook delivery', async () => {
    const receiver = await startReceiver();
    try {
      const t = await tenant(app);
      const hook = (
        await app.gql(
          'mutation($o: ID!, $u: String!) { createWebhook(input: { organizationId: $o, url: $u, events: ["memory.*"] }) { secret } }',
          { o: t.org.id, u: receiver.url },
        )
      ).data.createWebhook;
      const client = await connect(t.key);
      const put = await client.callTool({
        name: 'memory_put_note',
        arguments: { path: 'agents/notes', body: 'Remember this.', kind: 'note', links: [], tags: ['mcp'] },
      });
      expect(put.isError).toBeFalsy();
      expect(put.structuredContent).toMatchObject({ path: 'agents/notes', workspaceId: t.workspace.id, tags: ['mcp'] });
      const read = await client.callTool({ name: 'memory_get_note', arguments: { path: 'agents/notes' } });
      expect(text(read)).toMatchObject({ body: 'Remember this.' });
      const list = await client.callTool({ name: 'memory_list_notes', arguments: { limit: 1 } });
      expect(list.structuredContent).toEqual({ items: [expect.objectContaining({ path: 'agents/notes' })], nextCursor: null });
      const events = await app.gql('query($w: ID!) { auditEvents(workspaceId: $w, limit: 1) { action agentKeyId targetId } }', {
        w: t.workspace.id,
      });
      expect(events.data.auditEvents[0]).toEqual({ action: 'memory.note.created', agentKeyId: t.keyId, targetId: 'agents/notes' });
      const [req] = await receiver.waitFor(1);
      expect((new Webhook(hook.secret).verify(req.body, req.headers as Record<string, string>) as any).type).toBe('memory.note.created');
      const upload = await client.callTool({
        name: 'uploads_create',
        arguments: { file: png(2, 2).toString('base64'), filename: 'a.png' },
      });
      expect(upload.structuredContent).toMatchObject({ contentType: 'image/png', width: 2 });
      // The tool's digest of the decoded bytes is the upload's: the same bytes through either door are one upload.
      const again = await client.callTool({ name: 'uploads_create', arguments: { file: png(2, 2).toString('base64'), filename: 'b.png' } });
      const body = new FormData();
      body.append('file', new Blob([new Uint8Array(png(2, 2))], { type: 'image/png' }), 'c.png');
      const rest = await app.api('POST', '/api/v1/workspaces/-/uploads', { key: t.key, form: body });
      expect(rest.status).toBe(201);
      expect([(again.structuredContent as { url: string }).url, rest.body.url]).toEqual([
        (upload.structuredContent as { url: string }).url,
        (upload.structuredContent as { url: string }).url,
      ]);
      await client.close();
    } finally {
      await receiver.close();
    }
  });

  it('returns tool errors carrying the envelope code and message (403, 404, 409, 400)', async () => {
    const t = await tenant(app, { plan: 'free' });
    const reader = await createKey(app, t.member.id, { permissions: ['memory.read', 'changelog.read'], workspaceId: t.workspace.id });
    const client = await connect(reader.key);
    const denied = await client.callTool({
      name: 'memory_put_note',
      arguments: { path: 'x', body: 'y', kind: 'note', links: [], tags: [] },
    });
    expect(denied.isError).toBe(true);
    expect(text(denied).error).toMatchObject({ code: 'permission_denied', status: 403 });
    expect((denied.content as any)[0].text).toMatch(/^permission_denied: /);
    const missing = await client.callTool({ name: 'memory_get_note', arguments: { path: 'nope' } });
    expect(text(missing).error.code).toBe('not_found');
    const bad = await client.callTool({ name: 'memory_get_note', arguments: { path: 'a//b' } });
    expect(text(bad).error.code).toBe('invalid_request');
    const unknownArg = await client.callTool({ name: 'changelog_list', arguments: { colour: 'red' } });
    expect(text(unknownArg).error).toMatchObject({ code: 'invalid_request', details: [{ field: 'colour' }] });
    await client.close();

    const writer = await connect(t.key);
    for (let i = 0; i < 200; i += 50) {
      await Promise.all(
        Array.from({ length: 50 }, (_, j) =>
          writer.callTool({ name: 'memory_put_note', arguments: { path: `q/${i + j}`, body: 'b', kind: 'note', links: [], tags: [] } }),
        ),
      );
    }
    const over = await writer.callTool({
      name: 'memory_put_note',
      arguments: { path: 'q/over', body: 'b', kind: 'note', links: [], tags: [] },
    });
    expect(text(over).error).toMatchObject({ code: 'memory_quota_exceeded', status: 409, details: { limit: 200 } });
    await writer.close();
  }, 60_000);

  it('requires workspace for org-wide keys, and answers 401 with WWW-Authenticate without a key', async () => {
    const t = await tenant(app, { orgWide: true });
    const client = await connect(t.key);
    const res = await client.callTool({ name: 'changelog_list', arguments: {} });
    expect(text(res).error).toMatchObject({ code: 'invalid_request', details: [{ field: 'workspace' }] });
    const ok = await client.callTool({ name: 'changelog_list', arguments: { workspace: t.workspace.id } });
    expect(ok.isError).toBeFalsy();
    await client.close();
    const anonymous = await fetch(`${app.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toMatch(/^Bearer /);
  });
});
