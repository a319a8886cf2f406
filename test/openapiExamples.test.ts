import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule, { type FormatsPlugin } from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { tenant } from './support/factories.js';

const addFormats = ((addFormatsModule as unknown as { default?: FormatsPlugin }).default ?? addFormatsModule) as FormatsPlugin;

type Schema = Record<string, unknown>;
interface Operation {
  operationId: string;
  parameters: ({ $ref: string } | { name: string; in: string; schema: Schema; example?: unknown })[];
  requestBody?: { content: Record<string, { schema: Schema; example?: unknown }> };
  responses: Record<string, { $ref?: string; content?: Record<string, { schema: Schema; example?: unknown }> }>;
}

let app: TestApp;
let doc: any;
beforeAll(async () => {
  app = await startTestApp();
  doc = await (await fetch(`${app.server.url}/api/v1/openapi.json`)).json();
});
afterAll(async () => app?.close());

function operations(): [string, Operation][] {
  return Object.entries(doc.paths as Record<string, Record<string, Operation>>).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => [`${method.toUpperCase()} ${path}`, op] as [string, Operation]),
  );
}

/**
 * Optional conditional headers documented without an example, because the example request leaves
 * them out (test/openapiStory.test.ts runs it): the note PUT creates the note (`If-None-Match: *`;
 * `If-Match` never creates), and the note GET reads the note just written (any ETag it could hold
 * is current, which answers 304).
 */
const LEFT_OUT = new Set(['PUT /workspaces/{workspace}/memory/note if-match', 'GET /workspaces/{workspace}/memory/note if-none-match']);

let ajv: Ajv2020 | null = null;

/** Validates `value` against `schema` (refs resolved in the served document); the errors, or []. */
function errorsOf(schema: Schema, value: unknown): string[] {
  if (!ajv) {
    ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addSchema({ $id: 'doc', components: doc.components });
  }
  const rewritten = JSON.parse(JSON.stringify(schema).replace(/"#\/components\//g, '"doc#/components/'));
  const validate = ajv.compile(rewritten);
  return validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
}

describe('the served OpenAPI document: examples, variants and tags', () => {
  it('gives every operation an example request and response, each valid against its own schema', () => {
    expect(operations().length).toBeGreaterThanOrEqual(29);
    const leftOut: string[] = [];
    for (const [name, op] of operations()) {
      for (const param of op.parameters) {
        if ('$ref' in param) continue;
        if (!('example' in param)) leftOut.push(`${name} ${param.name}`);
        if (LEFT_OUT.has(`${name} ${param.name}`)) continue;
        expect(param, `${name} parameter ${param.name}`).toHaveProperty('example');
        expect(errorsOf(param.schema, param.example), `${name} parameter ${param.name} = ${JSON.stringify(param.example)}`).toEqual([]);
      }
      for (const [type, media] of Object.entries(op.requestBody?.content ?? {})) {
        expect(media, `${name} request ${type}`).toHaveProperty('example');
        expect(errorsOf(media.schema, media.example), `${name} request body ${JSON.stringify(media.example)}`).toEqual([]);
      }
      const success = Object.entries(op.responses).filter(([status, r]) => /^2/.test(status) && r.content);
      expect(success.length, `${name} has a success response`).toBe(1);
      for (const [status, response] of success) {
        const media = response.content!['application/json'];
        expect(media, `${name} ${status}`).toHaveProperty('example');
        expect(errorsOf(media.schema, media.example), `${name} ${status} example ${JSON.stringify(media.example)}`).toEqual([]);
      }
    }
    expect(leftOut.sort()).toEqual([...LEFT_OUT].sort());
    for (const [status, response] of Object.entries(doc.components.responses as Record<string, any>)) {
      const media = response.content['application/json'];
      expect(errorsOf(media.schema, media.example), status).toEqual([]);
      expect(media.example.error.status).toBe(Number(status.replace('Error', '')));
    }
  });

  it('can fail: an example that breaks its schema is caught', () => {
    const [, put] = operations().find(([n]) => n === 'PUT /workspaces/{workspace}/memory/note')!;
    const media = put.requestBody!.content['application/json'];
    expect(errorsOf(media.schema, { ...(media.example as object), kind: 'not a token!' })).not.toEqual([]);
    expect(errorsOf(media.schema, { ...(media.example as object), extra: 1 })).not.toEqual([]);
  });

  it('declares the proposal body as oneOf an edit or a new draft, and the service refuses what neither variant allows', async () => {
    const [, create] = operations().find(([n]) => n === 'POST /workspaces/{workspace}/proposals')!;
    const { schema, example } = create.requestBody!.content['application/json'];
    expect((schema.oneOf as Schema[]).map((v) => v.title)).toEqual(['Edit', 'New draft']);
    expect(errorsOf(schema, example)).toEqual([]);
    const draft = { section: 'guides', title: 'Rotating keys', markdown: '# Rotating keys', summary: 'New page.' };
    expect(errorsOf(schema, draft)).toEqual([]);
    const mixed = { article: 'getting-started', section: 'guides', markdown: 'x', summary: 'Move it.' };
    const bare = { article: 'getting-started', summary: 'Nothing changes.' };
    const partialDraft = { section: 'guides', title: 'No body', summary: 'Forgot the markdown.' };
    for (const body of [mixed, bare, partialDraft]) expect(errorsOf(schema, body), JSON.stringify(body)).not.toEqual([]);

    const t = await tenant(app);
    const W = '/api/v1/workspaces/-';
    expect((await app.api('POST', `${W}/sections`, { key: t.key, body: { label: 'Guides' } })).status).toBe(201);
    const article = { title: 'Getting started', section: 'guides', markdown: '# Getting started' };
    expect((await app.api('POST', `${W}/articles`, { key: t.key, body: article })).status).toBe(201);
    for (const body of [mixed, bare, partialDraft]) {
      const res = await app.api('POST', `${W}/proposals`, { key: t.key, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
    }
    for (const body of [example, draft]) {
      const res = await app.api('POST', `${W}/proposals`, { key: t.key, body });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
    }
  });

  it('names only permissions that exist in its error examples, with the message the service really sends', async () => {
    const { PERMISSIONS } = await import('../src/auth/permissions.js');
    const example = doc.components.responses.Error403.content['application/json'].example.error;
    expect(example.details.missing.length).toBeGreaterThan(0);
    for (const name of example.details.missing) expect(PERMISSIONS).toContain(name);
    // A viewer key creating an article gets the same sentence shape.
    const viewer = await tenant(app, { permissions: ['article.read'] });
    const res = await app.api('POST', '/api/v1/workspaces/-/articles', {
      key: viewer.key,
      body: { title: 'T', section: 'guides', markdown: 'x' },
    });
    expect(res.status).toBe(403);
    expect(res.body.error.message).toBe(example.message.replace(example.details.missing.join(', '), 'article.create'));
  });

  it('describes every tag', () => {
    const used = new Set(operations().flatMap(([, op]) => (op as any).tags as string[]));
    expect(new Set(doc.tags.map((t: any) => t.name))).toEqual(used);
    for (const tag of doc.tags) expect(tag.description.length, tag.name).toBeGreaterThan(20);
  });
});

describe('/llms.txt', () => {
  it('indexes every endpoint of the route table for agents, without a key: method, path, permissions, limits, links', async () => {
    const res = await fetch(`${app.server.url}/llms.txt`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/markdown/);
    const text = await res.text();
    expect(text.startsWith('# Workspace Knowledge Service\n\n> ')).toBe(true);
    for (const link of ['(/api/v1/openapi.json)', '(/docs)', '`POST /mcp`']) expect(text).toContain(link);
    // The test app's rate limit, not a constant.
    expect(text).toContain('10000 requests per 60 s');
    const lines = text.split('\n').filter((l) => l.startsWith('- `'));
    expect(lines).toHaveLength(operations().length);
    for (const [name, op] of operations()) {
      const [method, path] = name.split(' ');
      const line = lines.find((l) => l.startsWith(`- \`${method} /api/v1${path}\` (\`${op.operationId}\`)`));
      expect(line, name).toBeDefined();
      for (const permission of (op as any)['x-permissions'] as string[]) expect(line).toContain(`\`${permission}\``);
    }
    const put = lines.find((l) => l.includes('(`memory_put_note`)'))!;
    // A note body is bounded in UTF-8 bytes, and said so (not "chars").
    expect(put).toMatch(/`body` ≤ 16384 bytes \(UTF-8\)/);
    expect(lines.find((l) => l.includes('(`search`)'))).toContain('`limit` 1–');
    for (const tag of doc.tags) expect(text).toContain(`\n## ${tag.name}\n`);
  });
});
