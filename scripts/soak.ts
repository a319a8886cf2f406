/**
 * `npm run soak` (on demand, not in CI): a mixed agent load for SOAK_MINUTES (default 10) against a
 * service child process, sampling its resident memory and heap from /healthz every 10 s, and
 * reporting start/end figures so a leak shows as growth. Uses DATABASE_URL, else the embedded database.
 */
import { randomBytes } from 'node:crypto';
import autocannon from 'autocannon';
import { spawnService } from '../test/support/processes.js';

const MINUTES = Number(process.env.SOAK_MINUTES ?? 10);
const ADMIN = `adm_soak_${randomBytes(8).toString('hex')}`;
const service = await spawnService({
  ADMIN_TOKEN: ADMIN,
  RATE_LIMIT_MAX: '1000000000',
  EMBEDDINGS: 'off',
  OUTBOUND_ALLOW_LOOPBACK: 'false',
  ...(process.env.DATABASE_URL ? {} : { DATA_DIR: `./bench-results/soak-${Date.now()}` }),
});
const { url } = service;
/** One admin GraphQL call; resolves with the root field's value. */
async function gql<T>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const res = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN}` },
    body: JSON.stringify({ query, variables }),
  });
  const { data } = (await res.json()) as { data: Record<string, T> };
  return Object.values(data)[0];
}
const org = await gql<{ id: string }>('mutation { createOrganization(input: { name: "Soak", plan: "enterprise" }) { id } }');
const ws = await gql<{ id: string }>('mutation($o: ID!) { createWorkspace(input: { organizationId: $o, name: "S" }) { id } }', {
  o: org.id,
});
const member = await gql<{ id: string }>(
  'mutation($o: ID!) { createMember(input: { organizationId: $o, email: "s@x.io", role: "owner" }) { id } }',
  {
    o: org.id,
  },
);
const { key } = await gql<{ key: string }>(
  'mutation($m: ID!, $w: ID!) { createAgentKey(input: { memberId: $m, name: "s", permissions: ["memory.read", "memory.write", "search.read", ' +
    '"changelog.read"], workspaceId: $w }) { key } }',
  { m: member.id, w: ws.id },
);
const H = { authorization: `Bearer ${key}` };
const sample = async () => (await (await fetch(`${url}/healthz`)).json()) as { rssBytes: number; heapUsedBytes: number };
const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MiB`;
const start = await sample();
console.log(`soak: ${MINUTES} min against ${url}; start RSS ${mb(start.rssBytes)}, heap ${mb(start.heapUsedBytes)}`);
const timer = setInterval(() => {
  void sample().then(
    (s) => console.log(`  RSS ${mb(s.rssBytes)}, heap ${mb(s.heapUsedBytes)}`),
    () => undefined,
  );
}, 10_000);
let m = 0;
const result = await autocannon({
  url,
  connections: 10,
  duration: MINUTES * 60,
  headers: H,
  requests: [
    {
      setupRequest: (req: autocannon.Request) => {
        m++;
        const r = Math.random();
        if (r < 0.7)
          return {
            ...req,
            method: 'GET',
            path: m % 2 ? `/api/v1/workspaces/-/memory/note?path=soak/${m % 500}` : '/api/v1/workspaces/-/changelog?limit=20',
          };
        if (r < 0.9)
          return {
            ...req,
            method: 'PUT',
            path: '/api/v1/workspaces/-/memory/note',
            headers: { ...H, 'content-type': 'application/json' },
            body: JSON.stringify({ path: `soak/${m % 500}`, body: `v${m}`, kind: 'note', links: [], tags: [] }),
          };
        return { ...req, method: 'GET', path: '/api/v1/workspaces/-/memory/search?q=soak' };
      },
    },
  ],
});
clearInterval(timer);
const end = await sample();
console.log(
  `done: ${result.requests.total} requests, ${Math.round(result.requests.average)} req/s, p99 ${result.latency.p99} ms, errors ${result.errors}, 5xx ` +
    `${result['5xx']}`,
);
console.log(`RSS ${mb(start.rssBytes)} → ${mb(end.rssBytes)}, heap ${mb(start.heapUsedBytes)} → ${mb(end.heapUsedBytes)}`);
await service.stop();
process.exit(0);
