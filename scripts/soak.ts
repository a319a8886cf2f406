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
const { url, stop } = await spawnService({ ADMIN_TOKEN: ADMIN, RATE_LIMIT_MAX: '1000000000', EMBEDDINGS: 'off', OUTBOUND_ALLOW_LOOPBACK: 'false', ...(process.env.DATABASE_URL ? {} : { DATA_DIR: `./bench-results/soak-${Date.now()}` }) });
const gql = async (query: string, variables = {}) => (await (await fetch(`${url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN}` }, body: JSON.stringify({ query, variables }) })).json()).data;
const org = (await gql('mutation { createOrganization(input: { name: "Soak", plan: "enterprise" }) { id } }')).createOrganization;
const ws = (await gql('mutation($o: ID!) { createWorkspace(input: { organizationId: $o, name: "S" }) { id } }', { o: org.id })).createWorkspace;
const member = (await gql('mutation($o: ID!) { createMember(input: { organizationId: $o, email: "s@x.io", role: "owner" }) { id } }', { o: org.id })).createMember;
const key = (await gql('mutation($m: ID!, $w: ID!) { createAgentKey(input: { memberId: $m, name: "s", permissions: ["memory.read", "memory.write", "search.read", "changelog.read"], workspaceId: $w }) { key } }', { m: member.id, w: ws.id })).createAgentKey.key;
const H = { authorization: `Bearer ${key}` };
const sample = async () => (await (await fetch(`${url}/healthz`)).json()) as { rssBytes: number; heapUsedBytes: number };
const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MiB`;
const start = await sample();
console.log(`soak: ${MINUTES} min against ${url}; start RSS ${mb(start.rssBytes)}, heap ${mb(start.heapUsedBytes)}`);
const timer = setInterval(async () => {
  const s = await sample().catch(() => null);
  if (s) console.log(`  RSS ${mb(s.rssBytes)}, heap ${mb(s.heapUsedBytes)}`);
}, 10_000);
let m = 0;
const result = await autocannon({
  url, connections: 10, duration: MINUTES * 60, headers: H,
  requests: [{
    setupRequest: (req: any) => {
      m++;
      const r = Math.random();
      if (r < 0.7) return { ...req, method: 'GET', path: m % 2 ? `/api/v1/workspaces/-/memory/note?path=soak/${m % 500}` : '/api/v1/workspaces/-/changelog?limit=20' };
      if (r < 0.9) return { ...req, method: 'PUT', path: '/api/v1/workspaces/-/memory/note', headers: { ...H, 'content-type': 'application/json' }, body: JSON.stringify({ path: `soak/${m % 500}`, body: `v${m}`, kind: 'note', links: [], tags: [] }) };
      return { ...req, method: 'GET', path: '/api/v1/workspaces/-/memory/search?q=soak' };
    },
  }],
});
clearInterval(timer);
const end = await sample();
console.log(`done: ${result.requests.total} requests, ${Math.round(result.requests.average)} req/s, p99 ${result.latency.p99} ms, errors ${result.errors}, 5xx ${result['5xx']}`);
console.log(`RSS ${mb(start.rssBytes)} → ${mb(end.rssBytes)}, heap ${mb(start.heapUsedBytes)} → ${mb(end.heapUsedBytes)}`);
await stop();
process.exit(0);
