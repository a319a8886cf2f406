import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule, { type FormatsPlugin } from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { tenant } from './support/factories.js';
import { png } from './support/images.js';

// The examples of the served OpenAPI document, run the way a newcomer runs them: every operation of
// the document, in the order of STEPS, sends exactly its documented example request (its path,
// query and header parameters and its body, as documented; parameters without an example are not
// sent) to one fresh workspace, with an owner's key that has every permission. The only values not
// taken from the document are the server-assigned ids a path names (taken from the step that made
// them) and the upload's file (a PNG; the document can only show the field). Each must answer its
// documented success status with a body valid against its documented schema, and that body must be
// the documented example answer but for the fields the server decides (ids, times, …: DECIDED).

const addFormats = ((addFormatsModule as unknown as { default?: FormatsPlugin }).default ?? addFormatsModule) as FormatsPlugin;

type Schema = Record<string, unknown>;
interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  schema: Schema;
  example?: unknown;
}
interface Operation {
  operationId: string;
  parameters: (Parameter | { $ref: string })[];
  requestBody?: { content: Record<string, { schema: Schema; example?: unknown }> };
  responses: Record<string, { content?: Record<string, { schema: Schema; example?: unknown }> }>;
}
interface DocOperation {
  method: string;
  path: string;
  op: Operation;
}

/** What earlier steps learnt that later steps need: ids the server assigned. */
interface Learnt {
  workspaceId: string;
  entryId?: number;
  groupId?: number;
}

interface Step {
  /** The operation's operationId. */
  op: string;
  /** Path parameters whose example stands for a server-assigned id: the id an earlier step got. */
  ids?: (learnt: Learnt) => Record<string, unknown>;
  /** After the step: what it tells later steps, and what the service must finish first. */
  then?: (learnt: Learnt, body: any) => unknown;
  /** Fields of the answer the example cannot know, beyond DECIDED. */
  decided?: string[];
}

/**
 * Fields of an answer the server decides, which an example can only illustrate: ids, times, the
 * key's name, links that name the workspace's id, ranking scores. Every other field of the
 * documented answer must be what the story's request got.
 */
const DECIDED = /^(id|\w+Id|\w+At|firstSeen|lastSeen|author|url|score)$/;

const entryId = (learnt: Learnt) => ({ id: learnt.entryId });
const groupId = (learnt: Learnt) => ({ group: learnt.groupId });

/** The story, top to bottom: one step per operation of the document. */
const STEPS: Step[] = [
  { op: 'guidance_set' },
  { op: 'guidance_get' },
  { op: 'sections_create' },
  { op: 'articles_create' },
  { op: 'sections_list' },
  { op: 'articles_tree' },
  { op: 'articles_get' },
  { op: 'articles_update' },
  { op: 'articles_revisions' },
  { op: 'articles_revision' },
  { op: 'articles_diff' },
  { op: 'articles_restore' },
  { op: 'articles_place' },
  { op: 'proposals_create' },
  { op: 'proposals_list' },
  // The answer describes the file, which the document cannot show.
  { op: 'uploads_create', decided: ['size', 'width', 'height', 'sha256'] },
  { op: 'search' },
  { op: 'fetch' },
  { op: 'changelog_create', then: (learnt, body) => (learnt.entryId = body.id) },
  { op: 'changelog_update', ids: entryId },
  { op: 'changelog_list' },
  { op: 'changelog_delete', ids: entryId },
  { op: 'memory_put_note' },
  { op: 'memory_get_note' },
  { op: 'memory_list_notes' },
  { op: 'memory_search' },
  // Reports are grouped by the background worker, which the test app leaves to the test.
  { op: 'content_gaps_report', then: (learnt) => app.server.drainEmbeddings(learnt.workspaceId) },
  { op: 'content_gaps_list', then: (learnt, body) => (learnt.groupId = body[0]?.id) },
  { op: 'content_gaps_draft', ids: groupId },
  { op: 'content_gaps_propose', ids: groupId },
  { op: 'memory_delete_note' },
  { op: 'memory_note_history' },
  { op: 'memory_note_revision' },
  { op: 'openapi_create_section' },
  { op: 'openapi_attach' },
  { op: 'openapi_status' },
  { op: 'openapi_pages' },
  { op: 'openapi_place_page' },
  { op: 'openapi_sync' },
  { op: 'openapi_detach_page' },
  { op: 'openapi_detach' },
];

let app: TestApp;
let doc: any;
beforeAll(async () => {
  app = await startTestApp();
  doc = await (await fetch(`${app.server.url}/api/v1/openapi.json`)).json();
});
afterAll(async () => app?.close());

function documentOperations(): DocOperation[] {
  return Object.entries(doc.paths as Record<string, Record<string, Operation>>).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => ({ method: method.toUpperCase(), path, op })),
  );
}

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

/** The documented example request of an operation, with `ids` for the path parameters they name. */
function exampleRequest(
  { method, path, op }: DocOperation,
  key: string,
  ids: Record<string, unknown>,
): { url: string; init: RequestInit; shown: string } {
  const params = op.parameters.filter((p): p is Parameter => !('$ref' in p));
  let url = path;
  for (const p of params.filter((x) => x.in === 'path')) {
    const value = p.name in ids ? ids[p.name] : p.example;
    if (value === undefined) {
      const why = p.name in ids ? 'is a server-assigned id no earlier step supplied' : 'has no example';
      throw new Error(`${op.operationId}: path parameter ${p.name} ${why}`);
    }
    url = url.replace(`{${p.name}}`, encodeURIComponent(String(value)));
  }
  const query = new URLSearchParams();
  for (const p of params) if (p.in === 'query' && 'example' in p) query.append(p.name, String(p.example));
  if (query.size) url += `?${query}`;
  const headers: Record<string, string> = {};
  for (const p of params) if (p.in === 'header' && 'example' in p) headers[p.name] = String(p.example);
  const content = op.requestBody?.content ?? {};
  let body: string | FormData | undefined;
  if (content['application/json']) {
    body = JSON.stringify(content['application/json'].example);
    headers['content-type'] = 'application/json';
  } else if (content['multipart/form-data']) {
    body = new FormData();
    // The example shows the field; a newcomer sends a file in it.
    for (const field of Object.keys(content['multipart/form-data'].example as object)) {
      body.set(field, new Blob([new Uint8Array(png(4, 4))], { type: 'image/png' }), 'architecture.png');
    }
  }
  const shown = `${method} ${url} ${JSON.stringify(headers)} ${typeof body === 'string' ? body.slice(0, 300) : body ? '(multipart)' : ''}`;
  return {
    url: `${app.server.url}${doc.servers[0].url}${url}`,
    init: { method, headers: { ...headers, authorization: `Bearer ${key}` }, body },
    shown,
  };
}

/**
 * Sends an operation's example request: what is wrong with the answer (none: []) and its body. It
 * must have the documented success status, match the documented schema, and be the documented
 * example answer but for the fields the server decides (DECIDED and `decided`).
 */
async function runExample(
  operation: DocOperation,
  key: string,
  ids: Record<string, unknown> = {},
  decided: string[] = [],
): Promise<{ problems: string[]; body: any }> {
  const { url, init, shown } = exampleRequest(operation, key, ids);
  const res = await fetch(url, init);
  const text = await res.text();
  const body = res.headers.get('content-type')?.includes('json') && text ? JSON.parse(text) : text;
  const [status, response] = Object.entries(operation.op.responses).find(([s, r]) => /^2/.test(s) && r.content)!;
  const where = `${operation.op.operationId}: ${shown}`;
  if (res.status !== Number(status))
    return { problems: [`${where}\n  answered ${res.status} (documented: ${status}): ${text.slice(0, 500)}`], body };
  const { schema, example } = response.content!['application/json'];
  const problems = [
    ...errorsOf(schema, body).map((e) => `${where}\n  the answer does not match its schema: ${e}\n  ${text.slice(0, 500)}`),
    ...differences(example, body, decided).map((d) => `${where}\n  the documented answer differs at ${d}`),
  ];
  return { problems, body };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Where a documented answer differs from the answer given, fields the server decides aside. */
function differences(documented: unknown, given: unknown, decided: string[], at = ''): string[] {
  if (Array.isArray(documented) && Array.isArray(given)) {
    if (documented.length !== given.length) return [`${at || 'the list'}: documented ${documented.length} items, got ${given.length}`];
    return documented.flatMap((d, i) => differences(d, given[i], decided, `${at}[${i}]`));
  }
  if (isObject(documented) && isObject(given)) {
    const keys = [...new Set([...Object.keys(documented), ...Object.keys(given)])].filter((k) => !DECIDED.test(k) && !decided.includes(k));
    return keys.flatMap((k) => {
      if (!(k in documented)) return [`${at}.${k}: given, not documented`];
      if (!(k in given)) return [`${at}.${k}: documented, not given`];
      return differences(documented[k], given[k], decided, `${at}.${k}`);
    });
  }
  if (JSON.stringify(documented) === JSON.stringify(given)) return [];
  return [`${at || 'the answer'}: documented ${JSON.stringify(documented)}, got ${JSON.stringify(given)}`];
}

/** The operations of the document no step runs, and the steps that name no operation of it. */
function uncovered(operations: DocOperation[], story: Step[]): { withoutStep: string[]; withoutOperation: string[] } {
  const ids = new Set(operations.map((o) => o.op.operationId));
  const steps = new Set(story.map((s) => s.op));
  return {
    withoutStep: operations.filter((o) => !steps.has(o.op.operationId)).map((o) => `${o.op.operationId} (${o.method} ${o.path})`),
    withoutOperation: [...steps].filter((s) => !ids.has(s)),
  };
}

describe('the served OpenAPI document, run as a story', () => {
  it('has one step for every operation of the document, each once', () => {
    const operations = documentOperations();
    const { withoutStep, withoutOperation } = uncovered(operations, STEPS);
    expect(withoutStep, 'operations of the document with no step in STEPS (add one where its example can run)').toEqual([]);
    expect(withoutOperation, 'steps of STEPS naming no operation of the document').toEqual([]);
    expect(STEPS.length, 'one step per operation').toBe(new Set(STEPS.map((s) => s.op)).size);
    expect(STEPS).toHaveLength(operations.length);
  });

  it('runs every example request of the document, top to bottom, on a fresh workspace: each answers as documented', async () => {
    const t = await tenant(app);
    const learnt: Learnt = { workspaceId: t.workspace.id };
    const operations = new Map(documentOperations().map((o) => [o.op.operationId, o]));
    for (const step of STEPS) {
      const operation = operations.get(step.op);
      expect(operation, `${step.op} is an operation of the document`).toBeDefined();
      const { problems, body } = await runExample(operation!, t.key, step.ids?.(learnt) ?? {}, step.decided);
      expect(problems, `step ${step.op}`).toEqual([]);
      await step.then?.(learnt, body);
    }
  }, 180_000);

  it('can fail: an example that does not work on a fresh workspace, or an operation without a step, is caught', async () => {
    const t = await tenant(app);
    const create = documentOperations().find((o) => o.op.operationId === 'sections_create')!;
    // The example as it once was: a position past the end of an empty sidebar.
    const broken: DocOperation = JSON.parse(JSON.stringify(create));
    const media = broken.op.requestBody!.content['application/json'];
    media.example = { ...(media.example as object), position: 1 };
    const { problems } = await runExample(broken, t.key);
    expect(problems.join('\n')).toMatch(/answered 400 \(documented: 201\)/);
    // An answer that breaks its schema is caught too, and so is an example answer the service does not give.
    const [, response] = Object.entries(create.op.responses).find(([s]) => s === '201')!;
    expect(errorsOf(response.content!['application/json'].schema, { key: 'guides' })).not.toEqual([]);
    const stale: DocOperation = JSON.parse(JSON.stringify(create));
    stale.op.responses['201'].content!['application/json'].example = {
      key: 'guides',
      label: 'Guides',
      visibility: 'public',
      articleCount: 4,
    };
    const fresh = await tenant(app);
    expect((await runExample(stale, fresh.key)).problems.join('\n')).toContain(
      'the documented answer differs at .articleCount: documented 4, got 0',
    );
    // A server-assigned id that no earlier step supplied is named.
    const update = documentOperations().find((o) => o.op.operationId === 'changelog_update')!;
    await expect(runExample(update, t.key, { id: undefined })).rejects.toThrow(
      /path parameter id is a server-assigned id no earlier step supplied/,
    );
    // A new row without a step is named.
    const extra: DocOperation = {
      method: 'GET',
      path: '/workspaces/{workspace}/widgets',
      op: { ...create.op, operationId: 'widgets_list' },
    };
    const { withoutStep } = uncovered([...documentOperations(), extra], STEPS);
    expect(withoutStep).toEqual(['widgets_list (GET /workspaces/{workspace}/widgets)']);
  });
});
