import { Arg, Ctx, Field, FieldResolver, ID, InputType, Int, Mutation, ObjectType, Query, Resolver, Root } from 'type-graphql';
import { InputRule } from '../contract/declared.js';
import { Needs } from '../auth/access.js';
import type { RequestContext } from '../context.js';
import { AgentKey, AuditEvent, Member, Organization, Workspace } from '../entities/index.js';
import { invalidField, NotFoundError } from '../errors.js';
import { isUuid } from '../ids.js';
import * as admin from '../services/admin.js';
import * as readModel from '../services/adminReadModel.js';
import { listAuditEvents } from '../services/audit.js';
import { loadById } from '../services/batchLoader.js';
import { ConnectionOf } from '../types/connection.js';
import { WorkspaceUsage } from '../types/usage.js';

@InputType()
class CreateOrganizationInput {
  @InputRule('name') @Field() name!: string;
  @InputRule('plan') @Field({ description: 'free | pro | enterprise' }) plan!: string;
  @Field(() => Boolean, { nullable: true }) requireTwoFactor?: boolean | null;
}

@InputType()
class UpdateOrganizationInput {
  @InputRule('plan') @Field(() => String, { nullable: true, description: 'free | pro | enterprise' }) plan?: string | null;
  @Field(() => Boolean, { nullable: true }) requireTwoFactor?: boolean | null;
}

@InputType()
class CreateWorkspaceInput {
  @InputRule('id') @Field(() => ID) organizationId!: string;
  @InputRule('name') @Field() name!: string;
}

@InputType()
class CreateMemberInput {
  @InputRule('id') @Field(() => ID) organizationId!: string;
  @InputRule('email') @Field() email!: string;
  @InputRule('role') @Field({ description: 'viewer | editor | admin | owner' }) role!: string;
  @Field(() => Boolean, { nullable: true }) twoFactorEnabled?: boolean | null;
}

@InputType()
class CreateAgentKeyInput {
  @InputRule('id') @Field(() => ID) memberId!: string;
  @InputRule('name') @Field() name!: string;
  @InputRule('permissions') @Field(() => [String]) permissions!: string[];
  @InputRule('id')
  @Field(() => ID, { nullable: true, description: 'Bind the key to one workspace; omit for an org-wide key.' })
  workspaceId?: string | null;
  @Field(() => Date, { nullable: true }) expiresAt?: Date | null;
}

@InputType()
class UpdateMemberInput {
  @InputRule('role') @Field(() => String, { nullable: true, description: 'viewer | editor | admin | owner' }) role?: string | null;
  @Field(() => Boolean, { nullable: true }) twoFactorEnabled?: boolean | null;
}

@InputType()
class UpdateAgentKeyInput {
  @InputRule('name') @Field(() => String, { nullable: true }) name?: string | null;
  @Field(() => Date, { nullable: true, description: 'A future time; null: the key never expires; omitted: unchanged.' })
  expiresAt?: Date | null;
}

@ObjectType()
class OrganizationConnection extends ConnectionOf(Organization) {}
@ObjectType()
class WorkspaceConnection extends ConnectionOf(Workspace) {}
@ObjectType()
class MemberConnection extends ConnectionOf(Member) {}
@ObjectType()
class AgentKeyConnection extends ConnectionOf(AgentKey) {}
@ObjectType()
class AuditEventConnection extends ConnectionOf(AuditEvent) {}

const PAGE = { first: 'Page size, 1 to 100 (default 20).', after: 'The `endCursor` of the previous page.' };

@ObjectType({ description: 'A new agent key. `key` is the secret and is shown only in this response.' })
class CreatedAgentKey {
  @Field() key!: string;
  @Field(() => AgentKey) agentKey!: AgentKey;
}

/** The admin operations (organizations, workspaces, members, agent keys); every one needs the admin token. */
@Resolver()
export class AdminResolver {
  @Needs.admin()
  @Mutation(() => Organization)
  createOrganization(@Ctx() ctx: RequestContext, @Arg('input', () => CreateOrganizationInput) input: CreateOrganizationInput) {
    return admin.createOrganization(ctx, input);
  }

  @Needs.admin()
  @Mutation(() => Organization)
  updateOrganization(
    @Ctx() ctx: RequestContext,
    @Arg('id', () => ID) id: string,
    @Arg('input', () => UpdateOrganizationInput) input: UpdateOrganizationInput,
  ) {
    return admin.updateOrganization(ctx, id, input);
  }

  @Needs.admin()
  @Mutation(() => Workspace)
  createWorkspace(@Ctx() ctx: RequestContext, @Arg('input', () => CreateWorkspaceInput) input: CreateWorkspaceInput) {
    return admin.createWorkspace(ctx, input);
  }

  @Needs.admin()
  @Mutation(() => Member)
  createMember(@Ctx() ctx: RequestContext, @Arg('input', () => CreateMemberInput) input: CreateMemberInput) {
    return admin.createMember(ctx, input);
  }

  @Needs.person('agent_keys.manage')
  @Mutation(() => CreatedAgentKey)
  createAgentKey(@Ctx() ctx: RequestContext, @Arg('input', () => CreateAgentKeyInput) input: CreateAgentKeyInput) {
    return admin.createAgentKey(ctx, input);
  }

  @Needs.person('agent_keys.manage')
  @Mutation(() => AgentKey)
  revokeAgentKey(@Ctx() ctx: RequestContext, @Arg('id', () => ID) id: string) {
    return admin.revokeAgentKey(ctx, id);
  }

  @Needs.admin()
  @Mutation(() => Member, { description: 'Changes a member: their keys follow at once, in every process.' })
  updateMember(
    @Ctx() ctx: RequestContext,
    @Arg('id', () => ID) id: string,
    @Arg('input', () => UpdateMemberInput) input: UpdateMemberInput,
  ) {
    return admin.updateMember(ctx, id, input);
  }

  @Needs.person('agent_keys.manage')
  @Mutation(() => AgentKey, { description: 'Renames a key or changes its expiry: in force at once, in every process.' })
  updateAgentKey(
    @Ctx() ctx: RequestContext,
    @Arg('id', () => ID) id: string,
    @Arg('input', () => UpdateAgentKeyInput) input: UpdateAgentKeyInput,
  ) {
    return admin.updateAgentKey(ctx, id, input);
  }

  @Needs.person('organization.read')
  @Query(() => OrganizationConnection, { description: 'Organizations, oldest first (admin token).' })
  organizations(
    @Ctx() ctx: RequestContext,
    @Arg('first', () => Int, { nullable: true, description: PAGE.first }) first?: number | null,
    @InputRule('cursor') @Arg('after', () => String, { nullable: true, description: PAGE.after }) after?: string | null,
  ) {
    return readModel.listOrganizations(ctx, { first, after });
  }

  @Needs.person('organization.read')
  @Query(() => WorkspaceConnection, { description: 'Workspaces, oldest first (admin token).' })
  workspaces(
    @Ctx() ctx: RequestContext,
    @InputRule('id') @Arg('organizationId', () => ID, { nullable: true }) organizationId?: string | null,
    @Arg('first', () => Int, { nullable: true, description: PAGE.first }) first?: number | null,
    @InputRule('cursor') @Arg('after', () => String, { nullable: true, description: PAGE.after }) after?: string | null,
  ) {
    return readModel.listWorkspaces(ctx, { organizationId, first, after });
  }

  @Needs.person('members.read')
  @Query(() => MemberConnection, { description: 'Members, oldest first (admin token).' })
  members(
    @Ctx() ctx: RequestContext,
    @InputRule('id') @Arg('organizationId', () => ID, { nullable: true }) organizationId?: string | null,
    @InputRule('role') @Arg('role', () => String, { nullable: true, description: 'viewer | editor | admin | owner' }) role?: string | null,
    @Arg('first', () => Int, { nullable: true, description: PAGE.first }) first?: number | null,
    @InputRule('cursor') @Arg('after', () => String, { nullable: true, description: PAGE.after }) after?: string | null,
  ) {
    return readModel.listMembers(ctx, { organizationId, role, first, after });
  }

  @Needs.person('agent_keys.manage')
  @Query(() => AgentKeyConnection, { description: 'Agent keys, oldest first, never their secret (admin token).' })
  agentKeys(
    @Ctx() ctx: RequestContext,
    @InputRule('id') @Arg('organizationId', () => ID, { nullable: true }) organizationId?: string | null,
    @InputRule('id') @Arg('memberId', () => ID, { nullable: true }) memberId?: string | null,
    @InputRule('id')
    @Arg('workspaceId', () => ID, { nullable: true, description: 'Keys bound to this workspace.' })
    workspaceId?: string | null,
    @Arg('revoked', () => Boolean, { nullable: true, description: 'true: revoked keys only; false: unrevoked only.' })
    revoked?: boolean | null,
    @Arg('first', () => Int, { nullable: true, description: PAGE.first }) first?: number | null,
    @InputRule('cursor') @Arg('after', () => String, { nullable: true, description: PAGE.after }) after?: string | null,
  ) {
    return readModel.listAgentKeys(ctx, { organizationId, memberId, workspaceId, revoked, first, after });
  }

  @Needs.person('audit.read')
  @Query(() => AuditEventConnection, { description: 'Audit events, newest first, filtered (admin token).' })
  auditTrail(
    @Ctx() ctx: RequestContext,
    @InputRule('id') @Arg('workspaceId', () => ID, { nullable: true }) workspaceId?: string | null,
    @InputRule('role') @Arg('actor', () => String, { nullable: true, description: 'agent | member | oauth | admin' }) actor?: string | null,
    @InputRule('name')
    @Arg('action', () => String, { nullable: true, description: 'An event type, e.g. agent_key.revoked.' })
    action?: string | null,
    @InputRule('name') @Arg('targetType', () => String, { nullable: true }) targetType?: string | null,
    // A note event's target is its path (up to 512 bytes).
    @InputRule('notePath') @Arg('targetId', () => String, { nullable: true }) targetId?: string | null,
    @Arg('from', () => Date, { nullable: true, description: 'Events at or after this time.' }) from?: Date | null,
    @Arg('to', () => Date, { nullable: true, description: 'Events before this time.' }) to?: Date | null,
    @Arg('first', () => Int, { nullable: true, description: PAGE.first }) first?: number | null,
    @InputRule('cursor') @Arg('after', () => String, { nullable: true, description: PAGE.after }) after?: string | null,
  ) {
    return readModel.listAuditTrail(ctx, { workspaceId, actor, action, targetType, targetId, from, to, first, after });
  }

  @Needs.admin()
  @Query(() => WorkspaceUsage, {
    description: 'What a workspace uses: notes against the quota, uploads, articles, searches (admin token).',
  })
  usage(@Ctx() ctx: RequestContext, @InputRule('id') @Arg('workspaceId', () => ID) workspaceId: string) {
    return readModel.workspaceUsage(ctx, workspaceId);
  }

  @Needs.admin()
  @Query(() => [AuditEvent], { description: 'Audit trail of a workspace, newest first (admin token).' })
  async auditEvents(
    @Ctx() ctx: RequestContext,
    @InputRule('id') @Arg('workspaceId', () => ID) workspaceId: string,
    @InputRule('auditLimit') @Arg('limit', () => Int, { nullable: true }) limit?: number | null,
  ) {
    if (!isUuid(workspaceId)) throw new NotFoundError('Workspace');
    const size = limit ?? 100;
    if (size < 1 || size > 1000) throw invalidField('limit', 'must be from 1 to 1000');
    return listAuditEvents(ctx.em, workspaceId, size);
  }
}

/** An agent key's member, organization and bound workspace, batched per request (see loadById). */
@Resolver(() => AgentKey)
export class AgentKeyFieldsResolver {
  @FieldResolver(() => Member)
  member(@Ctx() ctx: RequestContext, @Root() key: AgentKey) {
    return loadById(ctx, Member, key.member);
  }

  @FieldResolver(() => Organization)
  organization(@Ctx() ctx: RequestContext, @Root() key: AgentKey) {
    return loadById(ctx, Organization, key.organization);
  }

  @FieldResolver(() => Workspace, { nullable: true, description: 'The bound workspace; null for an org-wide key.' })
  workspace(@Ctx() ctx: RequestContext, @Root() key: AgentKey) {
    return key.workspace ? loadById(ctx, Workspace, key.workspace) : null;
  }
}

/** A member's organization, batched per request. */
@Resolver(() => Member)
export class MemberFieldsResolver {
  @FieldResolver(() => Organization)
  organization(@Ctx() ctx: RequestContext, @Root() member: Member) {
    return loadById(ctx, Organization, member.organization);
  }
}

/** A workspace's organization, batched per request. */
@Resolver(() => Workspace)
export class WorkspaceFieldsResolver {
  @FieldResolver(() => Organization)
  organization(@Ctx() ctx: RequestContext, @Root() workspace: Workspace) {
    return loadById(ctx, Organization, workspace.organization);
  }
}
