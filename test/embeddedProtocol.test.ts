import { readFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startEmbedded, type EmbeddedDatabase } from '../src/db/embedded.js';
import { pgClientConfig } from '../src/db/orm.js';

// The embedded database's socket: one PGlite session behind every connection. Each connection's
// round of the extended protocol (Parse, Bind, Describe, Execute, Sync) runs whole, so statements
// keep their parameters beside other connections; named statements are shared by the session; a
// transaction has the session to itself until it ends, and one left open by a connection that went
// away is rolled back. The stock socket server ran each message on its own, so two connections'
// rounds interleaved and one's Bind met the other's statement.
describe.skipIf(Boolean(process.env.DATABASE_URL))('the embedded database socket', () => {
  let db: EmbeddedDatabase;
  const clients: pg.Client[] = [];
  const connect = async () => {
    const client = new pg.Client(pgClientConfig(db.connection));
    client.on('error', () => undefined);
    await client.connect();
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    db = await startEmbedded({ loadDataDir: new Blob([readFileSync(inject('pgliteDump'))]) });
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.end().catch(() => undefined)));
    await db?.close();
  });

  it("answers every connection's parameterised statements with its own values while eight connections send at once", async () => {
    const eight = await Promise.all(Array.from({ length: 8 }, connect));
    // Half the statements carry a 256 KiB value: it reaches the socket in several reads, and the
    // round must not be split by another connection's whole round meanwhile. Each statement's text
    // differs, so a Bind that met another connection's statement would answer with its numbers.
    const big = (i: number) => (i % 2 ? 'x'.repeat(256 * 1024 + i) : `v${i}`);
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        eight[i % 8].query<{ n: number; s: number }>(`select $1::int * ${i} as n, length($2::text) as s`, [i, big(i)]),
      ),
    );
    answers.forEach((answer, i) => expect(answer.rows).toEqual([{ n: i * i, s: big(i).length }]));
  });

  it('shares a named statement between connections, and refuses the name for other text as a server would', async () => {
    const [a, b, c] = await Promise.all([connect(), connect(), connect()]);
    const named = (text: string, value: number) => ({ name: 'wks_test_named', text, values: [value] });
    expect((await a.query(named('select $1::int + 1 as n', 1))).rows).toEqual([{ n: 2 }]);
    // b's driver prepares the name again: the session holds it already, so the socket answers for it.
    expect((await b.query(named('select $1::int + 1 as n', 41))).rows).toEqual([{ n: 42 }]);
    expect((await a.query(named('select $1::int + 1 as n', 9))).rows).toEqual([{ n: 10 }]);
    await expect(c.query(named('select $1::int - 1 as n', 1))).rejects.toMatchObject({ code: '42P05' });
    // The failed round left c and the others usable.
    expect((await c.query('select $1::int as n', [7])).rows).toEqual([{ n: 7 }]);
    expect((await b.query(named('select $1::int + 1 as n', 2))).rows).toEqual([{ n: 3 }]);
    // A value that merely holds the word (the ORM inlines values into simple queries) drops nothing…
    await c.query("select 'discard all' as s");
    const d = await connect();
    expect((await d.query(named('select $1::int + 1 as n', 3))).rows).toEqual([{ n: 4 }]);
    // …DEALLOCATE does, of one name or of all: the next connection's Parse reaches the session again.
    await c.query('deallocate wks_test_named');
    const e = await connect();
    expect((await e.query(named('select $1::int + 1 as n', 4))).rows).toEqual([{ n: 5 }]);
    await c.query('/* all of them */ deallocate all');
    const f = await connect();
    expect((await f.query(named('select $1::int + 1 as n', 5))).rows).toEqual([{ n: 6 }]);
  });

  it("answers a bad parameter with the statement's error and goes on serving that connection and the others", async () => {
    const [a, b] = await Promise.all([connect(), connect()]);
    const [bad, good] = await Promise.allSettled([a.query('select $1::int as n', ['not a number']), b.query('select $1::int as n', [5])]);
    expect(bad).toMatchObject({ status: 'rejected', reason: { code: '22P02' } });
    expect(good).toMatchObject({ status: 'fulfilled', value: { rows: [{ n: 5 }] } });
    expect((await a.query('select $1::int as n', [6])).rows).toEqual([{ n: 6 }]);
  });

  it('gives an open transaction the session to itself: another connection waits and sees only what it committed', async () => {
    const [a, b] = await Promise.all([connect(), connect()]);
    await a.query('create table if not exists wks_test_tx (n int)');
    await a.query('begin');
    await a.query('insert into wks_test_tx values ($1)', [1]);
    let seen: number | null = null;
    const reading = b.query<{ count: number }>('select count(*)::int as count from wks_test_tx').then((r) => (seen = r.rows[0].count));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(seen).toBeNull(); // still waiting for a's transaction
    await a.query('insert into wks_test_tx values ($1)', [2]);
    await a.query('commit');
    await reading;
    expect(seen).toBe(2);
  });

  it('rolls back the transaction of a connection that went away, then serves the connections that waited', async () => {
    const [a, b] = await Promise.all([connect(), connect()]);
    await a.query('create table if not exists wks_test_gone (n int)');
    await a.query('begin');
    await a.query('insert into wks_test_gone values ($1)', [1]);
    const reading = b.query<{ count: number }>('select count(*)::int as count from wks_test_gone');
    await new Promise((resolve) => setTimeout(resolve, 100));
    (a as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
    expect((await reading).rows).toEqual([{ count: 0 }]);
    const c = await connect();
    expect((await c.query('select count(*)::int as count from wks_test_gone')).rows).toEqual([{ count: 0 }]);
  });

  it('vacuums and analyses the tables whose rows changed once no statement has come for a second, as autovacuum would', async () => {
    const a = await connect();
    // Two tables past autovacuum's thresholds, the second with a GIN index (its pending list is merged first).
    await a.query('create table wks_test_vacuum (id int primary key, n int)');
    await a.query('insert into wks_test_vacuum select g, 0 from generate_series(1, 500) g');
    for (let i = 0; i < 3; i++) await a.query('update wks_test_vacuum set n = n + 1');
    await a.query('create table wks_test_vacuum_gin (id int primary key, tags text[])');
    await a.query('create index on wks_test_vacuum_gin using gin (tags)');
    await a.query("insert into wks_test_vacuum_gin select g, array['t' || g % 7] from generate_series(1, 300) g");
    await a.query("update wks_test_vacuum_gin set tags = tags || array['u']");
    const stats = () =>
      a.query<{ table: string; vacuumed: boolean; analysed: boolean; dead: number }>(
        `select relname as table, last_vacuum is not null as vacuumed, last_analyze is not null as analysed, n_dead_tup::int as dead
           from pg_stat_user_tables where relname like 'wks\\_test\\_vacuum%' order by relname`,
      );
    expect((await stats()).rows.map((r) => [r.vacuumed, r.analysed])).toEqual([
      [false, false],
      [false, false],
    ]);
    // One step per idle second (each table's vacuum, then its analysis; the GIN index's pending list
    // before the second's vacuum): no statement is sent meanwhile, so the idle work goes on by itself.
    await new Promise((resolve) => setTimeout(resolve, 7500));
    expect((await stats()).rows).toEqual([
      { table: 'wks_test_vacuum', vacuumed: true, analysed: true, dead: 0 },
      { table: 'wks_test_vacuum_gin', vacuumed: true, analysed: true, dead: 0 },
    ]);
    // The planner now knows the table's size (it had no statistics of rows written after its creation),
    // from a sample of 3,000 rows: statistics target 10, so at most 11 histogram bounds.
    const { rows } = await a.query<{ reltuples: number; bounds: number }>(
      `select c.reltuples::int as reltuples, (select cardinality(s.histogram_bounds::text::int[]) from pg_stats s
          where s.tablename = 'wks_test_vacuum' and s.attname = 'id')::int as bounds
         from pg_class c where c.relname = 'wks_test_vacuum'`,
    );
    expect(rows[0]).toEqual({ reltuples: 500, bounds: 11 });
  });

  it('closes a connection that sends what is not the protocol, and goes on serving the others', async () => {
    const a = await connect();
    for (const bytes of [
      [0, 0, 0, 2, 0, 0, 0, 0], // a start-up length shorter than its own header
      [0, 0, 0, 8, 0x12, 0x34, 0x56, 0x78], // an unknown start-up code
    ]) {
      const socket = createConnection(join(db.connection.host!, '.s.PGSQL.5432'));
      const closed = new Promise((resolve) => socket.once('close', resolve));
      socket.on('error', () => undefined);
      socket.write(Buffer.from(bytes));
      await closed;
    }
    // After a proper start-up, a message of no type a client sends (PGlite would take a zero byte for a start-up packet).
    const socket = createConnection(join(db.connection.host!, '.s.PGSQL.5432'));
    socket.on('error', () => undefined);
    const closed = new Promise((resolve) => socket.once('close', resolve));
    const params = Buffer.from('user\0postgres\0database\0postgres\0\0');
    const startup = Buffer.alloc(8 + params.length);
    startup.writeInt32BE(startup.length, 0);
    startup.writeInt32BE(196608, 4);
    params.copy(startup, 8);
    socket.write(startup);
    await new Promise((resolve) => socket.once('data', resolve)); // AuthenticationOk … ReadyForQuery
    socket.write(Buffer.from([0, 0, 0, 0, 4]));
    await closed;
    expect((await a.query('select $1::int as n', [1])).rows).toEqual([{ n: 1 }]);
  });

  it('runs what a connection sent before it said Terminate: a COMMIT followed at once by Terminate commits', async () => {
    const [a, b] = await Promise.all([connect(), connect()]);
    await a.query('create table wks_test_end (n int)');
    await a.query('begin');
    await a.query('insert into wks_test_end values (1)');
    const committing = a.query('commit').catch(() => undefined);
    await a.end();
    await committing;
    expect((await b.query('select count(*)::int as count from wks_test_end')).rows).toEqual([{ count: 1 }]);
  });
  it('serves a small statement before large ones queued ahead of it, passing each large one over at most four times', async () => {
    const [a, big, ...small] = await Promise.all(Array.from({ length: 8 }, connect));
    await a.query('create sequence wks_test_order');
    // Each statement takes the next number when it runs: the numbers give the order they ran in.
    const at = (client: pg.Client, value?: string) =>
      client
        .query<{ n: number }>(
          value ? 'select nextval($$wks_test_order$$)::int as n, length($1::text)' : 'select nextval($$wks_test_order$$)::int as n',
          value ? [value] : [],
        )
        .then((r) => r.rows[0].n);
    const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    // The session is busy; meanwhile a large statement (an upload's part) arrives, then six small ones.
    const busy = a.query('select pg_sleep(2)');
    await pause(100);
    const large = at(big, 'x'.repeat(64 * 1024));
    await pause(30);
    const smalls: Promise<number>[] = [];
    for (const client of small) {
      smalls.push(at(client));
      await pause(30);
    }
    await busy;
    const [largeAt, ...smallAt] = await Promise.all([large, ...smalls]);
    // The first four small ones went ahead of the large one; then it ran, before the fifth and sixth.
    expect({ largeAt, smallAt }).toEqual({ largeAt: 5, smallAt: [1, 2, 3, 4, 6, 7] });
  });
});
