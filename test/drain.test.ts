import { request } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { png } from './support/images.js';
import { spawnService } from './support/processes.js';

const dir = mkdtempSync(join(tmpdir(), 'wks-drain-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('SIGTERM', () => {
  it('drains a request in flight before the process exits', async () => {
    const admin = 'adm_drain_test_token_0123456789';
    const service = await spawnService({
      ADMIN_TOKEN: admin,
      EMBEDDINGS: 'off',
      ...(process.env.DATABASE_URL ? {} : { DATA_DIR: join(dir, 'data') }),
    });
    const { url, child, exited } = service;
    const gql = async (query: string, variables = {}) =>
      (
        await (
          await fetch(`${url}/graphql`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${admin}` },
            body: JSON.stringify({ query, variables }),
          })
        ).json()
      ).data;
    const org = (await gql('mutation { createOrganization(input: { name: "D", plan: "free" }) { id } }')).createOrganization;
    const ws = (await gql('mutation($o: ID!) { createWorkspace(input: { organizationId: $o, name: "W" }) { id } }', { o: org.id }))
      .createWorkspace;
    const member = (
      await gql('mutation($o: ID!) { createMember(input: { organizationId: $o, email: "d@x.io", role: "owner" }) { id } }', { o: org.id })
    ).createMember;
    const key = (
      await gql(
        'mutation($m: ID!, $w: ID!) { createAgentKey(input: { memberId: $m, name: "d", permissions: ["upload.image"], workspaceId: $w }) { key } }',
        { m: member.id, w: ws.id },
      )
    ).createAgentKey.key;

    // An upload whose body arrives slowly: SIGTERM lands while it is in flight.
    const boundary = 'drainboundary';
    const body = Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n`),
      png(64, 64),
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    // The request is in flight once the service has parsed its headers and handed it to the app
    // (it answers "100 Continue"); SIGTERM lands then, and the rest of the body is sent only after
    // the service has logged that it is shutting down.
    const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(
        `${url}/api/v1/workspaces/-/uploads`,
        {
          method: 'POST',
          headers: {
            authorization: `Bearer ${key}`,
            'content-type': `multipart/form-data; boundary=${boundary}`,
            'content-length': body.length,
            expect: '100-continue',
          },
        },
        (res) => {
          let text = '';
          res.on('data', (c) => (text += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        },
      );
      req.on('error', reject);
      req.on('continue', () => {
        req.write(body.subarray(0, 100));
        const mark = service.outputMark();
        child.kill('SIGTERM');
        service.waitForOutput(/shutting down/, mark).then(() => req.end(body.subarray(100)), reject);
      });
      req.flushHeaders();
    });
    const res = await answer;
    expect(res.status, res.body).toBe(201);
    expect(JSON.parse(res.body).url).toMatch(/^\/uploads\//);
    expect(await exited).toBe(0);
  }, 90_000);
});
