import {
  getNamedType,
  getNullableType,
  isInputObjectType,
  isListType,
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLInputField,
  type GraphQLInputType,
  type GraphQLSchema,
} from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROUTES } from '../rest/routes/index.js';
import type { Route } from '../rest/routeDefinition.js';
import { startTestApp, type TestApp } from './support/app.js';
import { tenant, type Tenant } from './support/factories.js';
import { introspect, operationFor, rootFields, sampleValue } from './support/introspect.js';
import { measured, pathologicalValues, SweepReport } from './support/pathological.js';
import { SAMPLE_BODIES } from './support/samples.js';

// Every string input of every door gets pathological shapes (100k and 1M-character runs of one
// character, of white space, of separators, of alternating pairs). The service runs in this
// process: a handler that backtracks or loops quadratically shows as CPU time of this thread. The
// database works on other threads (PostgreSQL's processes, or the embedded database's thread), so
// one limit holds on both: a quadratic loop or a backtracking pattern over 100,000 characters costs
// seconds, a linear handler a few tens of ms.
const LIMIT_MS = 100;
let app: TestApp;
let t: Tenant;
const report = new SweepReport();

beforeAll(async () => {
  app = await startTestApp();
  t = await tenant(app, { plan: 'pro' });
  await app.api('POST', '/api/v1/workspaces/-/sections', { key: t.key, body: { label: 'Docs', key: 'docs' } });
  await app.api('POST', '/api/v1/workspaces/-/articles', { key: t.key, body: { title: 'Shared', section: 'docs', markdown: 'x' } });
});
afterAll(async () => {
  report.print();
  await app?.close();
});

/**
 * Sends one request and checks that answering it cost the main thread (client and service) less
 * than LIMIT_MS of CPU. CPU time, not wall time: two test files share two cores, so the loop's
 * wall-clock delay also measures the neighbours. A request over the limit is sent once more (a
 * full garbage collection can land on any request once; a handler that backtracks or loops
 * quadratically is slow every time).
 */
async function send(door: string, what: string, request: () => Promise<Response>) {
  const once = () =>
    measured(async () => {
      const res = await request();
      return { status: res.status, text: await res.text() };
    });
  let run = await once();
  if (run.cpuMs >= LIMIT_MS) run = await once();
  report.record(door, what, run.maxDelayMs, run.cpuMs);
  expect(run.result.status, `${door} ${what}: ${run.result.text.slice(0, 200)}`).toBeLessThan(500);
  expect(run.cpuMs, `${door} ${what} cost the main thread too much CPU`).toBeLessThan(LIMIT_MS);
}

const auth = () => ({ authorization: `Bearer ${t.key}` });

function restUrl(route: Route, params: Record<string, string> = {}, query: Record<string, string> = {}): string {
  const path = route.path.replace(/\{(\w+)\}/g, (_m, name) =>
    encodeURIComponent(params[name] ?? (name === 'workspace' ? '-' : name === 'id' ? '1' : 'shared')),
  );
  const base: Record<string, string> = route.query?.path ? { path: 'fuzz/note' } : route.query?.q ? { q: 'x' } : {};
  const qs = new URLSearchParams({ ...base, ...query }).toString();
  return `${app.url}/api/v1${path}${qs ? `?${qs}` : ''}`;
}

describe('REST: every string input of every route', () => {
  // URLs are capped at 8 KiB and headers at 16 KiB before any handler runs; bodies at 1 MiB.
  const urlValues = pathologicalValues([7_000]);
  it.each(ROUTES.filter((r) => !r.upload).map((r) => [r.name, r] as const))(
    '%s',
    async (_name, route) => {
      const body = SAMPLE_BODIES[route.name];
      const method = route.method;
      const sendJson = (value: unknown, what: string, url = restUrl(route)) =>
        send('REST', `${route.name} ${what}`, () =>
          fetch(url, {
            method,
            headers: { ...auth(), 'content-type': 'application/json' },
            body: method === 'GET' || method === 'DELETE' ? undefined : JSON.stringify(value),
          }),
        );
      for (const { value, label } of urlValues) {
        await sendJson(body, `{workspace} ${label}`, restUrl(route, { workspace: value }));
        for (const name of Object.keys(route.pathParams ?? {}))
          await sendJson(body, `{${name}} ${label}`, restUrl(route, { [name]: value }));
        for (const name of Object.keys(route.query ?? {})) await sendJson(body, `?${name} ${label}`, restUrl(route, {}, { [name]: value }));
        for (const name of Object.keys(route.headers ?? {})) {
          await send('REST', `${route.name} ${name}: ${label}`, () =>
            fetch(restUrl(route), {
              method,
              headers: { ...auth(), 'content-type': 'application/json', [name]: value.replace(/[\t\n]/g, ' ') },
              body: body ? JSON.stringify(body) : undefined,
            }),
          );
        }
        if (method !== 'GET') {
          await send('REST', `${route.name} Idempotency-Key ${label}`, () =>
            fetch(restUrl(route), {
              method,
              headers: { ...auth(), 'content-type': 'application/json', 'idempotency-key': value.replace(/[\t\n]/g, ' ') },
              body: body ? JSON.stringify(body) : undefined,
            }),
          );
        }
      }
      if (!route.body || !body) return;
      for (const [field, schema] of Object.entries(route.body.schema.properties)) {
        const types = [schema.type].flat();
        for (const { value, label } of pathologicalValues([100_000, 1_000_000])) {
          if (types.includes('string')) await sendJson({ ...body, [field]: value }, `${field}: ${label}`);
          if (types.includes('array')) await sendJson({ ...body, [field]: [value] }, `${field}[0]: ${label}`);
        }
        if (types.includes('array'))
          await sendJson({ ...body, [field]: Array.from({ length: 100_000 }, () => 'x') }, `${field}: 100,000 items`);
      }
    },
    120_000,
  );
});

/** Every place a string goes in a root field: its own arguments, and the fields of input-object arguments. */
function stringInputs(field: GraphQLField<unknown, unknown>): { arg: GraphQLArgument; inner?: GraphQLInputField; list: boolean }[] {
  const out: { arg: GraphQLArgument; inner?: GraphQLInputField; list: boolean }[] = [];
  const isText = (type: GraphQLInputType) => ['String', 'ID', 'JSON'].includes(getNamedType(type).name);
  for (const arg of field.args) {
    const named = getNamedType(arg.type);
    if (isInputObjectType(named)) {
      for (const inner of Object.values(named.getFields()))
        if (isText(inner.type)) out.push({ arg, inner, list: isListType(getNullableType(inner.type)) });
    } else if (isText(arg.type)) out.push({ arg, list: isListType(getNullableType(arg.type)) });
  }
  return out;
}

describe('GraphQL: every string argument and input field of every root field', () => {
  let schema: GraphQLSchema;
  beforeAll(async () => {
    schema = await introspect(app, t.key);
  });

  it('answers every pathological value without blocking', async () => {
    const named = {
      workspace: '-',
      workspaceId: t.workspace.id,
      organizationId: t.org.id,
      memberId: t.member.id,
      email: 'a@b.co',
      plan: 'free',
      role: 'viewer',
      url: 'https://example.com/',
      kind: 'note',
      section: 'docs',
      slug: 'shared',
      path: 'x',
    };
    let sent = 0;
    for (const field of rootFields(schema)) {
      const call = operationFor(schema, field);
      for (const { arg, inner, list } of stringInputs(field)) {
        for (const { value, label } of pathologicalValues([100_000, 1_000_000])) {
          const variables = Object.fromEntries(field.args.map((a) => [a.name, sampleValue(a.name, a.type, named)]));
          const placed = list ? [value] : value;
          if (inner) variables[arg.name] = { ...(variables[arg.name] as object), [inner.name]: placed };
          else variables[arg.name] = placed;
          const where = `${field.name}(${arg.name}${inner ? `.${inner.name}` : ''}) ${label}`;
          await send('GraphQL', where, () =>
            fetch(`${app.url}/graphql`, {
              method: 'POST',
              headers: { ...auth(), 'content-type': 'application/json' },
              body: JSON.stringify({ query: call, variables }),
            }),
          );
          sent++;
        }
      }
    }
    expect(sent).toBeGreaterThan(500);
  }, 300_000);
});

describe('MCP: every string argument of every tool', () => {
  it('answers every pathological value without blocking', async () => {
    const post = (message: unknown) =>
      fetch(`${app.url}/mcp`, {
        method: 'POST',
        headers: { ...auth(), 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify(message),
      });
    const listed = await (await post({ jsonrpc: '2.0', id: 1, method: 'tools/list' })).json();
    const tools = listed.result.tools as { name: string; inputSchema: { properties: Record<string, { type?: string | string[] }> } }[];
    expect(tools.length).toBe(ROUTES.length);
    let sent = 0;
    for (const tool of tools) {
      const base = {
        ...(SAMPLE_BODIES[tool.name] ?? {}),
        ...(tool.inputSchema.properties.path ? { path: 'x' } : {}),
        ...(tool.inputSchema.properties.q ? { q: 'x' } : {}),
      };
      for (const [arg, schema] of Object.entries(tool.inputSchema.properties)) {
        const types = [schema.type].flat();
        if (!types.includes('string') && !types.includes('array')) continue;
        for (const { value, label } of pathologicalValues([100_000, 1_000_000])) {
          const args = { ...base, [arg]: types.includes('string') ? value : [value] };
          await send('MCP', `${tool.name}(${arg}) ${label}`, () =>
            post({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: tool.name, arguments: args } }),
          );
          sent++;
        }
      }
    }
    expect(sent).toBeGreaterThan(300);
  }, 300_000);
});
