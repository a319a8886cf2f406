/**
 * Agents writing notes through a database failover, as the failover tests and the bench's
 * `failover` scenario drive them: each PUTs new paths one after another, each with its path as
 * the Idempotency-Key, and retries a refused write (503 with Retry-After) with the same key until
 * it is acknowledged, so a write whose outcome was unknown is sent again and must not be applied
 * twice. Everything a reader of the failover wants is recorded: statuses, 5xx that were not a 503
 * with Retry-After, the slowest request, and when each write was acknowledged.
 */

/** Creates an organization, a workspace, an owner and a key that reads and writes memory (and has `more` permissions); the key. */
export async function provisionWriterKey(baseUrl: string, adminToken: string, more: string[] = []): Promise<string> {
  const gql = async (query: string, variables = {}) => {
    const res = await fetch(`${baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` },
      body: JSON.stringify({ query, variables }),
    });
    const json = (await res.json()) as { data?: Record<string, { id: string; key: string }>; errors?: unknown };
    if (!json.data) throw new Error(`admin GraphQL failed: ${JSON.stringify(json.errors)}`);
    return json.data;
  };
  const org = (await gql('mutation { createOrganization(input: { name: "Failover", plan: "enterprise" }) { id } }')).createOrganization;
  const ws = (await gql('mutation($o: ID!) { createWorkspace(input: { organizationId: $o, name: "W" }) { id } }', { o: org.id }))
    .createWorkspace;
  const member = (
    await gql('mutation($o: ID!) { createMember(input: { organizationId: $o, email: "f@x.io", role: "owner" }) { id } }', { o: org.id })
  ).createMember;
  const created = await gql(
    'mutation($m: ID!, $w: ID!, $p: [String!]!) { createAgentKey(input: { memberId: $m, name: "writer", permissions: $p, workspaceId: $w }) { key } }',
    { m: member.id, w: ws.id, p: ['memory.write', 'memory.read', ...more] },
  );
  return created.createAgentKey.key;
}

/** What the writers saw. */
export interface WriteReport {
  /** Paths acknowledged (200), in the order acknowledged. */
  acknowledged: string[];
  /** When each acknowledgement arrived (ms since the epoch), in order. */
  acknowledgedAt: number[];
  /** Requests sent (retries included). */
  sent: number;
  statuses: Record<number, number>;
  /** 5xx answers other than a 503 with Retry-After, and requests that failed without an answer. */
  badFailures: string[];
  /** The slowest request (ms). */
  slowestMs: number;
  /** Every request's time (ms), in the order answered. */
  durationsMs: number[];
  /** Replays of an earlier outcome (Idempotent-Replayed: true): writes whose first answer was lost. */
  replayed: number;
}

/** Writers running until stopped; `report` is live. */
export interface NoteWriters {
  report: WriteReport;
  /** Stops the writers after their request in flight; resolves with the report. */
  stop(): Promise<WriteReport>;
}

/** Starts `count` writers on `baseUrl` with `key`, writing paths under `prefix`. */
export function startNoteWriters(baseUrl: string, key: string, { count = 4, prefix = 'failover', retryMs = 200 } = {}): NoteWriters {
  const report: WriteReport = {
    acknowledged: [],
    acknowledgedAt: [],
    sent: 0,
    statuses: {},
    badFailures: [],
    slowestMs: 0,
    durationsMs: [],
    replayed: 0,
  };
  let stopping = false;
  let giveUpAt = Infinity;
  const put = async (path: string): Promise<'done' | 'retry'> => {
    const started = performance.now();
    report.sent++;
    try {
      const res = await fetch(`${baseUrl}/api/v1/workspaces/-/memory/note`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': path },
        body: JSON.stringify({ path, body: `written once: ${path}`, kind: 'note', links: [], tags: [] }),
        signal: AbortSignal.timeout(30_000),
      });
      await res.arrayBuffer();
      report.statuses[res.status] = (report.statuses[res.status] ?? 0) + 1;
      if (res.status === 200) {
        report.acknowledged.push(path);
        report.acknowledgedAt.push(Date.now());
        if (res.headers.get('idempotent-replayed') === 'true') report.replayed++;
        return 'done';
      }
      if (res.status >= 500 && !(res.status === 503 && res.headers.get('retry-after')))
        report.badFailures.push(`${path}: ${res.status} (request ${res.headers.get('x-request-id')})`);
      return res.status === 503 || res.status === 409 ? 'retry' : 'done';
    } catch (error) {
      report.badFailures.push(`${path}: ${(error as Error).message}`);
      return 'retry';
    } finally {
      const ms = performance.now() - started;
      report.durationsMs.push(ms);
      report.slowestMs = Math.max(report.slowestMs, ms);
    }
  };
  const writer = async (w: number) => {
    for (let i = 0; !stopping; i++) {
      const path = `${prefix}/${w}/${i}`;
      // The same request with the same key until it is answered for good (a writer never abandons a write it started).
      // Once stopped, a write still refused after 20 s is given up (the service never came back).
      while ((await put(path)) === 'retry' && Date.now() < giveUpAt) await new Promise((r) => setTimeout(r, retryMs));
    }
  };
  const running = Array.from({ length: count }, (_, w) => writer(w));
  return {
    report,
    async stop() {
      stopping = true;
      giveUpAt = Date.now() + 20_000;
      await Promise.all(running);
      return report;
    },
  };
}

/** The longest stretch (ms) with no acknowledged write, between `from` and `to` (ms since the epoch). */
export function longestGapMs(acknowledgedAt: readonly number[], from: number, to: number): number {
  let last = from;
  let longest = 0;
  for (const at of [...acknowledgedAt].sort((x, y) => x - y)) {
    if (at < from || at > to) continue;
    longest = Math.max(longest, at - last);
    last = at;
  }
  return Math.max(longest, to - last);
}

/** The first acknowledgement at or after `at`, in ms after it (null: none). */
export function firstAckAfterMs(acknowledgedAt: readonly number[], at: number): number | null {
  const first = acknowledgedAt.filter((t) => t >= at).sort((x, y) => x - y)[0];
  return first === undefined ? null : first - at;
}
