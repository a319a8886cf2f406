import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// Every SQL statement and every EntityManager query lives in src/store/ (one module per table or
// concern), on top of src/db/ (the ORM, sql(), the pools). Services, background work and the wiring
// call store functions; they may pass an EntityManager along and open a transaction (the unit of
// work is theirs), but through store/unitOfWork.ts, as they fork one or make a row an entity: the
// statements are the store's. This test reads every source file and fails on a statement, a
// transaction, a fork or a mapping anywhere else.

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SRC = join(ROOT, 'src');

/** Where statements belong. */
const HOMES = ['src/store/', 'src/db/'];

/**
 * Files (or folders, ending in `/`) that may run statements of their own, each with its reason.
 * None: even the connection-level statements (the readiness probe, the auth listener's LISTEN and
 * heartbeat, the rate limiter's counters on its own pool) and the identity wing's have their store
 * modules. A file that truly must query would be named here with its reason.
 */
const ALLOWED: Record<string, string> = {};

/** Methods of an EntityManager that read or write the database (or queue a write for the flush). */
const EM_QUERIES = new Set([
  'find',
  'findOne',
  'findOneOrFail',
  'findAll',
  'findAndCount',
  'findByCursor',
  'count',
  'nativeInsert',
  'nativeUpdate',
  'nativeDelete',
  'insert',
  'insertMany',
  'upsert',
  'upsertMany',
  'execute',
  'persist',
  'persistAndFlush',
  'flush',
  'create',
  'remove',
  'removeAndFlush',
  'getReference',
  'refresh',
  'populate',
  'lock',
  'getRepository',
  'createQueryBuilder',
  'qb',
  'getKnex',
  // The unit of work: transactions, forks and rows made entities go through store/unitOfWork.ts.
  'transactional',
  'fork',
  'map',
]);

/** Names an EntityManager goes by here: `em`, `tx`, `trx`, `ctx.em`, `this.em`, `orm.em`, `this.tx`. */
const EM_NAME = /^(em|tx|trx|entityManager)$/;

/** Methods so particular to the ORM or node-postgres that any receiver counts. */
const ANY_RECEIVER = new Set([
  'nativeInsert',
  'nativeUpdate',
  'nativeDelete',
  'findOneOrFail',
  'findAndCount',
  'persistAndFlush',
  'removeAndFlush',
  'createQueryBuilder',
  'getKnex',
  // node-postgres: a pool's or a client's statement.
  'query',
]);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** The last name of a receiver (`ctx.em` → `em`, `this.tx` → `tx`, `em` → `em`), or null for anything else. */
function lastName(node: ts.Expression): string | null {
  if (ts.isIdentifier(node)) return node.text;
  if (ts.isPropertyAccessExpression(node)) return node.name.text;
  return null;
}

/** Each statement call in a file's text (comments and strings do not count): its line and what it is. */
function statementCalls(file: string, text = readFileSync(file, 'utf8')): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const at = (node: ts.Node) => source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
  const visit = (node: ts.Node) => {
    if (ts.isCallExpression(node)) {
      const callee = node.expression;
      if (ts.isIdentifier(callee) && (callee.text === 'sql' || callee.text === 'sqlRelaxed')) found.push(`${at(node)}: ${callee.text}()`);
      if (ts.isPropertyAccessExpression(callee)) {
        const method = callee.name.text;
        const receiver = lastName(callee.expression);
        const onEm = receiver !== null && EM_NAME.test(receiver) && EM_QUERIES.has(method);
        const onConnection =
          method === 'execute' && ts.isCallExpression(callee.expression) && lastName(callee.expression.expression) === 'getConnection';
        if (onEm || onConnection || ANY_RECEIVER.has(method)) found.push(`${at(node)}: ${callee.getText(source)}()`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

const rel = (file: string) => relative(ROOT, file).split(sep).join('/');
const allowed = (path: string) =>
  Object.keys(ALLOWED).some((prefix) => path === prefix || (prefix.endsWith('/') && path.startsWith(prefix)));

describe('statements live in src/store/', () => {
  const files = sourceFiles(SRC).map((file) => ({ file, path: rel(file) }));

  it('no sql(), sqlRelaxed(), EntityManager query or pg query outside src/store/ and src/db/ (but the allow-list)', () => {
    const outside = files
      .filter(({ path }) => !HOMES.some((home) => path.startsWith(home)) && !allowed(path))
      .flatMap(({ file, path }) => statementCalls(file).map((call) => `${path}:${call}`));
    expect(outside).toEqual([]);
  });

  it('the scan sees statements where they are (it would catch one that moved out)', () => {
    const store = files.filter(({ path }) => path.startsWith('src/store/')).flatMap(({ file }) => statementCalls(file));
    expect(store.some((call) => call.endsWith('sql()'))).toBe(true);
    expect(store.some((call) => /\bem\.find(One)?\(\)$/.test(call))).toBe(true);
  });

  it('the scan knows a statement from what only looks like one', () => {
    const code = [
      "await sql<Row>(ctx.db, 'select 1');",
      "await sqlRelaxed(db, 'insert into t values (1)');",
      'const hook = await em.findOne(Webhook, { id });',
      'const n = await ctx.em.count(Member, { email });',
      'tx.persist(entity); await this.em.flush();',
      'em.create(Organization, data); em.remove(entry); trx.nativeDelete(Upload, { id });',
      "await pool.query('select 1'); orm.em.createQueryBuilder(Article);",
      "await em.getConnection().execute('select 1');",
      // Not statements: arrays, other objects' methods, comments, strings.
      'const first = rows.find((r) => r.id === id); Object.create(ctx); this.flush(); activity.count(ws);',
      "// sql(db, 'select 1') and em.find(X) in a comment\nconst text = 'em.find(Webhook)';",
    ].join('\n');
    expect(statementCalls('sample.ts', code)).toEqual([
      '1: sql()',
      '2: sqlRelaxed()',
      '3: em.findOne()',
      '4: ctx.em.count()',
      '5: tx.persist()',
      '5: this.em.flush()',
      '6: em.create()',
      '6: em.remove()',
      '6: trx.nativeDelete()',
      '7: pool.query()',
      '7: orm.em.createQueryBuilder()',
      '8: em.getConnection().execute()',
    ]);
  });
});
