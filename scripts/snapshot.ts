/**
 * `npm run snapshot -- <file>`: what the service serves, written down so that a change of layout can
 * be checked to change no answer. Starts the service on a fresh in-memory embedded database, makes a
 * tenant, then records the OpenAPI document, /llms.txt, the GraphQL SDL, MCP's initialize and
 * tools/list, and a fixed script of REST calls over every route (good and bad requests), each
 * answer's status, envelope and body with ids, keys, times and digests replaced by stable names.
 * Compare two files with `diff`.
 */
import 'reflect-metadata';
import { writeFileSync } from 'node:fs';
import { printSchema } from 'graphql';
import pino from 'pino';
import { buildAppSchema } from '../src/schema.js';
import { startServer } from '../src/server.js';
import { ROUTES } from '../rest/routes/index.js';
import { SAMPLE_BODIES } from '../test/support/samples.js';
import { PERMISSIONS } from '../src/auth/permissions.js';

const out = process.argv[2];
if (!out) {
  console.error('usage: npm run snapshot -- <file>');
  process.exit(2);
}
// Answers must not depend on a model that may or may not be present.
process.env.EMBEDDINGS = 'off';
const ADMIN = 'adm_snapshot_0123456789abcdef0123456789';
const server = await startServer({
  port: 0,
  host: '127.0.0.1',
  adminToken: ADMIN,
  logger: pino({ level: 'silent' }),
  embeddingWorker: false,
  webhookDispatcher: false,
});
const base = server.url;

/** Replaces what differs from run to run (ids, keys, times, digests, request ids) by stable names, in order of first sight. */
function normalizer() {
  const seen = new Map<string, string>();
  const name = (kind: string, value: string) => {
    if (!seen.has(value)) seen.set(value, `<${kind}${[...seen.values()].filter((v) => v.startsWith(`<${kind}`)).length + 1}>`);
    return seen.get(value)!;
  };
  return (text: string) =>
    text
      .replaceAll(base, '<base>')
      .replace(/svc_pat_[A-Za-z0-9_-]+/g, (m) => name('key', m))
      .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, (m) => name('uuid', m))
      .replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})/g, '<time>')
      .replace(/\/uploads\/[A-Za-z0-9_-]{22}\./g, (m) => name('upload', m))
      .replace(/\b[0-9a-f]{64}\b/g, (m) => name('sha', m))
      .replace(/"v\d+"|W\/"[^"]+"/g, (m) => name('etag', m))
      .replace(/"(requestId|id)":"[A-Za-z0-9_-]{16,}"/g, (m) => name('id', m));
}
const normalize = normalizer();

const gql = async (query: string, variables: Record<string, unknown> = {}, bearer = ADMIN) =>
  (await fetch(`${base}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${bearer}` },
    body: JSON.stringify({ query, variables }),
  }).then((r) => r.json())) as { data: Record<string, Record<string, string>>; errors?: unknown };

const org = (await gql('mutation { createOrganization(input: { name: "Snapshot", plan: "pro" }) { id } }')).data.createOrganization;
const ws = (await gql('mutation($o: ID!) { createWorkspace(input: { organizationId: $o, name: "W" }) { id } }', { o: org.id })).data
  .createWorkspace;
const member = (
  await gql('mutation($o: ID!) { createMember(input: { organizationId: $o, email: "s@example.com", role: "owner" }) { id } }', {
    o: org.id,
  })
).data.createMember;
const key = (
  await gql(
    'mutation($m: ID!, $w: ID!, $p: [String!]!) { createAgentKey(input: { memberId: $m, name: "snap", permissions: $p, workspaceId: $w }) { key } }',
    {
      m: member.id,
      w: ws.id,
      p: PERMISSIONS,
    },
  )
).data.createAgentKey.key;

const record: Record<string, unknown> = {};
const answer = async (label: string, method: string, path: string, body?: unknown, bearer: string | null = key) => {
  const headers: Record<string, string> = {};
  if (bearer) headers.authorization = `Bearer ${bearer}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${base}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  const kept = ['content-type', 'etag', 'location', 'link', 'retry-after', 'allow', 'www-authenticate', 'cache-control'];
  const shown = Object.fromEntries(kept.filter((h) => res.headers.get(h)).map((h) => [h, normalize(res.headers.get(h)!)]));
  record[label] = { status: res.status, headers: shown, body: normalize(text) };
};

record.openapi = normalize(await (await fetch(`${base}/api/v1/openapi.json`)).text());
record.llms = normalize(await (await fetch(`${base}/llms.txt`)).text());
record.sdl = printSchema(await buildAppSchema());

// Every route: once as the script below sets it up, once without a key, once with a body or path it refuses.
const W = '/api/v1/workspaces/-';
await answer('sections_create', 'POST', `${W}/sections`, { label: 'Docs', key: 'docs' });
await answer('articles_create', 'POST', `${W}/articles`, { title: 'Shared', section: 'docs', markdown: '# Shared\n\nText.' });
const fill = (path: string) =>
  path.replace(/\{(\w+)\}/g, (_m, p: string) =>
    p === 'workspace' ? '-' : p === 'slug' ? 'shared' : p === 'version' ? '1' : p === 'group' ? '1' : '1',
  );
for (const route of ROUTES) {
  const path = `/api/v1${fill(route.path)}`;
  const query = route.query?.path ? '?path=fuzz/note' : route.query?.q ? '?q=shared' : '';
  const body = route.upload ? undefined : (SAMPLE_BODIES[route.name] ?? (route.body ? {} : undefined));
  await answer(`${route.name} ok`, route.method, `${path}${query}`, body);
  await answer(`${route.name} no key`, route.method, `${path}${query}`, body, null);
  if (route.body) await answer(`${route.name} bad body`, route.method, `${path}${query}`, { unknownField: 1 });
  await answer(
    `${route.name} other workspace`,
    route.method,
    `${path.replace('/workspaces/-', '/workspaces/00000000-0000-4000-8000-000000000000')}${query}`,
    body,
  );
}

const mcp = async (label: string, message: unknown) => {
  const res = await fetch(`${base}/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify(message),
  });
  record[label] = { status: res.status, body: normalize(await res.text()) };
};
await mcp('mcp initialize', {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 's', version: '1' } },
});
await mcp('mcp tools/list', { jsonrpc: '2.0', id: 2, method: 'tools/list' });
await mcp('mcp tools/call', {
  jsonrpc: '2.0',
  id: 3,
  method: 'tools/call',
  params: { name: 'memory_get_note', arguments: { path: 'fuzz/note' } },
});

writeFileSync(out, `${JSON.stringify(record, null, 1)}\n`);
console.log(`wrote ${Object.keys(record).length} answers to ${out}`);
await server.close();
process.exit(0);
