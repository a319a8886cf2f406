// The pages generated from an OpenAPI document, pinned word for word: parseSpecText is called directly
// (no server, no worker), so any change in how operations are rendered or hashed shows up here.
import { stringify as toYaml } from 'yaml';
import { describe, expect, it } from 'vitest';
import { parseSpecText } from '../../src/openapi/parse.js';
import type { SpecOperation } from '../../src/openapi/spec.js';

const parse = (doc: unknown) => parseSpecText(typeof doc === 'string' ? doc : JSON.stringify(doc), { timeoutMs: 20_000 });
const lines = (...all: string[]) => all.join('\n');
const withoutMarkdown = ({ key, method, path, title, tag, hash }: SpecOperation) => ({ key, method, path, title, tag, hash });

const petstore30 = {
  openapi: '3.0.3',
  info: { title: 'Petstore', version: '1.2.0' },
  servers: [{ url: 'https://pets.example.com/v1/' }],
  paths: {
    '/pets/{petId}': {
      parameters: [{ name: 'petId', in: 'path', required: true, schema: { type: 'string', format: 'uuid' }, description: 'The pet.' }],
      get: {
        operationId: 'getPet',
        summary: '  Get a pet  ',
        tags: ['Pets'],
        description: '  Reads one pet.\n\nAnswers 404 when it is gone.  ',
        parameters: [
          {
            name: 'limit',
            in: 'query',
            required: true,
            schema: { type: 'integer' },
            description: 'Page size |max 100|\n   counted in\n\n  items',
          },
          { name: 'sort', in: 'query', schema: { type: 'string', enum: ['asc', 'desc'] } },
          { name: 'X-Request-Id', in: 'header', schema: { type: 'string' } },
        ],
        responses: {
          200: { description: 'The pet', content: { 'application/json': { schema: { $ref: '#/components/schemas/Pet' } } } },
          404: { description: 'Not | found' },
        },
      },
    },
  },
  components: {
    schemas: {
      Pet: {
        type: 'object',
        required: ['id'],
        properties: {
          id: { type: 'integer', format: 'int64' },
          name: { type: 'string' },
          tags: { type: 'array', items: { type: 'string' } },
          kind: { oneOf: [{ type: 'string', enum: ['dog', 'cat'] }, { type: 'integer' }] },
        },
      },
    },
  },
};

const orders20 = {
  swagger: '2.0',
  info: { title: 'Orders', version: '0.9' },
  host: 'shop.example.com',
  basePath: '/api',
  schemes: ['https'],
  paths: {
    '/orders': {
      post: {
        deprecated: true,
        tags: ['Orders'],
        parameters: [
          { name: 'body', in: 'body', required: true, description: 'The order.', schema: { $ref: '#/definitions/Order' } },
          { name: 'dryRun', in: 'query', type: 'boolean' },
        ],
        responses: { 201: { description: 'Created', schema: { type: 'array', items: { $ref: '#/definitions/Order' } } } },
      },
    },
  },
  definitions: {
    Order: {
      type: 'object',
      required: ['sku'],
      properties: {
        sku: { type: 'string' },
        qty: { type: 'integer', format: 'int32' },
        lines: { type: 'array', items: { type: 'object', properties: { n: { type: 'number' } } } },
      },
    },
  },
};

const things31 = {
  openapi: '3.1.0',
  info: { title: 'Things', version: '3' },
  paths: {
    '/things': {
      get: { operationId: 'list', responses: { 200: { description: 'ok' } } },
      post: { operationId: 'list', responses: { 200: { description: 'ok' } } },
      put: {
        operationId: 'putThing',
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: {
                allOf: [
                  { type: 'object', properties: { a: { type: ['string', 'null'] } } },
                  { type: 'object', required: ['b'], properties: { b: { type: 'boolean' } } },
                ],
              },
            },
          },
        },
        responses: { 204: { description: 'Stored' } },
      },
      delete: { operationId: 'secret', 'x-hidden': true, responses: { 204: { description: 'gone' } } },
    },
  },
};

describe('OpenAPI pages', () => {
  it('renders an OpenAPI 3.0 operation: escaped table cells, a schema sketch with oneOf and arrays, the example curl', async () => {
    const spec = await parse(petstore30);
    expect(spec).toMatchObject({ title: 'Petstore', version: '1.2.0', openapiVersion: '3.0.3', warnings: [] });
    expect(spec.operations.map(withoutMarkdown)).toEqual([
      { key: 'getPet', method: 'GET', path: '/pets/{petId}', title: 'Get a pet', tag: 'Pets', hash: 'a3497509ad74eb19c5a615f72182f123' },
    ]);
    expect(spec.operations[0].markdown).toBe(
      lines(
        '# Get a pet',
        '',
        '`GET /pets/{petId}`',
        '',
        'Reads one pet.',
        '',
        'Answers 404 when it is gone.',
        '',
        '## Parameters',
        '',
        '| Name | In | Type | Required | Description |',
        '|---|---|---|---|---|',
        '| `petId` | path | string (uuid) | yes | The pet. |',
        '| `limit` | query | integer | yes | Page size \\|max 100\\| counted in items |',
        '| `sort` | query | string (asc, desc) | no |  |',
        '| `X-Request-Id` | header | string | no |  |',
        '',
        '## Responses',
        '',
        '### 200',
        '',
        'The pet',
        '',
        '`application/json`',
        '',
        '```json',
        '{',
        '  "id": "integer (int64)",',
        '  "name?": "string",',
        '  "tags?": [',
        '    "string"',
        '  ],',
        '  "kind?": {',
        '    "oneOf": [',
        '      "string (dog, cat)",',
        '      "integer"',
        '    ]',
        '  }',
        '}',
        '```',
        '',
        '### 404',
        '',
        'Not \\| found',
        '',
        '## Example request',
        '',
        '```sh',
        "curl -X GET 'https://pets.example.com/v1/pets/<petId>?limit=<limit>' \\",
        "  -H 'X-Request-Id: <X-Request-Id>'",
        '```',
        '',
      ),
    );
  });

  it('renders a Swagger 2.0 operation: deprecated, no summary, a body parameter, an array response', async () => {
    const spec = await parse(orders20);
    expect(spec).toMatchObject({ title: 'Orders', version: '0.9', openapiVersion: '2.0', warnings: [] });
    expect(spec.operations.map(withoutMarkdown)).toEqual([
      {
        key: 'POST /orders',
        method: 'POST',
        path: '/orders',
        title: 'POST /orders',
        tag: 'Orders',
        hash: '1ab84b41c2aa4e872e3aa4731795672c',
      },
    ]);
    const order = [
      '{',
      '  "sku": "string",',
      '  "qty?": "integer (int32)",',
      '  "lines?": [',
      '    {',
      '      "n?": "number"',
      '    }',
      '  ]',
      '}',
    ];
    expect(spec.operations[0].markdown).toBe(
      lines(
        '# POST /orders',
        '',
        '`POST /orders`',
        '',
        '> **Deprecated.**',
        '',
        '## Parameters',
        '',
        '| Name | In | Type | Required | Description |',
        '|---|---|---|---|---|',
        '| `dryRun` | query | boolean | no |  |',
        '',
        '## Request body',
        '',
        'The order.',
        '',
        '```json',
        ...order,
        '```',
        '',
        '## Responses',
        '',
        '### 201',
        '',
        'Created',
        '',
        '`application/json`',
        '',
        '```json',
        '[',
        ...order.map((line) => `  ${line}`),
        ']',
        '```',
        '',
        '## Example request',
        '',
        '```sh',
        "curl -X POST 'https://shop.example.com/api/orders' \\",
        "  -H 'content-type: application/json' \\",
        "  -d '{…}'",
        '```',
        '',
      ),
    );
  });

  it('reads OpenAPI 3.1 YAML: skips hidden operations and duplicate keys, merges allOf, names type arrays', async () => {
    const spec = await parse(toYaml(things31));
    expect(spec).toMatchObject({
      title: 'Things',
      version: '3',
      openapiVersion: '3.1.0',
      warnings: ['duplicate operation key "list" (POST /things) skipped'],
    });
    expect(spec.operations.map((op) => [op.key, op.title, op.tag, op.hash])).toEqual([
      ['list', 'GET /things', 'API Reference', '8654cbf95bf5f774589de65fd10c9ee1'],
      ['putThing', 'PUT /things', 'API Reference', 'ae33dfb67a3fd7442df0d0f2945d77b1'],
    ]);
    expect(spec.operations[1].markdown).toBe(
      lines(
        '# PUT /things',
        '',
        '`PUT /things`',
        '',
        '## Request body',
        '',
        '`application/json` (required)',
        '',
        '```json',
        '{',
        '  "a?": "string | null",',
        '  "b": "boolean"',
        '}',
        '```',
        '',
        '## Responses',
        '',
        '### 204',
        '',
        'Stored',
        '',
        '## Example request',
        '',
        '```sh',
        "curl -X PUT 'https://api.example.com/things' \\",
        "  -H 'content-type: application/json' \\",
        "  -d '{…}'",
        '```',
        '',
      ),
    );
  });
});
