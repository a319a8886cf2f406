import type { EntityManager } from '@mikro-orm/postgresql';
import { acting } from '../auth/access.js';
import { announceAuthChange, signalAuthChanged } from '../auth/keyCache.js';
import { digestSecret, generateKeySecret } from '../auth/keys.js';
import { isPermission, ROLES, type Role } from '../auth/permissions.js';
import { MEMORY_QUOTA, PLANS, type Plan } from '../plans.js';
import type { MemberPrincipal, RequestContext } from '../context.js';
import type { AgentKey, Member, Organization, Workspace } from '../entities/index.js';
import { ConflictError, DomainError, InvalidRequestError, invalidField, NotFoundError } from '../errors.js';
import { isUuid } from '../ids.js';
import { loadAgentKey, newAgentKey } from '../store/agentKeys.js';
import { flushChanges } from '../store/entities.js';
import { loadMember, memberEmailTaken, memberReference, newMember } from '../store/members.js';
import { loadOrganization, loadWorkspaceOf, newOrganization, newWorkspace } from '../store/organizations.js';
import { recordAudit } from './audit.js';
import { recountMemoryUsage } from './memoryNotes.js';
import { inTransaction } from '../store/unitOfWork.js';

function checkPlan(plan: string, field: string): Plan {
  if (!(PLANS as readonly string[]).includes(plan)) throw invalidField(field, `must be one of ${PLANS.join(', ')}`);
  return plan as Plan;
}

function checkRole(role: string): Role {
  if (!(ROLES as readonly string[]).includes(role)) throw invalidField('role', `must be one of ${ROLES.join(', ')}`);
  return role as Role;
}

async function findOrganization(em: EntityManager, id: string): Promise<Organization> {
  const org = isUuid(id) ? await loadOrganization(em, id) : null;
  if (!org) throw new NotFoundError('Organization');
  return org;
}

/** createOrganization: a name, a plan (free, pro or enterprise) and the two-factor rule. */
export async function createOrganization(
  ctx: RequestContext,
  input: { name: string; plan: string; requireTwoFactor?: boolean | null },
): Promise<Organization> {
  const plan = checkPlan(input.plan, 'plan');
  return inTransaction(ctx.em, (em) => {
    const org = newOrganization(em, {
      name: input.name,
      plan,
      requireTwoFactor: input.requireTwoFactor ?? false,
      createdAt: new Date(),
    });
    recordAudit(em, ctx, { action: 'organization.created', targetType: 'organization', targetId: org.id, organizationId: org.id });
    return Promise.resolve(org);
  });
}

/**
 * Runs a change to what authentication reads (keys, organizations) in a transaction that also
 * tells every process's key cache (at commit); this process's cache is emptied after the commit.
 */
async function changingAuth<T>(ctx: RequestContext, work: (em: EntityManager) => Promise<T>): Promise<T> {
  const out = await inTransaction(ctx.em, async (em) => {
    const result = await work(em);
    await announceAuthChange(em);
    return result;
  });
  signalAuthChanged();
  return out;
}

/** updateOrganization: plan and two-factor requirement. */
export async function updateOrganization(
  ctx: RequestContext,
  id: string,
  input: { plan?: string | null; requireTwoFactor?: boolean | null },
): Promise<Organization> {
  return changingAuth(ctx, async (em) => {
    const org = await findOrganization(em, id);
    const before = org.plan;
    if (input.plan !== undefined && input.plan !== null) org.plan = checkPlan(input.plan, 'plan');
    if (MEMORY_QUOTA[before] === null && MEMORY_QUOTA[org.plan] !== null) {
      // Unlimited plans keep no note count: write the plan change first (it waits for creates in
      // flight), then count.
      await flushChanges(em);
      await recountMemoryUsage(em, org.id);
    }
    if (input.requireTwoFactor !== undefined && input.requireTwoFactor !== null) org.requireTwoFactor = input.requireTwoFactor;
    recordAudit(em, ctx, { action: 'organization.updated', targetType: 'organization', targetId: org.id, organizationId: org.id });
    return org;
  });
}

/** createWorkspace in an existing organization. */
export async function createWorkspace(ctx: RequestContext, input: { organizationId: string; name: string }): Promise<Workspace> {
  return inTransaction(ctx.em, async (em) => {
    const organization = await findOrganization(em, input.organizationId);
    const workspace = newWorkspace(em, { organization, name: input.name, createdAt: new Date() });
    recordAudit(em, ctx, {
      action: 'workspace.created',
      targetType: 'workspace',
      targetId: workspace.id,
      organizationId: organization.id,
      workspaceId: workspace.id,
    });
    return workspace;
  });
}

/** createMember: e-mail unique within the organization. */
export async function createMember(
  ctx: RequestContext,
  input: { organizationId: string; email: string; role: string; twoFactorEnabled?: boolean | null },
): Promise<Member> {
  const role = checkRole(input.role);
  return inTransaction(ctx.em, async (em) => {
    const organization = await findOrganization(em, input.organizationId);
    const email = input.email.trim().toLowerCase();
    if (await memberEmailTaken(em, organization, email))
      throw new ConflictError(`A member with e-mail ${email} already exists in this organization.`, { field: 'email' });
    const member = newMember(em, {
      organization,
      email,
      role,
      twoFactorEnabled: input.twoFactorEnabled ?? false,
      createdAt: new Date(),
    });
    recordAudit(em, ctx, { action: 'member.created', targetType: 'member', targetId: member.id, organizationId: organization.id });
    return member;
  });
}

/**
 * A person manages the keys of members ranked at or below them (viewer < editor < admin < owner):
 * an admin may not mint or change an owner's key, whose calls would act, and be audited, as the owner.
 */
function refuseKeyAboveRank(actor: MemberPrincipal | null, keyMember: Member): void {
  if (!actor || ROLES.indexOf(keyMember.role) <= ROLES.indexOf(actor.role)) return;
  throw new DomainError(
    'permission_denied',
    `Your role (${actor.role}) may not mint or change the keys of a member ranked above it (${keyMember.role}).`,
    { missing: [], memberRole: keyMember.role },
  );
}

export interface CreateAgentKeyInput {
  memberId: string;
  name: string;
  permissions: string[];
  workspaceId?: string | null;
  expiresAt?: Date | null;
}

/**
 * createAgentKey: returns the secret once; only its HMAC digest is stored. Records who minted it (a
 * signed-in member; null for the admin token), who may not mint for a member ranked above them.
 */
export async function createAgentKey(ctx: RequestContext, input: CreateAgentKeyInput): Promise<{ key: string; agentKey: AgentKey }> {
  // An admin or owner signed in: for members of their own organization only.
  const { organizationId: own, member: actor } = acting(ctx);
  const unknown = input.permissions.filter((p) => !isPermission(p));
  if (unknown.length)
    throw new InvalidRequestError(`permissions: unknown permission(s) ${unknown.join(', ')}`, [
      { field: 'permissions', message: `unknown: ${unknown.join(', ')}` },
    ]);
  if (input.expiresAt && input.expiresAt.getTime() <= Date.now()) throw invalidField('expiresAt', 'must be in the future');
  return inTransaction(ctx.em, async (em) => {
    const member = isUuid(input.memberId) ? await loadMember(em, input.memberId) : null;
    if (!member || (own && member.organization.id !== own)) throw new NotFoundError('Member');
    refuseKeyAboveRank(actor, member);
    let workspace: Workspace | null = null;
    if (input.workspaceId) {
      workspace = isUuid(input.workspaceId) ? await loadWorkspaceOf(em, input.workspaceId, member.organization) : null;
      if (!workspace) throw new NotFoundError('Workspace');
    }
    const key = generateKeySecret();
    const agentKey = newAgentKey(em, {
      organization: member.organization,
      member,
      workspace,
      name: input.name,
      permissions: [...new Set(input.permissions)],
      digest: digestSecret(ctx.serverSecret, key),
      expiresAt: input.expiresAt ?? null,
      createdBy: actor ? memberReference(em, actor.memberId) : null,
      createdAt: new Date(),
    });
    recordAudit(em, ctx, {
      action: 'agent_key.created',
      targetType: 'agent_key',
      targetId: agentKey.id,
      organizationId: member.organization.id,
      workspaceId: workspace?.id ?? null,
      // The key acts as `memberId`; the event (actor: who minted it) and `createdByMemberId` keep who gave it that power.
      payload: { object: { id: agentKey.id, name: agentKey.name, memberId: member.id, createdByMemberId: actor?.memberId ?? null } },
    });
    return { key, agentKey };
  });
}

/** revokeAgentKey: the key stops working at once; revoking twice keeps the first time. */
export async function revokeAgentKey(ctx: RequestContext, id: string): Promise<AgentKey> {
  const own = acting(ctx).organizationId;
  return changingAuth(ctx, async (em) => {
    const agentKey = isUuid(id) ? await loadAgentKey(em, id) : null;
    if (!agentKey || (own && agentKey.organization.id !== own)) throw new NotFoundError('Agent key');
    agentKey.revokedAt ??= new Date();
    recordAudit(em, ctx, {
      action: 'agent_key.revoked',
      targetType: 'agent_key',
      targetId: agentKey.id,
      organizationId: agentKey.organization.id,
      workspaceId: agentKey.workspace?.id ?? null,
    });
    return agentKey;
  });
}

/** updateMember: role and two-factor; the member's keys are re-read by every process at once. */
export async function updateMember(
  ctx: RequestContext,
  id: string,
  input: { role?: string | null; twoFactorEnabled?: boolean | null },
): Promise<Member> {
  const role = input.role === undefined || input.role === null ? null : checkRole(input.role);
  return changingAuth(ctx, async (em) => {
    const member = isUuid(id) ? await loadMember(em, id) : null;
    if (!member) throw new NotFoundError('Member');
    const previous: Record<string, unknown> = {};
    if (role !== null && role !== member.role) {
      previous.role = member.role;
      member.role = role;
    }
    if (input.twoFactorEnabled !== undefined && input.twoFactorEnabled !== null && input.twoFactorEnabled !== member.twoFactorEnabled) {
      previous.twoFactorEnabled = member.twoFactorEnabled;
      member.twoFactorEnabled = input.twoFactorEnabled;
    }
    recordAudit(em, ctx, {
      action: 'member.updated',
      targetType: 'member',
      targetId: member.id,
      organizationId: member.organization.id,
      payload: { object: { id: member.id, role: member.role, twoFactorEnabled: member.twoFactorEnabled }, previous },
    });
    return member;
  });
}

/** updateAgentKey: name and expiry (null: never expires); the change reaches every process's key cache at once. */
export async function updateAgentKey(
  ctx: RequestContext,
  id: string,
  input: { name?: string | null; expiresAt?: Date | null },
): Promise<AgentKey> {
  const { organizationId: own, member: actor } = acting(ctx);
  if (input.expiresAt && input.expiresAt.getTime() <= Date.now()) throw invalidField('expiresAt', 'must be in the future');
  return changingAuth(ctx, async (em) => {
    const agentKey = isUuid(id) ? await loadAgentKey(em, id, true) : null;
    if (!agentKey || (own && agentKey.organization.id !== own)) throw new NotFoundError('Agent key');
    refuseKeyAboveRank(actor, agentKey.member);
    const previous: Record<string, unknown> = {};
    if (input.name !== undefined && input.name !== null && input.name !== agentKey.name) {
      previous.name = agentKey.name;
      agentKey.name = input.name;
    }
    if (input.expiresAt !== undefined && input.expiresAt?.getTime() !== agentKey.expiresAt?.getTime()) {
      previous.expiresAt = agentKey.expiresAt;
      agentKey.expiresAt = input.expiresAt;
    }
    recordAudit(em, ctx, {
      action: 'agent_key.updated',
      targetType: 'agent_key',
      targetId: agentKey.id,
      organizationId: agentKey.organization.id,
      workspaceId: agentKey.workspace?.id ?? null,
      payload: { object: { id: agentKey.id, name: agentKey.name, expiresAt: agentKey.expiresAt }, previous },
    });
    return agentKey;
  });
}
