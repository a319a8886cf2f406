import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
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
    const table = doc.slice(doc.indexOf('| policy | rule | declared by |'));
    expect(table.trim(), 'docs/access.md is behind the schema or the policies: regenerate it with scripts/access-table.ts').toBe(
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

  it('the services and the identity wing decide no access: no rule, no permission named, no 403 of their own', () => {
    const root = new URL('../../src/', import.meta.url).pathname;
    const files = (dir: string): string[] =>
      readdirSync(dir).flatMap((name) => (statSync(join(dir, name)).isDirectory() ? files(join(dir, name)) : [join(dir, name)]));
    const offences = ['services', 'identity', 'store', 'search'].flatMap((room) =>
      files(join(root, room))
        .filter((f) => f.endsWith('.ts'))
        .flatMap((file) => {
          const text = readFileSync(file, 'utf8');
          const found: string[] = [];
          // Guards and permits are handed in; the policies themselves are the resolvers' to name.
          if (/^import (?!type )[^;]*from '\.\.\/auth\/policies\.js'/m.test(text)) found.push('imports the policy module');
          if (/new PermissionDeniedError\(/.test(text)) found.push('throws permission_denied itself');
          if (/\.permissions\.has\(/.test(text)) found.push('tests a permission');
          if (/\broleMay\(/.test(text)) found.push("tests a role's rights");
          return found.map((what) => `${file.slice(root.length)}: ${what}`);
        }),
    );
    expect(offences).toEqual([]);
  });
});
