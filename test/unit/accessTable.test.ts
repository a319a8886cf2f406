import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { accessOf, enforceAccess, rootAccess } from '../../src/auth/access.js';
import { accessTable } from '../../src/auth/accessTable.js';
import { buildAppSchema } from '../../src/schema.js';

// Every root operation declares who may call it, and docs/access.md tells the whole truth about it.
describe('who may call each root operation', () => {
  it('every root operation declares its access, and docs/access.md lists exactly those declarations', async () => {
    const schema = await buildAppSchema();
    const ops = rootAccess(schema);
    expect(ops.length).toBeGreaterThan(70);
    expect(ops.filter((op) => !op.access).map((op) => op.name)).toEqual([]);
    const doc = readFileSync(new URL('../../docs/access.md', import.meta.url), 'utf8');
    const table = doc.slice(doc.indexOf('| type | operation | who may call |'));
    expect(table.trim(), 'docs/access.md is behind the schema: regenerate it with scripts/access-table.ts').toBe(
      accessTable(schema).trim(),
    );
  });

  it('the start fails when a root operation declares nothing', async () => {
    const schema = await buildAppSchema();
    const field = schema.getQueryType()!.getFields().usage!;
    expect(accessOf(field)?.form).toBe('admin');
    const declared = field.extensions;
    field.extensions = { ...declared, access: undefined };
    try {
      expect(() => enforceAccess(schema)).toThrow(/declare no access \(@Needs\): Query\.usage/);
    } finally {
      field.extensions = declared;
    }
  });
});
