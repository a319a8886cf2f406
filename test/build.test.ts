// The production build: `npm run build` into a temporary directory laid out like the Docker image
// (package.json, dist/, node_modules beside them and no sources), then the compiled entry started with
// plain node, no loader, answering /readyz and using the files it reads beside its modules.
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serviceClient } from './support/app.js';
import { tenant } from './support/factories.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'wks-build-'));
const dist = join(dir, 'dist');
let service: ChildProcess | undefined;

/** Runs a command to its end; rejects with its output when it fails. */
function run(command: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    child.once('exit', (code) =>
      code === 0 ? resolve(output) : reject(new Error(`${command} ${args.join(' ')} exited ${code}:\n${output}`)),
    );
  });
}

beforeAll(async () => {
  await run('npm', ['run', 'build', '--', '--out-dir', dist]);
  copyFileSync(join(ROOT, 'package.json'), join(dir, 'package.json')); // "type": "module" for dist/**/*.js
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
}, 180_000);

afterAll(async () => {
  if (service && service.exitCode === null) {
    const exited = new Promise((resolve) => service!.once('exit', resolve));
    service.kill('SIGTERM');
    await exited;
  }
  rmSync(dir, { recursive: true, force: true });
});

describe('npm run build', () => {
  it('compiles the entry points and copies every file read at run time beside them', () => {
    const compiled = readdirSync(dist, { recursive: true }).map(String);
    for (const file of ['src/main.js', 'scripts/cluster.js', 'scripts/backfill-embeddings.js', 'src/openapi/parse.js', 'build-info.json']) {
      expect(compiled).toContain(file);
    }
    for (const file of ['src/openapi/specThread.mjs', 'src/search/embedThread.mjs']) expect(compiled).toContain(file);
    // The review console's folder sits beside src/ in the build as in the sources, copied as it is.
    const consoleFiles = readdirSync(join(ROOT, 'console')).filter((f) => /\.(js|css)$/.test(f));
    expect(compiled.filter((f) => f.startsWith('console/')).sort()).toEqual(consoleFiles.map((f) => `console/${f}`).sort());
    const operations = readdirSync(join(ROOT, 'schema/operations'), { recursive: true }).filter((f) => String(f).endsWith('.graphql'));
    expect(compiled.filter((f) => f.startsWith('schema/operations/') && f.endsWith('.graphql'))).toHaveLength(operations.length);
    expect(compiled.some((f) => f.startsWith('test/') || f.endsWith('.ts'))).toBe(false);
  });

  it('starts with plain node from the image layout, answers /readyz, and runs the compiled spec worker', async () => {
    const adminToken = `adm_build_${Date.now()}_0123456789abcdef`;
    service = spawn(process.execPath, ['--enable-source-maps', 'dist/src/main.js'], {
      cwd: dir,
      env: {
        ...process.env,
        PORT: '0',
        DATA_DIR: join(dir, 'data'),
        ADMIN_TOKEN: adminToken,
        GRAPHQL_EXPLORER: 'graphiql',
        EMBEDDINGS: 'off',
        WEBHOOK_DISPATCHER: 'off',
        NODE_OPTIONS: '', // no loader inherited from the test runner
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no "listening on" within 90 s:\n${output}`)), 90_000);
      const onData = (chunk: Buffer) => {
        output = (output + chunk.toString()).slice(-20_000);
        const match = /listening on (http:\/\/[\d.]+:\d+)/.exec(output);
        if (match) {
          clearTimeout(timer);
          resolve(match[1]);
        }
      };
      service!.stdout!.on('data', onData);
      service!.stderr!.on('data', onData);
      service!.once('exit', (code) => reject(new Error(`the compiled service exited with ${code}:\n${output}`)));
    });

    const ready = await fetch(`${url}/readyz`);
    expect(ready.status, await ready.text()).toBe(200);
    expect((await fetch(`${url}/graphql/explorer/assets/graphiql.js`)).status).toBe(200);
    // The review console's own files are copied into dist: the page and every asset it links answer.
    const consolePage = await fetch(`${url}/console`);
    expect(consolePage.status).toBe(200);
    const assets = [...(await consolePage.text()).matchAll(/(?:src|href)="(\/console\/assets\/[^"]+)"/g)].map((m) => m[1]);
    expect(assets.length).toBeGreaterThan(0);
    for (const asset of assets) expect((await fetch(`${url}${asset}`)).status, asset).toBe(200);

    // The REST rows (documents from dist/schema/operations) and the spec worker (dist/src/openapi/parse.js).
    const client = await serviceClient(url, adminToken);
    const t = await tenant(client);
    const spec = {
      openapi: '3.0.3',
      info: { title: 'Build check', version: '1' },
      paths: { '/ping': { get: { operationId: 'ping', summary: 'Ping', responses: { '200': { description: 'pong' } } } } },
    };
    const attached = await client.api('PUT', '/api/v1/workspaces/-/openapi', { key: t.key, body: { spec } });
    expect(attached.status, attached.text).toBe(200);
  }, 120_000);
});
