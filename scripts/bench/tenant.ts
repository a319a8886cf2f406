/** Organizations, workspaces and agent keys for the bench, made through the admin GraphQL API. */
import { PERMISSIONS } from '../../src/auth/permissions.js';

interface GqlAnswer<T> {
  data: T;
  errors?: unknown[];
}

/** Sends one GraphQL operation with the admin token; throws on GraphQL errors. */
export async function gql<T>(url: string, token: string, query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const res = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query, variables }),
  });
  const json = (await res.json()) as GqlAnswer<T>;
  if (json.errors) throw new Error(JSON.stringify(json.errors));
  return json.data;
}

/** The bench's keys may do everything (the service's own permission list). */
export const BENCH_PERMISSIONS: readonly string[] = PERMISSIONS;

/** An organization with one owner member; workspaces and keys are added to it. */
export class Tenant {
  private constructor(
    private readonly url: string,
    private readonly admin: string,
    readonly organizationId: string,
    private readonly memberId: string,
  ) {}

  /** Creates the organization (on `plan`) and its owner. */
  static async create(url: string, admin: string, name: string, plan: string): Promise<Tenant> {
    const { createOrganization: org } = await gql<{ createOrganization: { id: string } }>(
      url,
      admin,
      'mutation($n: String!, $p: String!) { createOrganization(input: { name: $n, plan: $p }) { id } }',
      { n: name, p: plan },
    );
    const { createMember: member } = await gql<{ createMember: { id: string } }>(
      url,
      admin,
      'mutation($o: ID!) { createMember(input: { organizationId: $o, email: "bench@example.com", role: "owner" }) { id } }',
      { o: org.id },
    );
    return new Tenant(url, admin, org.id, member.id);
  }

  /** A new workspace and an agent key on it with `permissions`; returns its id and Bearer header. */
  async workspace(name: string, permissions = BENCH_PERMISSIONS): Promise<{ id: string; auth: Record<string, string> }> {
    const { createWorkspace: ws } = await gql<{ createWorkspace: { id: string } }>(
      this.url,
      this.admin,
      'mutation($o: ID!, $n: String!) { createWorkspace(input: { organizationId: $o, name: $n }) { id } }',
      { o: this.organizationId, n: name },
    );
    const { createAgentKey: key } = await gql<{ createAgentKey: { key: string } }>(
      this.url,
      this.admin,
      'mutation($m: ID!, $w: ID!, $p: [String!]!) { createAgentKey(input: { memberId: $m, name: "bench", permissions: $p, workspaceId: $w }) { key } }',
      { m: this.memberId, w: ws.id, p: permissions },
    );
    return { id: ws.id, auth: { authorization: `Bearer ${key.key}` } };
  }
}
