import type { GraphQLSchema } from 'graphql';
import { beforeAll, describe, expect, it } from 'vitest';
import { compileRoutes } from '../../rest/compile.js';
import { jsonBody, type Route } from '../../rest/routeDefinition.js';
import { ROUTES } from '../../rest/routes/index.js';
import { buildAppSchema } from '../../src/schema.js';

// The start-time checks of the route table: a bad row must make the compile throw, so a mistake
// fails the start (and this test), never a request.
let schema: GraphQLSchema;
beforeAll(async () => {
  schema = await buildAppSchema();
});

const row = (name: string): Route => ({ ...ROUTES.find((r) => r.name === name)! });
const withRow = (changed: Route) => ROUTES.map((r) => (r.name === changed.name ? changed : r));

describe('compileRoutes', () => {
  it('compiles the real table', () => {
    expect(compileRoutes(schema, ROUTES)).toHaveLength(ROUTES.length);
  });

  it('refuses a duplicate name', () => {
    expect(() => compileRoutes(schema, [...ROUTES, row('search')])).toThrow(/duplicate name/);
  });

  it('refuses a document the schema does not validate', () => {
    const operation = { name: 'Search', source: 'query Search($workspace: String!) { search(workspace: $workspace) { colour } }' };
    expect(() => compileRoutes(schema, withRow({ ...row('search'), operation }))).toThrow(/Search.graphql is invalid/);
  });

  it('refuses a document whose operation is not named as the document', () => {
    const operation = { ...row('search').operation, name: 'Find' };
    expect(() => compileRoutes(schema, withRow({ ...row('search'), operation }))).toThrow(/must hold one operation named Find/);
  });

  it('refuses path placeholders without parameters', () => {
    expect(() =>
      compileRoutes(schema, withRow({ ...row('articles_get'), path: '/workspaces/{workspace}/articles/{slug}/{extra}' })),
    ).toThrow(/placeholders and pathParams differ/);
  });

  it('refuses a query parameter with no variable in the document', () => {
    const bad = row('search');
    bad.query = { ...bad.query, colour: { schema: { type: 'string' }, description: 'x' } };
    expect(() => compileRoutes(schema, withRow(bad))).toThrow(/parameter colour has no variable/);
  });

  it('refuses a body field the input type does not have', () => {
    const bad = row('sections_create');
    bad.body = jsonBody({ variable: 'input', properties: { label: { type: 'string' }, colour: { type: 'string' } }, required: ['label'] });
    expect(() => compileRoutes(schema, withRow(bad))).toThrow(/body field colour is not a field of CreateSectionInput/);
  });

  it('refuses a body that does not require what the input type requires', () => {
    const bad = row('sections_create');
    bad.body = jsonBody({ variable: 'input', properties: { label: { type: 'string' } } });
    expect(() => compileRoutes(schema, withRow(bad))).toThrow(/CreateSectionInput.label is required but the body does not require it/);
  });

  it('refuses a rename onto a field the input type does not have', () => {
    const bad = row('changelog_update');
    bad.body = { ...bad.body!, rename: { published_at: 'publishedWhen' } };
    expect(() => compileRoutes(schema, withRow(bad))).toThrow(/body field published_at is not a field/);
  });

  it('refuses an upload into a variable that is not an Upload', () => {
    const bad = row('uploads_create');
    bad.upload = { ...bad.upload!, variable: 'workspace' };
    expect(() => compileRoutes(schema, withRow(bad))).toThrow(/must be of type Upload/);
  });

  it('refuses a required variable no parameter supplies', () => {
    const bad = row('memory_get_note');
    delete bad.query;
    expect(() => compileRoutes(schema, withRow(bad))).toThrow(/required variable \$path is never supplied/);
  });
});
