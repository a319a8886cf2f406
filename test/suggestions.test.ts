import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { createKey, createMember, tenant, type Tenant } from './support/factories.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.close());

const W = '/api/v1/workspaces/-';
const search = (key: string, q: string) => app.api('GET', `${W}/search?q=${encodeURIComponent(q)}`, { key });
const suggestions = (res: { headers: Headers }) =>
  (res.headers.get('x-search-suggestions') ?? '').split(', ').filter(Boolean).map(decodeURIComponent);

async function docs(t: Tenant) {
  expect((await app.api('POST', `${W}/sections`, { key: t.key, body: { label: 'Docs' } })).status).toBe(201);
  for (const [title, markdown, extra] of [
    ['Password rules', 'A password needs twelve characters.', {}],
    ['Webhooks', 'Receive events over HTTP.', {}],
    ['Zeppelin procedures', 'Internal only.', { visibility: 'restricted' }],
  ] as const) {
    const res = await app.api('POST', `${W}/articles`, { key: t.key, body: { title, section: 'docs', markdown, ...extra } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  }
}

describe('did-you-mean for full-text queries with no hits', () => {
  it('suggests the query with misspelt words replaced by close words the workspace uses, each of which finds something', async () => {
    const t = await tenant(app, { plan: 'pro' });
    await docs(t);
    const typo = await search(t.key, 'pasword');
    expect(typo.status).toBe(200);
    expect(typo.body).toEqual([]);
    expect(suggestions(typo)).toEqual(['password']);
    expect(suggestions(await search(t.key, 'pasword rulez'))).toEqual(['password rules']);
    // A word only a body uses is kept as it is; only the unknown word is replaced.
    expect(suggestions(await search(t.key, 'twelve pasword'))).toEqual(['twelve password']);
    for (const suggestion of suggestions(await search(t.key, 'webhoks')))
      expect((await search(t.key, suggestion)).body.length).toBeGreaterThan(0);
    // Found something, or nothing close: no suggestions.
    const found = await search(t.key, 'password');
    expect(found.body.length).toBeGreaterThan(0);
    expect(found.headers.get('x-search-suggestions')).toBeNull();
    expect((await search(t.key, 'qqqxxzz')).headers.get('x-search-suggestions')).toBeNull();
  });

  it('never suggests words from content the key may not see', async () => {
    const t = await tenant(app, { plan: 'pro' });
    await docs(t);
    const member = await createMember(app, t.org.id, { role: 'viewer' });
    const viewer = (await createKey(app, member.id, { permissions: ['search.read'], workspaceId: t.workspace.id })).key;
    expect(suggestions(await search(t.key, 'zepelin'))).toEqual(['zeppelin']);
    const theirs = await search(viewer, 'zepelin');
    expect(theirs.body).toEqual([]);
    expect(theirs.headers.get('x-search-suggestions')).toBeNull();
  });

  it('is the same over GraphQL (an empty list when there is nothing to suggest)', async () => {
    const t = await tenant(app, { plan: 'pro' });
    await docs(t);
    const res = await app.gql(
      'query { a: search(workspace: "-", q: "webhoks") { items { slug } suggestions } b: search(workspace: "-", q: "webhooks") { suggestions } }',
      {},
      t.key,
    );
    expect(res.errors).toBeUndefined();
    expect(res.data.a).toEqual({ items: [], suggestions: ['webhooks'] });
    expect(res.data.b.suggestions).toEqual([]);
  });
});
