import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROUTES } from '../../rest/routes/index.js';
import { OPERATIONS_DIR, typedOperationFiles } from '../../scripts/typed-operations.js';

// The typed documents the rows import are generated from schema/operations/*.graphql and the
// committed SDL (whose own freshness test/contract.test.ts holds): a document edited without
// `npm run schema:emit` fails here, not as a row that runs an old text.
describe('typed operation documents', () => {
  it('are what `npm run schema:emit` writes (run it after changing a document or the schema)', async () => {
    const files = await typedOperationFiles(readFileSync(new URL('../../schema/schema.graphql', import.meta.url), 'utf8'));
    const written = readdirSync(OPERATIONS_DIR).filter((f) => f.endsWith('.ts'));
    expect(written.sort()).toEqual([...files.keys()].sort());
    for (const [file, text] of files) expect(readFileSync(join(OPERATIONS_DIR, file), 'utf8'), `schema/operations/${file}`).toBe(text);
  });

  it('each runs exactly one row, and every row runs one', () => {
    const documents = readdirSync(OPERATIONS_DIR)
      .filter((f) => f.endsWith('.graphql'))
      .map((f) => f.replace(/\.graphql$/, ''));
    const run = ROUTES.map((r) => r.operation.name);
    expect(run.sort()).toEqual(documents.sort());
  });
});
