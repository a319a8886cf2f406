import { randomBytes } from 'node:crypto';
import type { ServiceClient } from './app.js';
import { PERMISSIONS } from '../../src/auth/permissions.js';

const uniq = () => randomBytes(4).toString('hex');

async function admin<T>(app: ServiceClient, query: string, variables: Record<string, unknown>): Promise<T> {
  const res = await app.gql(query, variables);
  if (res.errors?.length) throw new Error(`admin GraphQL failed: ${JSON.stringify(res.errors)}`);
  return Object.values(res.data as Record<string, T>)[0];
}

export interface Org {
  id: string;
  plan: string;
}
export interface Ws {
  id: string;
}
export interface MemberRow {
  id: string;
  role: string;
  email: string;
}

export function createOrg(app: ServiceClient, input: { plan?: string; requireTwoFactor?: boolean } = {}): Promise<Org> {
  return admin(app, 'mutation($input: CreateOrganizationInput!) { createOrganization(input: $input) { id plan requireTwoFactor } }', {
    input: { name: `Org ${uniq()}`, plan: input.plan ?? 'free', requireTwoFactor: input.requireTwoFactor ?? false },
  });
}

export function createWorkspace(app: ServiceClient, organizationId: string, name = `Workspace ${uniq()}`): Promise<Ws> {
  return admin(app, 'mutation($input: CreateWorkspaceInput!) { createWorkspace(input: $input) { id organizationId } }', {
    input: { organizationId, name },
  });
}

export function createMember(
  app: ServiceClient,
  organizationId: string,
  input: { role?: string; twoFactorEnabled?: boolean } = {},
): Promise<MemberRow> {
  return admin(app, 'mutation($input: CreateMemberInput!) { createMember(input: $input) { id role email } }', {
    input: {
      organizationId,
      email: `m-${uniq()}@example.com`,
      role: input.role ?? 'owner',
      twoFactorEnabled: input.twoFactorEnabled ?? false,
    },
  });
}

export async function createKey(
  app: ServiceClient,
  memberId: string,
  input: { permissions: string[]; workspaceId?: string | null; expiresAt?: string; name?: string },
): Promise<{ key: string; id: string }> {
  const created = await admin<{ key: string; agentKey: { id: string } }>(
    app,
    'mutation($input: CreateAgentKeyInput!) { createAgentKey(input: $input) { key agentKey { id workspaceId permissions expiresAt } } }',
    {
      input: {
        memberId,
        name: input.name ?? `key-${uniq()}`,
        permissions: input.permissions,
        workspaceId: input.workspaceId ?? null,
        expiresAt: input.expiresAt ?? null,
      },
    },
  );
  return { key: created.key, id: created.agentKey.id };
}

/** Every permission a key may carry (the service's own list). */
export const ALL_PERMISSIONS: string[] = [...PERMISSIONS];

export interface Tenant {
  org: Org;
  workspace: Ws;
  member: MemberRow;
  /** A key bound to the workspace with the requested permissions. */
  key: string;
  keyId: string;
}

/** A fresh organization with one workspace, one member and one workspace-bound key. */
export async function tenant(
  app: ServiceClient,
  options: { plan?: string; role?: string; permissions?: string[]; orgWide?: boolean } = {},
): Promise<Tenant> {
  const org = await createOrg(app, { plan: options.plan });
  const workspace = await createWorkspace(app, org.id);
  const member = await createMember(app, org.id, { role: options.role ?? 'owner' });
  const { key, id } = await createKey(app, member.id, {
    permissions: options.permissions ?? ALL_PERMISSIONS,
    workspaceId: options.orgWide ? null : workspace.id,
  });
  return { org, workspace, member, key, keyId: id };
}
