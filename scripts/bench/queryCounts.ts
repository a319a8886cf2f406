/**
 * Counts SQL statements per request for the changelog list and the article tree at two data sizes,
 * on an in-process server: every statement any node-postgres client of this process sends (the
 * ORM's and the service's raw ones alike), except the rate limiter's leases, which come and go
 * with traffic rather than with the request.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import pino from 'pino';
import { startServer } from '../../src/server.js';
import { Tenant } from './tenant.js';

const COUNTED = [
  ['article tree', '/articles'],
  ['changelog list', '/changelog?limit=50'],
] as const;

/** Counts the statements node-postgres clients send while `work` runs (rate-limit leases excepted). */
async function counting<T>(work: (count: () => number) => Promise<T>): Promise<T> {
  let queries = 0;
  const original = Object.getOwnPropertyDescriptor(pg.Client.prototype, 'query')!;
  const send = original.value as (this: pg.Client, ...args: unknown[]) => unknown;
  function query(this: pg.Client, ...args: unknown[]) {
    const text = typeof args[0] === 'string' ? args[0] : ((args[0] as { text?: string } | undefined)?.text ?? '');
    if (!text.includes('rate_limit_counters')) queries++;
    return send.apply(this, args);
  }
  Object.defineProperty(pg.Client.prototype, 'query', { ...original, value: query });
  try {
    return await work(() => queries);
  } finally {
    Object.defineProperty(pg.Client.prototype, 'query', original);
  }
}

/** A workspace with 5 sections, `size` articles and `size` published changelog entries; its Bearer header. */
async function seedSmall(url: string, admin: string, size: number): Promise<Record<string, string>> {
  const tenant = await Tenant.create(url, admin, 'Count', 'pro');
  const { auth } = await tenant.workspace('C', [
    'article.read',
    'article.create',
    'section.create',
    'changelog.read',
    'changelog.update',
    'changelog.publish',
  ]);
  const send = (path: string, body: unknown) =>
    fetch(`${url}/api/v1/workspaces/-${path}`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }).then((r) => r.arrayBuffer());
  for (let s = 0; s < 5; s++) await send('/sections', { label: `S${s}`, key: `s${s}` });
  for (let i = 0; i < size; i++) {
    await send('/articles', { title: `A${i}`, section: `s${i % 5}`, markdown: 'x' });
    await send('/changelog', { title: `C${i}`, markdown: 'x', status: 'published', tags: [], published_at: null });
  }
  return auth;
}

/** Statements per request for the lists at 5 and at 50 items: `{ "article tree (5 vs 50 items)": [2, 2], … }`. */
export async function countQueries(databaseUrl: string | undefined, admin: string): Promise<Record<string, number[]>> {
  // Embedded: a fresh data directory of its own (the ORM and the statement pool reach PGlite through node-postgres too).
  const dataDir = databaseUrl ? undefined : mkdtempSync(join(tmpdir(), 'wks-count-'));
  const server = await startServer({
    port: 0,
    host: '127.0.0.1',
    databaseUrl,
    dataDir,
    adminToken: admin,
    logger: pino({ level: 'silent' }),
    embeddingWorker: false,
    webhookDispatcher: false,
    rateLimit: { max: 1e9, windowSeconds: 60 },
  });
  const out: Record<string, number[]> = {};
  try {
    await counting(async (count) => {
      for (const size of [5, 50]) {
        const auth = await seedSmall(server.url, admin, size);
        for (const [name, path] of COUNTED) {
          const get = () => fetch(`${server.url}/api/v1/workspaces/-${path}`, { headers: auth }).then((r) => r.arrayBuffer());
          await get(); // warm (key lookup's lastUsedAt write)
          const before = count();
          await get();
          (out[`${name} (5 vs 50 items)`] ??= []).push(count() - before);
        }
      }
    });
  } finally {
    await server.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }
  return out;
}
