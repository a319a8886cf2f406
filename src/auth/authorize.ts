import type { AgentPrincipal, MemberPrincipal, RequestContext } from '../context.js';
import {
  PERSON_TWO_FACTOR_MESSAGE,
  InvalidRequestError,
  NotFoundError,
  PermissionDeniedError,
  PlanRequiredError,
  TwoFactorRequiredError,
  UnauthorizedError,
} from '../errors.js';
import { isUuid } from '../ids.js';
import { effectivePermissions, PERMISSIONS, rolePermissions, type Permission, type PersonAction } from './permissions.js';
import { adminOnly, permitted, personMay } from './policies.js';
import type { PlanFeature } from '../plans.js';
import { workspaceInOrganization, workspaceOrganization } from '../store/organizations.js';

/**
 * The admin token acting in one workspace (over GraphQL, for the operations that allow it: the
 * review console's): an owner's rights in that workspace, with no key and no member behind it.
 */
export interface AdminActor extends Omit<AgentPrincipal, 'kind' | 'keyId' | 'memberId'> {
  kind: 'admin';
  keyId: null;
  memberId: null;
}

/** A signed-in person acting in a workspace of their organization: their role's permissions, no key. */
export interface MemberActor extends Omit<AgentPrincipal, 'kind' | 'keyId'> {
  kind: 'member';
  keyId: null;
  sessionId: string;
}

/** What an authorized call may touch: one workspace of one organization, as one key (or the admin token or a signed-in member acting). */
export interface Scope {
  workspaceId: string;
  agent: AgentPrincipal | AdminActor | MemberActor;
  /** Effective permissions (key AND role ceiling). */
  permissions: ReadonlySet<Permission>;
  /** The named policies its operation declares (see guardOf in auth/policies.ts). */
  policies?: readonly string[];
}

/** Whether the organization's two-factor rule refuses every call of this key (an admin or owner member without two-factor). */
export function blockedByTwoFactor(p: AgentPrincipal): boolean {
  return p.requireTwoFactor && (p.role === 'admin' || p.role === 'owner') && !p.twoFactorEnabled;
}

/**
 * The organization's two-factor rule for people: an admin or owner of an organization that requires
 * two-factor must have signed in with a second factor (the identity provider's `amr`).
 */
export function personBlockedByTwoFactor(p: Pick<MemberPrincipal, 'requireTwoFactor' | 'role' | 'mfa'>): boolean {
  return p.requireTwoFactor && (p.role === 'admin' || p.role === 'owner') && !p.mfa;
}

/** The agent behind the request, or 401/403 before anything else is looked at. */
function requireAgent(ctx: RequestContext): AgentPrincipal {
  const p = ctx.principal;
  if (p.kind === 'anonymous' || p.kind === 'invalid') throw new UnauthorizedError();
  if (p.kind === 'admin')
    throw new PermissionDeniedError([], 'The admin token manages organizations; workspace content needs an agent key (svc_pat_…).');
  if (p.kind === 'member')
    throw new PermissionDeniedError([], 'A signed-in person acts over GraphQL; this needs an agent key (svc_pat_…).');
  if (blockedByTwoFactor(p)) throw new TwoFactorRequiredError();
  return p;
}

/**
 * The one authorization check: the key, its member's two-factor rule, the workspace, then the
 * permissions (key AND role ceiling):
 * 401 key → 403 two-factor → `{workspace}` scope (400 / 404) → 403 permission.
 */
export async function authorize(
  ctx: RequestContext,
  workspace: string,
  required: readonly Permission[],
  options: { adminMayAct?: boolean } = {},
): Promise<Scope> {
  if (options.adminMayAct && ctx.principal.kind === 'admin' && ctx.door === 'graphql') return adminScope(ctx, workspace);
  if (ctx.principal.kind === 'member') return memberScope(ctx, ctx.principal, workspace, required);
  const agent = requireAgent(ctx);
  const workspaceId = await resolveWorkspace(ctx, agent, workspace);
  const permissions = effectivePermissions(agent.permissions, agent.role);
  permitted(permissions, required);
  return { workspaceId, agent, permissions };
}

/**
 * The admin token acting in a workspace named by its id (404 like any unknown workspace): every
 * permission, the organization's plan. Only GraphQL operations that opt in allow it, and never
 * REST or MCP, whose answers to the admin token stay 403.
 */
async function adminScope(ctx: RequestContext, workspace: string): Promise<Scope> {
  if (!isUuid(workspace)) throw new NotFoundError('Workspace');
  const row = await workspaceOrganization(ctx.db, workspace.toLowerCase());
  if (!row) throw new NotFoundError('Workspace');
  const agent: AdminActor = {
    kind: 'admin',
    keyId: null,
    memberId: null,
    keyName: 'admin token',
    permissions: PERMISSIONS,
    boundWorkspaceId: null,
    role: 'owner',
    twoFactorEnabled: true,
    organizationId: row.organization_id,
    plan: row.plan,
    requireTwoFactor: row.require_two_factor,
  };
  ctx.adminActing.set(workspace.toLowerCase(), row.organization_id);
  return { workspaceId: workspace.toLowerCase(), agent, permissions: new Set(PERMISSIONS) };
}

/**
 * A signed-in person in a workspace of their organization (404 for any other): 403 two-factor,
 * then their role's permissions (the role table) against what the operation needs.
 */
async function memberScope(ctx: RequestContext, p: MemberPrincipal, workspace: string, required: readonly Permission[]): Promise<Scope> {
  if (personBlockedByTwoFactor(p)) throw new TwoFactorRequiredError(PERSON_TWO_FACTOR_MESSAGE);
  if (workspace === '-')
    throw new InvalidRequestError('A person names a workspace id, not "-".', [{ field: 'workspace', message: 'must be a workspace id' }]);
  if (!isUuid(workspace)) throw new NotFoundError('Workspace');
  const id = workspace.toLowerCase();
  if (!(await workspaceInOrganization(ctx.db, id, p.organizationId))) throw new NotFoundError('Workspace');
  const granted = rolePermissions(p.role);
  const permissions = new Set(granted);
  personMay(p, ...required);
  const agent: MemberActor = {
    kind: 'member',
    keyId: null,
    sessionId: p.sessionId,
    keyName: p.email,
    permissions: granted,
    boundWorkspaceId: null,
    memberId: p.memberId,
    role: p.role,
    twoFactorEnabled: p.mfa,
    organizationId: p.organizationId,
    plan: p.plan,
    requireTwoFactor: p.requireTwoFactor,
  };
  return { workspaceId: id, agent, permissions };
}

/**
 * What an organization-level operation (keys, members, audit trail, sign-in links, sessions) may
 * reach: the admin token everything (`organizationId` null), a signed-in member only their own
 * organization and only what their role's row allows (403 naming it; any member when `action` is
 * null); an agent key never (403).
 */
export function adminOrPerson(
  ctx: RequestContext,
  action: PersonAction | Permission | null,
): { organizationId: string | null; member: MemberPrincipal | null } {
  const p = ctx.principal;
  if (p.kind === 'member') {
    if (personBlockedByTwoFactor(p)) throw new TwoFactorRequiredError(PERSON_TWO_FACTOR_MESSAGE);
    if (action !== null) personMay(p, action);
    return { organizationId: p.organizationId, member: p };
  }
  adminOnly(ctx);
  return { organizationId: null, member: null };
}

/**
 * An admin-token operation on one workspace that a person may also use: the admin token anywhere;
 * a signed-in member in a workspace of their organization (404 for any other) when their role
 * allows `what`; an agent key never.
 */
export async function adminOrPersonIn(ctx: RequestContext, workspaceId: string, what: PersonAction | Permission): Promise<void> {
  const p = ctx.principal;
  if (p.kind !== 'member') return adminOnly(ctx);
  if (personBlockedByTwoFactor(p)) throw new TwoFactorRequiredError(PERSON_TWO_FACTOR_MESSAGE);
  if (!isUuid(workspaceId) || !(await workspaceInOrganization(ctx.db, workspaceId.toLowerCase(), p.organizationId)))
    throw new NotFoundError('Workspace');
  personMay(p, what);
}

/** 403 `plan_required` unless the organization's plan allows the feature. */
export function requirePlan(scope: Scope, feature: PlanFeature): void {
  if (!feature.plans.includes(scope.agent.plan)) throw new PlanRequiredError(feature.what, [...feature.plans], scope.agent.plan);
}

async function resolveWorkspace(ctx: RequestContext, agent: AgentPrincipal, workspace: string): Promise<string> {
  if (workspace === '-') {
    if (!agent.boundWorkspaceId) {
      throw new InvalidRequestError('This key is org-wide: name a workspace id instead of "-".', [
        { field: 'workspace', message: 'an org-wide key must name a workspace id' },
      ]);
    }
    return agent.boundWorkspaceId;
  }
  // Every unreachable workspace gets the same 404 as a nonexistent one.
  if (!isUuid(workspace)) throw new NotFoundError('Workspace');
  const id = workspace.toLowerCase();
  if (agent.boundWorkspaceId) {
    if (agent.boundWorkspaceId !== id) throw new NotFoundError('Workspace');
    return id;
  }
  if (!(await workspaceInOrganization(ctx.db, id, agent.organizationId))) throw new NotFoundError('Workspace');
  return id;
}
