import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JSON_MAX_DEPTH, SAY } from '../src/contract/rules.js';
import { startTestApp, type TestApp } from './support/app.js';
import { tenant, type Tenant } from './support/factories.js';

// Text PostgreSQL cannot store, and JSON nested past what anything recursive may meet: a 400 naming
// the field on every door (REST, GraphQL, MCP on both revisions, OAuth's registration), never a 500,
// and nothing written.
let app: TestApp;
let t: Tenant;
beforeAll(async () => {
  // Registrations are counted per address in the database, shared on PostgreSQL with the files that exhaust them on purpose.
  app = await startTestApp({ oauth: { registrationsPerHour: 100_000 } });
  t = await tenant(app, { plan: 'pro' });
});
afterAll(async () => app?.close());

const W = '/api/v1/workspaces/-';
const NUL = 'a\u0000b';
const UNPAIRED = 'a\ud800b';
const note = (over: Record<string, unknown>) => ({ path: 'hostile/note', body: 'b', kind: 'note', links: [], tags: [], ...over });

/** One field on all three doors: the REST call, the GraphQL operation and its variables, the MCP tool and its arguments. */
interface Door {
  field: string;
  rest(value: string): Promise<{ status: number; body: any }>;
  gql: { query: string; variables(value: string): Record<string, unknown> };
  mcp: { tool: string; args(value: string): Record<string, unknown> };
  /** A query parameter cannot carry an unpaired surrogate (percent-decoding gives U+FFFD). */
  inQuery?: boolean;
  /** The field as a write answers it (REST's body, MCP's structured content), where it does. */
  echo?(answer: any): unknown;
}

const DOORS: Door[] = [
  {
    field: 'markdown',
    rest: (v) => app.api('PUT', `${W}/guidance`, { key: t.key, body: { markdown: v } }),
    gql: {
      query: 'mutation($v: String!) { setWorkspaceGuidance(workspace: "-", input: { markdown: $v }) { markdown } }',
      variables: (v) => ({ v }),
    },
    mcp: { tool: 'guidance_set', args: (v) => ({ markdown: v }) },
    echo: (a) => a.markdown,
  },
  {
    field: 'body',
    rest: (v) => app.api('PUT', `${W}/memory/note`, { key: t.key, body: note({ body: v }) }),
    gql: {
      query: 'mutation($i: PutMemoryNoteInput!) { putMemoryNote(workspace: "-", input: $i) { path } }',
      variables: (v) => ({ i: note({ body: v }) }),
    },
    mcp: { tool: 'memory_put_note', args: (v) => note({ body: v }) },
    echo: (a) => a.body,
  },
  {
    field: 'tags[0]',
    rest: (v) => app.api('PUT', `${W}/memory/note`, { key: t.key, body: note({ tags: [v] }) }),
    gql: {
      query: 'mutation($i: PutMemoryNoteInput!) { putMemoryNote(workspace: "-", input: $i) { path } }',
      variables: (v) => ({ i: note({ tags: [v] }) }),
    },
    mcp: { tool: 'memory_put_note', args: (v) => note({ tags: [v] }) },
    echo: (a) => a.tags[0],
  },
  {
    field: 'question',
    rest: (v) => app.api('POST', `${W}/content-gaps`, { key: t.key, body: { question: v } }),
    gql: {
      query: 'mutation($v: String!) { reportContentGap(workspace: "-", input: { question: $v }) { reported } }',
      variables: (v) => ({ v }),
    },
    mcp: { tool: 'content_gaps_report', args: (v) => ({ question: v }) },
  },
  {
    field: 'title',
    rest: (v) =>
      app.api('POST', `${W}/changelog`, { key: t.key, body: { title: v, markdown: 'm', status: 'draft', tags: [], published_at: null } }),
    gql: {
      query:
        'mutation($v: String!) { createChangelogEntry(workspace: "-", input: { title: $v, markdown: "m", status: draft, tags: [] }) { id } }',
      variables: (v) => ({ v }),
    },
    mcp: { tool: 'changelog_create', args: (v) => ({ title: v, markdown: 'm', status: 'draft', tags: [], published_at: null }) },
    echo: (a) => a.title,
  },
  {
    field: 'q',
    inQuery: true,
    rest: (v) => app.api('GET', `${W}/search?q=${encodeURIComponent(v)}`, { key: t.key }),
    gql: { query: 'query($v: String!) { search(workspace: "-", q: $v) { ranking } }', variables: (v) => ({ v }) },
    mcp: { tool: 'search', args: (v) => ({ q: v }) },
  },
  {
    field: 'q',
    inQuery: true,
    rest: (v) => app.api('GET', `${W}/memory/search?q=${encodeURIComponent(v)}`, { key: t.key }),
    gql: { query: 'query($v: String!) { searchMemory(workspace: "-", q: $v) { ranking } }', variables: (v) => ({ v }) },
    mcp: { tool: 'memory_search', args: (v) => ({ q: v }) },
  },
  {
    field: 'tag',
    inQuery: true,
    rest: (v) => app.api('GET', `${W}/memory?tag=${encodeURIComponent(v)}`, { key: t.key }),
    gql: { query: 'query($v: String) { memoryNotes(workspace: "-", tag: $v) { nextCursor } }', variables: (v) => ({ v }) },
    mcp: { tool: 'memory_list_notes', args: (v) => ({ tag: v }) },
  },
  {
    field: 'kind',
    inQuery: true,
    rest: (v) => app.api('GET', `${W}/memory?kind=${encodeURIComponent(v)}`, { key: t.key }),
    gql: { query: 'query($v: String) { memoryNotes(workspace: "-", kind: $v) { nextCursor } }', variables: (v) => ({ v }) },
    mcp: { tool: 'memory_list_notes', args: (v) => ({ kind: v }) },
  },
];

/** One raw MCP message; `modern` speaks the 2026-07-28 revision (its headers and `_meta`), else 2025-11-25's stateless POST. */
async function mcp(body: string, modern: { method: string; name?: string } | null = null) {
  const headers: Record<string, string> = {
    authorization: `Bearer ${t.key}`,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
  };
  if (modern) {
    headers['mcp-protocol-version'] = '2026-07-28';
    headers['mcp-method'] = modern.method;
    if (modern.name) headers['mcp-name'] = modern.name;
  }
  const res = await fetch(`${app.url}/mcp`, { method: 'POST', headers, body });
  return { status: res.status, body: (await res.json()) as any };
}

const META = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
const call = (tool: string, args: Record<string, unknown>) =>
  JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: tool, arguments: args, _meta: META } });

/** What the workspace holds: every write a refused request might have made shows here. */
async function written(): Promise<string> {
  const events = await app.gql('query($w: ID!) { auditEvents(workspaceId: $w, limit: 1000) { id } }', { w: t.workspace.id });
  const gaps = await app.gql('query($w: ID!) { contentGapReports(workspaceId: $w) { id } }', { w: t.workspace.id });
  return `events=${events.data.auditEvents.length} gaps=${gaps.data.contentGapReports.length}`;
}

describe('text PostgreSQL cannot store', () => {
  it('refuses NUL (U+0000) with a 400 naming the field on REST, GraphQL and MCP, writing nothing', async () => {
    const before = await written();
    for (const door of DOORS) {
      const issue = { field: door.field, message: SAY.nul };
      const rest = await door.rest(NUL);
      expect(rest.status, `REST ${door.field}: ${JSON.stringify(rest.body)}`).toBe(400);
      expect(rest.body.error.code).toBe('invalid_request');
      expect(rest.body.error.details).toEqual(expect.arrayContaining([expect.objectContaining(issue)]));
      const gql = await app.gql(door.gql.query, door.gql.variables(NUL), t.key);
      expect(gql.errors?.[0].extensions.code, `GraphQL ${door.field}: ${JSON.stringify(gql.errors)}`).toBe('invalid_request');
      expect(gql.errors![0].extensions.details).toEqual(expect.arrayContaining([expect.objectContaining(issue)]));
      const tool = await mcp(call(door.mcp.tool, door.mcp.args(NUL)), { method: 'tools/call', name: door.mcp.tool });
      expect(tool.body.result?.isError, `MCP ${door.mcp.tool}: ${JSON.stringify(tool.body)}`).toBe(true);
      expect(tool.body.result.structuredContent.error).toMatchObject({ code: 'invalid_request', status: 400 });
      expect(tool.body.result.structuredContent.error.details, JSON.stringify(tool.body)).toEqual(
        expect.arrayContaining([expect.objectContaining(issue)]),
      );
    }
    expect(await written()).toBe(before);
  });

  it('stores an unpaired surrogate as U+FFFD on every door, as the database would, and answers what it stored', async () => {
    const stored = 'a\ufffdb';
    for (const door of DOORS) {
      // A query parameter cannot carry one: percent-decoding already gives U+FFFD.
      if (!door.inQuery) {
        const rest = await door.rest(UNPAIRED);
        expect(rest.status, `REST ${door.field}: ${JSON.stringify(rest.body)}`).toBeLessThan(300);
        if (door.echo) expect(door.echo(rest.body), `REST ${door.field}`).toBe(stored);
      }
      const gql = await app.gql(door.gql.query, door.gql.variables(UNPAIRED), t.key);
      expect(gql.errors, `GraphQL ${door.field}`).toBeUndefined();
      const tool = await mcp(call(door.mcp.tool, door.mcp.args(UNPAIRED)), { method: 'tools/call', name: door.mcp.tool });
      expect(tool.body.result?.isError, `MCP ${door.mcp.tool}: ${JSON.stringify(tool.body)}`).toBeFalsy();
      if (door.echo) expect(door.echo(tool.body.result.structuredContent), `MCP ${door.field}`).toBe(stored);
    }
    expect((await app.api('GET', `${W}/guidance`, { key: t.key })).body.markdown).toBe(stored);
    const note = await app.api('GET', `${W}/memory/note?path=hostile/note`, { key: t.key });
    expect(note.body.tags).toEqual([stored]);
    const reports = await app.gql('query($w: ID!) { contentGapReports(workspaceId: $w) { question } }', { w: t.workspace.id });
    expect(reports.data.contentGapReports.map((r: { question: string }) => r.question)).toContain(stored);
  });

  it('refuses NUL inside an attached spec (keys and values) and in OAuth; an unpaired surrogate there is U+FFFD too', async () => {
    const spec = (extra: Record<string, unknown>) => ({ openapi: '3.0.3', info: { title: 'x', version: '1' }, paths: {}, ...extra });
    for (const bad of [{ 'x-note': NUL }, { [`x-${NUL}`]: 1 }]) {
      const res = await app.api('PUT', `${W}/openapi`, { key: t.key, body: { spec: spec(bad) } });
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.error.details).toEqual([{ field: 'spec', message: SAY.nul }]);
    }
    const odd = await app.api('PUT', `${W}/openapi`, { key: t.key, body: { spec: spec({ [`x-${UNPAIRED}`]: UNPAIRED }) } });
    expect(odd.status, JSON.stringify(odd.body)).toBe(200);
    const register = (body: Record<string, unknown>) =>
      fetch(`${app.url}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    for (const body of [
      { client_name: NUL, redirect_uris: ['https://app.example/cb'] },
      { client_name: 'ok', scope: NUL, redirect_uris: ['https://app.example/cb'] },
      { client_name: 'ok', redirect_uris: [`https://app.example/cb${NUL}`] },
    ]) {
      const res = await register(body);
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: string }).error).toMatch(/^invalid_(client_metadata|redirect_uri)$/);
    }
    const named = await register({ client_name: UNPAIRED, scope: UNPAIRED, redirect_uris: ['https://app.example/cb'] });
    expect(named.status).toBe(201);
    expect(await named.json()).toMatchObject({ client_name: 'a\ufffdb', scope: 'a\ufffdb' });
    for (const form of ['grant_type=refresh_token&client_id=wkc_x&refresh_token=%00', 'token=%00']) {
      const path = form.startsWith('token') ? '/oauth/revoke' : '/oauth/token';
      const res = await fetch(`${app.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: form,
      });
      expect(res.status).toBe(400);
    }
  });
});

/** `{"a":{"a":…1…}}`, `levels` deep, as text (JSON.stringify itself cannot write it). */
const nested = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;

describe('JSON nested past the limit', () => {
  const legacyCall = (args: string, meta = '{}') =>
    `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"search","arguments":{"q":"x","d":${args}},"_meta":${meta}}}`;
  const modernMeta = (inner: string) => JSON.stringify(META).replace(/}$/, `,"x":${inner}}`);

  it('is a JSON-RPC invalid request with HTTP 400 on MCP, 5,000 levels in arguments or _meta, on both revisions', async () => {
    const deep = nested(5000);
    const messages: [string, { method: string; name?: string } | null][] = [
      [legacyCall(deep), null],
      [legacyCall('1', deep), null],
      [legacyCall(deep, JSON.stringify(META)), { method: 'tools/call', name: 'search' }],
      [`{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"_meta":${modernMeta(deep)}}}`, { method: 'tools/list' }],
    ];
    for (const [body, modern] of messages) {
      const res = await mcp(body, modern);
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
      expect(res.body.error.message).toContain(`${JSON_MAX_DEPTH} levels`);
    }
    // Within the limit the same shape is an ordinary call (refused for its unknown argument, as the tool's own answer).
    const fine = await mcp(legacyCall(nested(JSON_MAX_DEPTH - 10)));
    expect(fine.status).toBe(200);
    expect(fine.body.result.isError).toBe(true);
  });

  it('is a 400 naming the body on REST and GraphQL, before anything reads it', async () => {
    const deep = nested(5000);
    const rest = await app.api('PUT', `${W}/openapi`, {
      key: t.key,
      rawBody: `{"spec":${deep}}`,
      headers: { 'content-type': 'application/json' },
    });
    expect(rest.status).toBe(400);
    expect(rest.body.error.details).toEqual([{ field: 'body', message: SAY.jsonDepth(JSON_MAX_DEPTH), in: 'body' }]);
    const gql = await fetch(`${app.url}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
      body: `{"query":"mutation($s: JSON!) { attachApiSpec(workspace: \\"-\\", input: { spec: $s }) { operationCount } }","variables":{"s":${deep}}}`,
    });
    expect(gql.status).toBe(400);
    expect(((await gql.json()) as any).errors[0].extensions.code).toBe('invalid_request');
  });
});
