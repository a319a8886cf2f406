import type { GraphQLSchema } from 'graphql';
import { beforeAll, describe, expect, it } from 'vitest';
import { compileRoutes } from '../../rest/compile.js';
import { defineRoute, headerOf, jsonBody, PAGE_QUERY, paramOf, type Route } from '../../rest/routeDefinition.js';
import { ROUTES } from '../../rest/routes/index.js';
import { GetMemoryNote } from '../../schema/operations/GetMemoryNote.js';
import { PutMemoryNote } from '../../schema/operations/PutMemoryNote.js';
import { Search } from '../../schema/operations/Search.js';
import { UploadImage } from '../../schema/operations/UploadImage.js';
import { RULES } from '../../src/contract/rules.js';
import { buildAppSchema } from '../../src/schema.js';

// A row imports its operation's typed document, and `tsc` holds each of its parameters, headers,
// body and upload to a variable of that document: every `@ts-expect-error` below is such a row, and
// `npm run typecheck` fails if one of them stops being an error. The same rows, run anyway, fail the start.
let schema: GraphQLSchema;
beforeAll(async () => {
  schema = await buildAppSchema();
});

const base = { tag: 'Memory', summary: 's', description: 'd', status: 200 } as const;
const noteGet = { ...base, name: 'memory_get_note', method: 'GET', path: '/workspaces/{workspace}/memory/note' } as const;
const withRow = (changed: Route) => ROUTES.map((r) => (r.name === changed.name ? changed : r));
const path = { path: paramOf(RULES.notePath, 'Note path.', { required: true }) };

describe('a row typed by its document', () => {
  it('takes parameters, headers and a body named as the variables of its document', () => {
    const row = defineRoute({
      ...noteGet,
      operation: GetMemoryNote,
      query: path,
      headers: { 'if-none-match': headerOf(RULES.ifNoneMatch, 'An ETag.', 'ifNoneMatch') },
    });
    expect(compileRoutes(schema, withRow(row))).toHaveLength(ROUTES.length);
  });

  it('fails tsc with a query parameter the document lacks, written or spread in', () => {
    const written = defineRoute({
      ...noteGet,
      operation: GetMemoryNote,
      query: {
        ...path,
        // @ts-expect-error -- GetMemoryNote has no $colour
        colour: paramOf(RULES.tag, 'A colour.'),
      },
    });
    expect(() => compileRoutes(schema, withRow(written))).toThrow(/parameter colour has no variable \$colour/);
    const spread = defineRoute({
      ...noteGet,
      operation: GetMemoryNote,
      // @ts-expect-error -- GetMemoryNote has no $limit nor $cursor
      query: { ...path, ...PAGE_QUERY(RULES.pageLimit, [20]) },
    });
    expect(() => compileRoutes(schema, withRow(spread))).toThrow(/parameter limit has no variable \$limit/);
  });

  it('fails tsc with a path parameter the document lacks', () => {
    const row = defineRoute({
      ...noteGet,
      path: '/workspaces/{workspace}/memory/{slug}',
      operation: GetMemoryNote,
      // @ts-expect-error -- GetMemoryNote has no $slug
      pathParams: { slug: paramOf(RULES.slug, 'A slug.') },
      query: path,
    });
    expect(() => compileRoutes(schema, withRow(row))).toThrow(/parameter slug has no variable \$slug/);
  });

  it('fails tsc with a header, body or upload variable the document lacks', () => {
    const header = defineRoute({
      ...noteGet,
      operation: GetMemoryNote,
      query: path,
      // @ts-expect-error -- GetMemoryNote has $ifNoneMatch, not $ifNoneMatches
      headers: { 'if-none-match': headerOf(RULES.ifNoneMatch, 'An ETag.', 'ifNoneMatches') },
    });
    expect(() => compileRoutes(schema, withRow(header))).toThrow(/parameter if-none-match has no variable \$ifNoneMatches/);
    const body = defineRoute({
      ...base,
      name: 'memory_put_note',
      method: 'PUT',
      path: '/workspaces/{workspace}/memory/note',
      operation: PutMemoryNote,
      // @ts-expect-error -- PutMemoryNote's body is $input
      body: jsonBody({ variable: 'note', properties: { path: { type: 'string' } }, required: ['path'] }),
    });
    expect(() => compileRoutes(schema, withRow(body))).toThrow(/body variable \$note is not an input object/);
    const upload = defineRoute({
      ...base,
      name: 'uploads_create',
      method: 'POST',
      path: '/workspaces/{workspace}/uploads',
      operation: UploadImage,
      // @ts-expect-error -- UploadImage's file is $file
      upload: { field: 'file', variable: 'image', maxBytes: 1024, description: 'An image.' },
    });
    expect(() => compileRoutes(schema, withRow(upload))).toThrow(/upload variable \$image must be of type Upload/);
  });

  it("fails tsc with another document's parameters", () => {
    const row = defineRoute({
      ...noteGet,
      operation: Search,
      // @ts-expect-error -- Search has $q, not $path
      query: path,
    });
    expect(() => compileRoutes(schema, withRow(row))).toThrow(/parameter path has no variable \$path/);
  });
});
