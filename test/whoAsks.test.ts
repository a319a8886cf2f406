import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { createMember, tenant, type Tenant } from './support/factories.js';
import { MCP_CLIENTS } from './support/mcpClients.js';
import { personGql, signIn, type SignedInPerson } from './support/signIn.js';
import { until } from './support/wait.js';

// Who asks, agents or people: every search, content-gap report and workspace operation records the
// door it came through (REST, MCP, GraphQL, console) and the kind of caller (agent key, OAuth grant,
// member, admin token). Content-gap groups, the usage read model, workspaceActivity and /metrics split by both.
const METRICS_TOKEN = 'met_who_asks_test_0123456789abcdef';
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ embeddingWorker: false, metricsToken: METRICS_TOKEN });
});
afterAll(async () => app?.close());

const W = '/api/v1/workspaces/-';
const ACTIVITY = `query($w: ID!) { workspaceActivity(workspaceId: $w, days: 2) { day door caller reads writes searches contentGaps } }`;
const GROUPS = `query($w: ID!, $by: Audience) { contentGapGroups(workspaceId: $w, askedBy: $by) { label askedBy { door caller questions } } }`;

/** A tenant whose owner is also signed in (a person). */
async function workspaceWithPerson(): Promise<{ t: Tenant; person: SignedInPerson }> {
  const t = await tenant(app);
  const owner = await createMember(app, t.org.id, { role: 'owner' });
  return { t, person: await signIn(app.url, app.adminToken, owner.email) };
}

/** GraphQL as the review console sends it: the session, and the console's client name. */
async function consoleGql(person: SignedInPerson, query: string, variables: Record<string, unknown>) {
  const res = await fetch(`${app.url}/graphql`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      cookie: person.cookie,
      'x-csrf-token': person.csrf,
      'apollographql-client-name': 'wks-console',
    },
    body: JSON.stringify({ query, variables }),
  });
  return (await res.json()) as { data: any; errors?: unknown[] };
}

const totals = (rows: any[], door: string, caller: string) =>
  rows
    .filter((r) => r.door === door && r.caller === caller)
    .reduce(
      (a, r) => ({
        reads: a.reads + r.reads,
        writes: a.writes + r.writes,
        searches: a.searches + r.searches,
        gaps: a.gaps + r.contentGaps,
      }),
      {
        reads: 0,
        writes: 0,
        searches: 0,
        gaps: 0,
      },
    );

describe('who asks: the door and the kind of caller', () => {
  it('counts reads, writes, searches and reports by door and caller (REST, MCP, GraphQL, console), and /metrics splits them too', async () => {
    const { t, person } = await workspaceWithPerson();
    const note = { path: 'who/asks', body: 'x', kind: 'note', links: [], tags: [] };
    expect((await app.api('PUT', `${W}/memory/note`, { key: t.key, body: note })).status).toBe(200);
    expect((await app.api('GET', `${W}/memory/note?path=who/asks`, { key: t.key })).status).toBe(200);
    expect((await app.api('GET', `${W}/search?q=nothing+like+this`, { key: t.key })).status).toBe(200);
    const mcp = await MCP_CLIENTS[2].connect(app.url, t.key);
    await mcp.callTool({ name: 'memory_get_note', arguments: { path: 'who/asks' } });
    await mcp.callTool({ name: 'content_gaps_report', arguments: { question: 'Where are the deploy keys?' } });
    await mcp.close();
    const search = 'query($w: String!) { search(workspace: $w, q: "anything at all") { items { title } } }';
    expect((await personGql(app.url, person, search, { w: t.workspace.id })).errors).toBeUndefined();
    expect((await consoleGql(person, search, { w: t.workspace.id })).errors).toBeUndefined();
    const rows = await until(async () => {
      const res = await app.gql(ACTIVITY, { w: t.workspace.id });
      const list = res.data.workspaceActivity as any[];
      return list.some((r) => r.door === 'console' && r.reads > 0) && list.some((r) => r.door === 'mcp' && r.reads > 0) ? list : null;
    }, 'the activity counts flushed');
    expect(totals(rows, 'rest', 'agent_key')).toEqual({ reads: 2, writes: 1, searches: 1, gaps: 0 });
    expect(totals(rows, 'mcp', 'agent_key')).toEqual({ reads: 1, writes: 1, searches: 0, gaps: 1 });
    expect(totals(rows, 'graphql', 'member')).toMatchObject({ reads: 1, searches: 1 });
    expect(totals(rows, 'console', 'member')).toMatchObject({ reads: 1, searches: 1 });
    expect(rows.every((r) => r.day === new Date().toISOString().slice(0, 10))).toBe(true);
    // The usage read model carries the same split.
    const usage = await app.gql('query($w: ID!) { usage(workspaceId: $w) { activity { door caller reads } } }', { w: t.workspace.id });
    expect(usage.data.usage.activity).toEqual(
      expect.arrayContaining([expect.objectContaining({ door: 'mcp', caller: 'agent_key', reads: 1 })]),
    );
    const metrics = await (await fetch(`${app.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
    expect(metrics).toMatch(/^wks_workspace_operations_total\{door="mcp",caller="agent_key",kind="read"\} [1-9]/m);
    expect(metrics).toMatch(/^wks_workspace_operations_total\{door="console",caller="member",kind="read"\} [1-9]/m);
  });

  it('splits content-gap groups: who asked each, and the groups agents or people asked, most asked by them first', async () => {
    const { t, person } = await workspaceWithPerson();
    for (const question of ['How do I rotate the signing key?', 'How can I rotate signing keys?'])
      expect((await app.api('POST', `${W}/content-gaps`, { key: t.key, body: { question } })).status).toBe(202);
    const asPerson = `mutation($w: String!, $q: String!) { reportContentGap(workspace: $w, input: { question: $q }) { reported } }`;
    expect(
      (await consoleGql(person, asPerson, { w: t.workspace.id, q: 'What is the refund policy for annual plans?' })).errors,
    ).toBeUndefined();
    await app.server.drainEmbeddings(t.workspace.id);
    const all = (await app.gql(GROUPS, { w: t.workspace.id, by: null })).data.contentGapGroups;
    expect(all).toHaveLength(2);
    const byAgents = (await app.gql(GROUPS, { w: t.workspace.id, by: 'AGENTS' })).data.contentGapGroups;
    expect(byAgents).toHaveLength(1);
    expect(byAgents[0].askedBy).toEqual([{ door: 'rest', caller: 'agent_key', questions: 2 }]);
    const byPeople = (await app.gql(GROUPS, { w: t.workspace.id, by: 'PEOPLE' })).data.contentGapGroups;
    expect(byPeople).toHaveLength(1);
    expect(byPeople[0]).toMatchObject({
      label: 'What is the refund policy for annual plans?',
      askedBy: [{ door: 'console', caller: 'member', questions: 1 }],
    });
    // The agents' list over REST carries the split too.
    const rest = await app.api('GET', `${W}/content-gaps`, { key: t.key });
    expect(rest.body.map((g: any) => g.askedBy)).toEqual(
      expect.arrayContaining([
        [{ door: 'rest', caller: 'agent_key', questions: 2 }],
        [{ door: 'console', caller: 'member', questions: 1 }],
      ]),
    );
  });

  it("takes the door from what the server knows: an agent key naming the console's client is still GraphQL, in activity and gap groups", async () => {
    const { t } = await workspaceWithPerson();
    const asConsole = async (query: string, variables: Record<string, unknown>) => {
      const res = await fetch(`${app.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${t.key}`, 'apollographql-client-name': 'wks-console' },
        body: JSON.stringify({ query, variables }),
      });
      return (await res.json()) as { data: any; errors?: unknown[] };
    };
    const search = 'query($w: String!) { search(workspace: $w, q: "forged door") { items { title } } }';
    expect((await asConsole(search, { w: t.workspace.id })).errors).toBeUndefined();
    const report = `mutation($w: String!, $q: String!) { reportContentGap(workspace: $w, input: { question: $q }) { reported } }`;
    expect((await asConsole(report, { w: t.workspace.id, q: 'Who rotates the release signing key?' })).errors).toBeUndefined();
    const rows = await until(async () => {
      const list = (await app.gql(ACTIVITY, { w: t.workspace.id })).data.workspaceActivity as any[];
      return list.some((r) => r.reads > 0) ? list : null;
    }, 'the activity counts flushed');
    expect(rows.filter((r) => r.door === 'console')).toEqual([]);
    expect(totals(rows, 'graphql', 'agent_key')).toMatchObject({ reads: 1, searches: 1, gaps: 1 });
    await app.server.drainEmbeddings(t.workspace.id);
    const groups = (await app.gql(GROUPS, { w: t.workspace.id, by: null })).data.contentGapGroups;
    expect(groups.map((g: any) => g.askedBy)).toEqual(
      expect.arrayContaining([expect.arrayContaining([{ door: 'graphql', caller: 'agent_key', questions: 1 }])]),
    );
    expect(JSON.stringify(groups)).not.toContain('console');
  });

  it('lets admins and owners read the activity, not other members, and 404s another organization', async () => {
    const { t } = await workspaceWithPerson();
    const viewer = await createMember(app, t.org.id, { role: 'viewer' });
    const reader = await signIn(app.url, app.adminToken, viewer.email);
    const refused = await personGql(app.url, reader, ACTIVITY, { w: t.workspace.id });
    expect(refused.errors![0].extensions.code).toBe('permission_denied');
    const other = await workspaceWithPerson();
    const foreign = await personGql(app.url, other.person, ACTIVITY, { w: t.workspace.id });
    expect(foreign.errors![0].extensions.code).toBe('not_found');
    const bad = await app.gql(`query { workspaceActivity(workspaceId: "${t.workspace.id}", days: 91) { day } }`);
    expect(bad.errors![0].extensions.code).toBe('invalid_request');
  });
});
