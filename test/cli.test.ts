import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { wks } from './support/cli.js';
import { redeemSignInLink } from './support/signIn.js';
import { initCommand } from '../src/cli/init.js';

// Each CLI process compiles its sources at start (2–4 s on two busy cores); tests run several.
vi.setConfig({ testTimeout: 120_000 });

let app: TestApp;
let env: Record<string, string>;
const dir = mkdtempSync(join(tmpdir(), 'wks-cli-'));

beforeAll(async () => {
  app = await startTestApp();
  env = { WKS_URL: app.url, WKS_ADMIN_TOKEN: app.adminToken };
});
afterAll(() => app?.close());

function petstore(paths: string[]) {
  return {
    openapi: '3.0.3',
    info: { title: 'Petstore', version: '1.0.0' },
    paths: Object.fromEntries(
      paths.map((p) => [
        p,
        {
          get: {
            operationId: `get${p.replace(/\W/g, '_')}`,
            summary: `Get ${p}`,
            tags: ['pets'],
            responses: { 200: { description: 'OK' } },
          },
        },
      ]),
    ),
  };
}

describe('wks init', () => {
  it('--json prints exactly the ids and a key that works on REST', async () => {
    const run = await wks(['init', '--json', '--org-name', 'Acme', '--plan', 'pro', '--workspace-name', 'Docs'], env);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout);
    expect(Object.keys(out).sort()).toEqual(['key', 'memberId', 'organizationId', 'workspaceId']);
    expect(out.key).toMatch(/^svc_pat_/);
    const sections = await app.api('GET', '/api/v1/workspaces/-/sections', { key: out.key });
    expect(sections.status).toBe(200);
    const note = await app.api('PUT', `/api/v1/workspaces/${out.workspaceId}/memory/note`, {
      key: out.key,
      body: { path: 'cli/hello', body: 'hi', kind: 'note', links: [], tags: [] },
    });
    expect(note.status).toBe(200);
    console.log(`wks init --json took ${run.ms} ms (process start included)`);
  });

  it('prints the key once, a curl line that works and the MCP config (defaults without a terminal)', async () => {
    const run = await wks(['init'], env);
    expect(run.code).toBe(0);
    const key = /svc_pat_\S+/.exec(run.stdout)![0];
    expect(run.stdout.split(key).length - 1).toBe(3); // the key line, the curl line and the MCP env
    const curl = /curl -s '([^']+)' -H 'authorization: Bearer (\S+)'/.exec(run.stdout)!;
    expect(curl[1]).toBe(`${app.url}/api/v1/workspaces/-/sections`);
    const res = await fetch(curl[1], { headers: { authorization: `Bearer ${curl[2]}` } });
    expect(res.status).toBe(200);
    const mcp = JSON.parse(run.stdout.slice(run.stdout.indexOf('{')));
    expect(mcp.mcpServers.workspace.args).toContain(`${app.url}/mcp`);
    expect(mcp.mcpServers.workspace.env.WKS_KEY).toBe(key);
    expect(run.stdout).toContain('My organization');
  });

  it("prints how its member signs in to the console: the README's command names that member, and the printed line works", async () => {
    const run = await wks(['init'], env);
    expect(run.code, run.stderr).toBe(0);
    const line = /npm run wks -- (members login-link (\S+) --org (\S+))/.exec(run.stdout)!;
    expect(line[2]).toBe(initCommand.options.email.default);
    // The README's first steps: `wks init`, then a sign-in link for the member it made.
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const documented = [...readme.matchAll(/members login-link ([^\s`]+)/g)].map((m) => m[1]);
    expect(documented.length).toBeGreaterThan(0);
    for (const email of documented) expect(email).toBe(initCommand.options.email.default);
    const link = await wks(line[1].split(' '), env);
    expect(link.code, link.stderr).toBe(0);
    const token = /#link=(\S+)/.exec(link.stdout)![1];
    expect((await redeemSignInLink(app.url, token)).cookie).toMatch(/^wks_session=/);
  });

  it('narrow permissions are checked before anything is created, and honoured', async () => {
    const typo = await wks(['init', '--permissions', 'memory.raed'], env);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('unknown permission(s): memory.raed');
    const run = await wks(['init', '--json', '--permissions', 'memory.read', '--role', 'viewer'], env);
    const { key } = JSON.parse(run.stdout);
    expect((await app.api('GET', '/api/v1/workspaces/-/memory', { key })).status).toBe(200);
    expect((await app.api('GET', '/api/v1/workspaces/-/sections', { key })).status).toBe(403);
  });

  it('a bad admin token fails with exit 1 and says so', async () => {
    const run = await wks(['init', '--json', '--admin-token', 'adm_wrong'], { WKS_URL: app.url });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/unauthorized: .*admin-token/);
  });

  it('a missing token or unreachable service are clear errors', async () => {
    const none = await wks(['init'], { WKS_URL: app.url });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('admin token is needed');
    const down = await wks(['orgs', 'create', '--name', 'x', '--url', 'http://127.0.0.1:9'], { WKS_ADMIN_TOKEN: 'x' });
    expect(down.code).toBe(1);
    expect(down.stderr).toContain('cannot reach the service at http://127.0.0.1:9');
  });
});

describe('usage', () => {
  it('unknown command: help on stderr, exit 2; no command: the same', async () => {
    for (const args of [['frobnicate'], [], ['keys', 'rotate']]) {
      const run = await wks(args, env);
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('Usage: wks');
    }
  });

  it('--help works on every command and group, exit 0', async () => {
    const overview = await wks(['--help']);
    expect(overview.code).toBe(0);
    const names = [...overview.stdout.matchAll(/^ {2}([a-z]+(?: [a-z]+)?) {2,}/gm)].map((m) => m[1].trim());
    expect(names).toEqual(expect.arrayContaining(['init', 'keys create', 'spec attach', 'embeddings backfill', 'export', 'import']));
    // Four processes at a time: each start compiles the CLI, and the machine has two cores.
    const runs = [];
    const all = [...names.map((n) => [...n.split(' '), '--help']), ['keys', '--help']];
    for (let i = 0; i < all.length; i += 4) runs.push(...(await Promise.all(all.slice(i, i + 4).map((args) => wks(args)))));
    runs.forEach((run, i) => {
      expect(run.code, names[i] ?? 'keys').toBe(0);
      expect(run.stdout).toContain(`Usage: wks ${names[i] ?? 'keys'}`);
    });
    expect(runs.at(-1)!.stdout).toContain('wks keys revoke <key-id>');
  }, 180_000);

  it('an unknown option is a usage error naming it', async () => {
    const run = await wks(['orgs', 'create', '--nmae', 'x'], env);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("Unknown option '--nmae'");
  });
});

describe('admin commands', () => {
  it('members login-link: prints a single-use sign-in link (token in the fragment) that signs the member in once', async () => {
    const org = JSON.parse((await wks(['orgs', 'create', '--name', 'Gamma', '--json'], env)).stdout);
    await wks(['members', 'create', '--org', org.id, '--email', 'Cy@Gamma.test', '--role', 'editor', '--json'], env);
    const run = await wks(['members', 'login-link', 'cy@gamma.test', '--org', org.id], env);
    expect(run.code, run.stderr).toBe(0);
    const [url, about] = run.stdout.trim().split('\n');
    expect(url).toMatch(new RegExp(`^${app.url}/console/sign-in#link=wks_link_[\\w-]{43}$`));
    expect(about).toMatch(/^for cy@gamma\.test, single use, valid until /);
    const token = url.split('#link=')[1];
    const signedIn = await redeemSignInLink(app.url, token);
    expect(signedIn.cookie).toMatch(/^wks_session=/);
    await expect(redeemSignInLink(app.url, token)).rejects.toMatchObject({ status: 400 });
    const unknown = await wks(['members', 'login-link', 'nobody@gamma.test', '--org', org.id], env);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toMatch(/not found/i);
    const usage = await wks(['members', 'login-link'], env);
    expect(usage.code).toBe(2);
  });

  it('orgs, workspaces, members and keys: create, use, revoke', async () => {
    const org = JSON.parse((await wks(['orgs', 'create', '--name', 'Beta', '--plan', 'enterprise', '--json'], env)).stdout);
    expect(org).toMatchObject({ name: 'Beta', plan: 'enterprise', requireTwoFactor: false });
    const ws = JSON.parse((await wks(['workspaces', 'create', '--org', org.id, '--name', 'Handbook', '--json'], env)).stdout);
    expect(ws).toMatchObject({ name: 'Handbook', organizationId: org.id });
    const member = JSON.parse(
      (await wks(['members', 'create', '--org', org.id, '--email', 'Bo@Beta.test', '--role', 'editor', '--json'], env)).stdout,
    );
    expect(member).toMatchObject({ email: 'bo@beta.test', role: 'editor' });
    const created = await wks(
      ['keys', 'create', '--member', member.id, '--workspace', ws.id, '--permissions', 'changelog.read', '--json'],
      env,
    );
    const key = JSON.parse(created.stdout);
    expect(key).toMatchObject({ workspaceId: ws.id, permissions: ['changelog.read'] });
    expect((await app.api('GET', '/api/v1/workspaces/-/changelog', { key: key.key })).status).toBe(200);

    const table = await wks(['keys', 'revoke', key.id], env);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/revokedAt\s+\d{4}-/);
    expect((await app.api('GET', '/api/v1/workspaces/-/changelog', { key: key.key })).status).toBe(401);

    const updated = JSON.parse((await wks(['orgs', 'update', org.id, '--plan', 'free', '--json'], env)).stdout);
    expect(updated.plan).toBe('free');
  });

  it('service errors come back with their code and exit 1', async () => {
    const run = await wks(['workspaces', 'create', '--org', '00000000-0000-0000-0000-000000000000', '--name', 'x'], env);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('not_found: Organization was not found');
    const missing = await wks(['workspaces', 'create', '--name', 'x'], env);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--org is required');
  });

  it('list commands page through the admin read model: filters, --limit, --json, never a secret', async () => {
    const made = JSON.parse((await wks(['init', '--json', '--org-name', 'Listed'], env)).stdout);
    const second = JSON.parse((await wks(['keys', 'create', '--member', made.memberId, '--name', 'second', '--json'], env)).stdout);
    const keys = await wks(['keys', 'list', '--org', made.organizationId, '--json'], env);
    expect(keys.code, keys.stderr).toBe(0);
    const listed = JSON.parse(keys.stdout) as { id: string; name: string }[];
    expect(listed.map((k) => k.name)).toEqual(['wks-cli', 'second']);
    expect(keys.stdout).not.toContain(made.key);
    expect(keys.stdout).not.toContain(second.key);
    expect((await wks(['keys', 'revoke', second.id], env)).code).toBe(0);
    const revoked = JSON.parse((await wks(['keys', 'list', '--org', made.organizationId, '--revoked', '--json'], env)).stdout);
    expect(revoked.map((k: { id: string }) => k.id)).toEqual([second.id]);

    const members = await wks(['members', 'list', '--org', made.organizationId], env);
    expect(members.stdout).toMatch(/^id\s+email\s+role/m);
    expect(members.stdout).toContain(made.memberId);
    expect(members.stdout).toContain('1 of 1');
    const workspaces = JSON.parse((await wks(['workspaces', 'list', '--org', made.organizationId, '--json'], env)).stdout);
    expect(workspaces.map((w: { id: string }) => w.id)).toEqual([made.workspaceId]);
    const orgs = await wks(['orgs', 'list', '--limit', '1', '--json'], env);
    expect(JSON.parse(orgs.stdout)).toHaveLength(1);
    const bad = await wks(['orgs', 'list', '--limit', '0'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--limit must be a positive integer');
  }, 120_000); // nine CLI processes, each compiling its sources at start
});

describe('wks spec', () => {
  it('attach from a file prints the plan; sync with a new version shows what changes', async () => {
    const { key } = JSON.parse((await wks(['init', '--json', '--permissions', 'openapi.read,openapi.manage'], env)).stdout);
    const v1 = join(dir, 'v1.json');
    writeFileSync(v1, JSON.stringify(petstore(['/pets', '/owners'])));
    const attach = await wks(['spec', 'attach', '-', v1, '--key', key], env);
    expect(attach.code).toBe(0);
    expect(attach.stdout).toContain('Petstore 1.0.0');
    expect(attach.stdout).toMatch(/^added\s+get_pets/m);
    expect(attach.stdout).toContain('2 added, 0 changed, 0 removed, 0 unchanged, 0 drifted');

    const same = await wks(['spec', 'sync', '-', '--json'], { ...env, WKS_KEY: key });
    expect(JSON.parse(same.stdout)).toMatchObject({ added: [], changed: [], removed: [], unchanged: 2 });

    const v2 = join(dir, 'v2.yaml');
    writeFileSync(v2, JSON.stringify(petstore(['/pets', '/vets'])));
    const sync = await wks(['spec', 'sync', '-', v2], { ...env, WKS_KEY: key });
    expect(sync.code).toBe(0);
    expect(sync.stdout).toMatch(/^added\s+get_vets/m);
    expect(sync.stdout).toMatch(/^removed\s+get_owners/m);

    const status = await wks(['spec', 'status', '-', '--json'], { ...env, WKS_KEY: key });
    expect(JSON.parse(status.stdout)).toMatchObject({ operationCount: 2, pageCount: 2 });
  });

  it('needs an agent key; an invalid spec is the service 400 with its findings', async () => {
    const run = await wks(['spec', 'sync', '-'], env);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('an agent key is needed');
    const { key } = JSON.parse((await wks(['init', '--json'], env)).stdout);
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ openapi: '3.0.3', info: { title: 'x' }, paths: { '/x': { get: { responses: 'nope' } } } }));
    const invalid = await wks(['spec', 'attach', '-', bad, '--key', key], env);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toContain('invalid_request (400)');
  });
});

describe('wks embeddings backfill', () => {
  it('runs on the database itself: a fresh embedded directory, or the suite PostgreSQL with content to embed', async () => {
    if (!process.env.DATABASE_URL) {
      const run = await wks(['embeddings', 'backfill', '--json', '--data-dir', join(dir, 'data')], { EMBEDDINGS: 'off' });
      expect(run.code).toBe(0);
      expect(JSON.parse(run.stdout)).toMatchObject({ queued: 0, embedded: 0 });
      expect(run.stderr).toContain('embedding: 0 done in');
      return;
    }
    const { key, workspaceId } = JSON.parse((await wks(['init', '--json'], env)).stdout);
    for (const title of ['Faster search', 'Dark mode'])
      await app.api('POST', '/api/v1/workspaces/-/changelog', {
        key,
        body: { title, markdown: `${title} shipped.`, status: 'published', tags: [], published_at: null },
      });
    const run = await wks(['embeddings', 'backfill', '--workspace', workspaceId, '--json'], { DATABASE_URL: process.env.DATABASE_URL });
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ queued: 2, embedded: 2, model: 'use-lite-512' });
    expect(run.stderr).toMatch(/embedding: 2\/2 \(100%\) done in/);
  }, 120_000);
});
