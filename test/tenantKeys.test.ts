import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshEm } from '../src/db/orm.js';
import { sql } from '../src/db/sql.js';
import { startTestApp, type TestApp } from './support/app.js';

// Sharding by tenant (Citus or any tenant-sharded PostgreSQL) needs every primary key, unique
// constraint and foreign key of a distributed table to include the distribution column, and every
// table without one to be a reference table. This lists what does not, from the migrated schema,
// and holds the list to the exceptions explained in docs/sharding.md: a new key or table without
// the tenant column fails here until it is explained there. A distribution column may not be null,
// so every tenant column that allows null is listed (and explained) too.
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
}, 120_000);
afterAll(async () => app?.close());

const TENANT = ['workspace_id', 'organization_id'];

/**
 * `kind table constraint (columns)` for every key without the tenant column, `reference table` for
 * every table without one, and `nullable table.column` for every tenant column that allows null.
 */
async function tenantKeyFindings(): Promise<string[]> {
  const rows = await sql<{ kind: string; tbl: string; con: string; cols: string }>(
    freshEm(app.server.orm),
    `with t as (
       select c.oid, c.relname,
              exists (select 1 from pg_attribute a where a.attrelid = c.oid and a.attname = any(?::text[]) and not a.attisdropped) as tenant
         from pg_class c join pg_namespace n on n.oid = c.relnamespace
        where n.nspname = 'public' and c.relkind in ('r', 'p') and c.relname <> 'mikro_orm_migrations')
     select 'reference' as kind, relname as tbl, '' as con, '' as cols from t where not tenant
     union all
     select 'nullable', t.relname, a.attname, '' from t join pg_attribute a on a.attrelid = t.oid
      where a.attname = any(?::text[]) and not a.attnotnull and not a.attisdropped
     union all
     select case con.contype when 'p' then 'primary' when 'u' then 'unique' else 'foreign' end, t.relname, con.conname,
            (select string_agg(a.attname, ',' order by k.ord) from unnest(con.conkey) with ordinality k(attnum, ord)
               join pg_attribute a on a.attrelid = con.conrelid and a.attnum = k.attnum)
       from t join pg_constraint con on con.conrelid = t.oid
      where t.tenant and con.contype in ('p', 'u', 'f')
        and not exists (select 1 from unnest(con.conkey) k(attnum) join pg_attribute a on a.attrelid = con.conrelid and a.attnum = k.attnum
                         where a.attname = any(?::text[]))
      order by 1, 2, 3`,
    [`{${TENANT.join(',')}}`, `{${TENANT.join(',')}}`, `{${TENANT.join(',')}}`],
  );
  return rows.map((r) => {
    if (r.kind === 'reference') return `reference ${r.tbl}`;
    if (r.kind === 'nullable') return `nullable ${r.tbl}.${r.con}`;
    return `${r.kind} ${r.tbl}.${r.con} (${r.cols})`;
  });
}

/** The exceptions docs/sharding.md explains: its table rows whose first cell is `kind table[.constraint]`. */
function documentedExceptions(): string[] {
  const doc = readFileSync(new URL('../docs/sharding.md', import.meta.url), 'utf8');
  return [...doc.matchAll(/^\| `(reference \w+|nullable \w+\.\w+|(?:primary|unique|foreign) \w+\.\w+ \([\w,]+\))` \|/gm)].map((m) => m[1]);
}

describe('tenant keys (what sharding by workspace or organization would need)', () => {
  it('lists every key without the tenant column, every table without one and every tenant column that may be null, each explained in docs/sharding.md', async () => {
    const findings = await tenantKeyFindings();
    console.log(`tenant key check: ${findings.length} findings\n${findings.join('\n')}`);
    const documented = documentedExceptions();
    expect(
      findings.filter((f) => !documented.includes(f)),
      'found in the schema, not explained in docs/sharding.md',
    ).toEqual([]);
    expect(
      documented.filter((d) => !findings.includes(d)),
      'explained in docs/sharding.md, no longer in the schema',
    ).toEqual([]);
  });
});
