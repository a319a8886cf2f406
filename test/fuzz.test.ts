import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROUTES } from '../rest/routes.js';
import type { Route } from '../rest/route.js';
import { startTestApp, type TestApp } from './support/app.js';
import { tenant, type Tenant } from './support/factories.js';
import { SAMPLE_BODIES } from './support/samples.js';

// Walks every endpoint of the served contract with generated bad requests. Every answer must be a
// 4xx envelope that validates against the document (the test client checks that), never a 5xx,
// and nothing may change: audit trail and row counts stay as they were.
let app: TestApp;
let t: Tenant;
let sent = 0;
beforeAll(async () => {
  app = await startTestApp({ embeddingWorker: false });
  t = await tenant(app, { plan: 'pro' });
  await app.api('POST', '/api/v1/workspaces/-/sections', { key: t.key, body: { label: 'Docs', key: 'docs' } });
  await app.api('POST', '/api/v1/workspaces/-/articles', { key: t.key, body: { title: 'Shared', section: 'docs', markdown: 'x' } });
});
afterAll(async () => {
  console.log(`fuzz: ${sent} bad requests sent`);
  await app?.close();
});

/** Row counts of the fuzzed workspace (other test files may write to a shared database meanwhile). */
async function snapshot(): Promise<string> {
  const conn = app.server.orm.em.fork().getConnection();
  const tables = ['audit_events', 'changelog_entries', 'memory_notes', 'articles', 'sections', 'proposals', 'uploads', 'content_gap_reports', 'api_specs', 'webhook_events', 'search_log'];
  const counts = await Promise.all(tables.map(async (table) => `${table}=${(await conn.execute(`select count(*)::int as n from ${table} where workspace_id = ?`, [t.workspace.id]))[0].n}`));
  return counts.join(' ');
}

const wrongValue = fc.oneof(fc.integer(), fc.boolean(), fc.constant(null), fc.array(fc.integer(), { maxLength: 3 }), fc.dictionary(fc.string({ maxLength: 5 }), fc.integer(), { maxKeys: 2 }), fc.double());
const deep = (n: number) => '['.repeat(n) + ']'.repeat(n);

type Bad = { path?: string; query?: string; body?: unknown; raw?: string | Uint8Array; contentType?: string };

/** Bad variants for a route; each is invalid by construction. */
function badRequests(route: Route): fc.Arbitrary<Bad> {
  const sample = SAMPLE_BODIES[route.name];
  const schema = route.body?.schema;
  const fields = schema ? Object.keys(schema.properties) : [];
  const required = (schema?.required as string[] | undefined) ?? [];
  const options: fc.Arbitrary<Bad>[] = [
    fc.constantFrom('..', '%2e%2e', 'not-a-uuid', '00000000-0000-0000-0000-000000000000', 'x'.repeat(65), '%00', 'ä').map((ws) => ({ path: ws })),
    fc.constantFrom('limit=-1', 'limit=abc', 'cursor=%ff%fe', 'unknown_param=1', 'limit=1e9', 'limit=1&limit=2').map((query) => ({ query })),
  ];
  if (schema && sample) {
    const typed = fields.filter((f) => (schema.properties[f] as { type?: unknown }).type !== undefined);
    if (typed.length) options.push(fc.tuple(fc.constantFrom(...typed), wrongValue).filter(([f, v]) => !isValid(schema.properties[f], v)).map(([f, v]) => ({ body: { ...sample, [f]: v } })));
    if (required.length) options.push(fc.constantFrom(...required).map((f) => ({ body: Object.fromEntries(Object.entries(sample).filter(([k]) => k !== f)) })));
    options.push(fc.string({ minLength: 1, maxLength: 12 }).filter((k) => !fields.includes(k)).map((k) => ({ body: { ...sample, [k]: 1 } })));
    options.push(fc.constantFrom<Bad>(
      { raw: JSON.stringify({ ...sample, [fields[0]]: 'x'.repeat(1024 * 1024 + 1) }) },
      { raw: deep(5000) },
      { raw: new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]) },
      { raw: '{"unterminated": ' },
      { raw: 'null' },
      { raw: '[]' },
      { raw: JSON.stringify(sample), contentType: 'text/plain' },
    ));
  }
  return fc.oneof(...options);
}

function isValid(schema: unknown, value: unknown): boolean {
  const type = (schema as { type?: string | string[] }).type;
  const types = Array.isArray(type) ? type : [type];
  if (value === null) return types.includes('null');
  if (Array.isArray(value)) return types.includes('array') && value.length === 0;
  if (typeof value === 'number') return types.includes('integer') ? Number.isInteger(value) : types.includes('number');
  return types.includes(typeof value as string);
}

describe('input fuzzing from the contract', () => {
  it.each(ROUTES.filter((r) => !r.upload).map((r) => [r.name, r] as const))('%s: bad requests get 4xx envelopes and change nothing', async (_name, route) => {
    const before = await snapshot();
    await fc.assert(
      fc.asyncProperty(badRequests(route), async (bad) => {
        const path = route.path.replace('{workspace}', bad.path ?? '-').replace('{id}', '1').replace('{slug}', 'shared');
        const base = route.query?.path ? 'path=fuzz/note' : route.query?.q ? 'q=x' : '';
        const query = [base, bad.query].filter(Boolean).join('&');
        const url = `/api/v1${path}${query ? `?${query}` : ''}`;
        const body = bad.raw !== undefined ? undefined : (bad.body ?? (route.body ? SAMPLE_BODIES[route.name] : undefined));
        const res = bad.raw !== undefined
          ? await fetch(`${app.url}${url}`, { method: route.method, headers: { authorization: `Bearer ${t.key}`, 'content-type': bad.contentType ?? 'application/json' }, body: bad.raw as BodyInit })
              .then(async (r) => ({ status: r.status, body: await r.json() }))
          : await app.api(route.method, url, { key: t.key, body });
        sent++;
        const invalidInput = bad.path || bad.query || bad.body !== undefined || bad.raw !== undefined;
        if (!invalidInput) return true;
        expect(res.status, `${route.method} ${url} ${JSON.stringify(bad).slice(0, 200)}`).toBeGreaterThanOrEqual(400);
        expect(res.status, `${route.method} ${url} ${JSON.stringify(bad).slice(0, 200)} → ${JSON.stringify(res.body).slice(0, 300)}`).toBeLessThan(500);
        expect(res.body.error.status).toBe(res.status);
        expect(JSON.stringify(res.body)).not.toMatch(/\bat .*\.(ts|js):\d+/);
        return true;
      }),
      { numRuns: 12, seed: 4242 },
    );
    expect(await snapshot()).toBe(before);
  }, 120_000);

  it('bad multipart uploads get 4xx and store nothing', async () => {
    const before = await snapshot();
    const bodies: [BodyInit, string][] = [
      ['not multipart', 'text/plain'],
      ['--x\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\n\r\nnot an image\r\n--x--\r\n', 'multipart/form-data; boundary=x'],
      ['--x\r\nbroken', 'multipart/form-data; boundary=x'],
      ['', 'multipart/form-data; boundary=x'],
    ];
    for (const [body, type] of bodies) {
      const res = await fetch(`${app.url}/api/v1/workspaces/-/uploads`, { method: 'POST', headers: { authorization: `Bearer ${t.key}`, 'content-type': type }, body });
      sent++;
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
    }
    expect(await snapshot()).toBe(before);
  });
});
