import { Arg, Ctx, Field, ID, InputType, Int, Mutation, ObjectType, Query, Resolver } from 'type-graphql';
import { requireAdmin } from '../auth/authorize.js';
import type { RequestContext } from '../context.js';
import { AgentKey, AuditEvent, Member, Organization, Workspace } from '../entities/index.js';
import { invalidField, NotFoundError } from '../errors.js';
import { isUuid } from '../ids.js';
import * as admin from '../services/admin.js';
import { listAuditEvents } from '../services/audit.js';

@InputType()
class CreateOrganizationInput {
  @Field() name!: string;
  @Field({ description: 'free | pro | enterprise' }) plan!: string;
  @Field(() => Boolean, { nullable: true }) requireTwoFactor?: boolean | null;
}

@InputType()
class UpdateOrganizationInput {
  @Field(() => String, { nullable: true, description: 'free | pro | enterprise' }) plan?: string | null;
  @Field(() => Boolean, { nullable: true }) requireTwoFactor?: boolean | null;
}

@InputType()
class CreateWorkspaceInput {
  @Field(() => ID) organizationId!: string;
  @Field() name!: string;
}

@InputType()
class CreateMemberInput {
  @Field(() => ID) organizationId!: string;
  @Field() email!: string;
  @Field({ description: 'viewer | editor | admin | owner' }) role!: string;
  @Field(() => Boolean, { nullable: true }) twoFactorEnabled?: boolean | null;
}

@InputType()
class CreateAgentKeyInput {
  @Field(() => ID) memberId!: string;
  @Field() name!: string;
  @Field(() => [String]) permissions!: string[];
  @Field(() => ID, { nullable: true, description: 'Bind the key to one workspace; omit for an org-wide key.' }) workspaceId?: string | null;
  @Field(() => Date, { nullable: true }) expiresAt?: Date | null;
}

@ObjectType({ description: 'A new agent key. `key` is the secret and is shown only in this response.' })
class CreatedAgentKey {
  @Field() key!: string;
  @Field(() => AgentKey) agentKey!: AgentKey;
}

/** The admin operations (organizations, workspaces, members, agent keys); every one needs the admin token. */
@Resolver()
export class AdminResolver {
  @Mutation(() => Organization)
  createOrganization(@Ctx() ctx: RequestContext, @Arg('input', () => CreateOrganizationInput) input: CreateOrganizationInput) {
    return admin.createOrganization(ctx, input);
  }

  @Mutation(() => Organization)
  updateOrganization(
    @Ctx() ctx: RequestContext,
    @Arg('id', () => ID) id: string,
    @Arg('input', () => UpdateOrganizationInput) input: UpdateOrganizationInput,
  ) {
    return admin.updateOrganization(ctx, id, input);
  }

  @Mutation(() => Workspace)
  createWorkspace(@Ctx() ctx: RequestContext, @Arg('input', () => CreateWorkspaceInput) input: CreateWorkspaceInput) {
    return admin.createWorkspace(ctx, input);
  }

  @Mutation(() => Member)
  createMember(@Ctx() ctx: RequestContext, @Arg('input', () => CreateMemberInput) input: CreateMemberInput) {
    return admin.createMember(ctx, input);
  }

  @Mutation(() => CreatedAgentKey)
  createAgentKey(@Ctx() ctx: RequestContext, @Arg('input', () => CreateAgentKeyInput) input: CreateAgentKeyInput) {
    return admin.createAgentKey(ctx, input);
  }

  @Mutation(() => AgentKey)
  revokeAgentKey(@Ctx() ctx: RequestContext, @Arg('id', () => ID) id: string) {
    return admin.revokeAgentKey(ctx, id);
  }

  @Query(() => [AuditEvent], { description: 'Audit trail of a workspace, newest first (admin token).' })
  async auditEvents(
    @Ctx() ctx: RequestContext,
    @Arg('workspaceId', () => ID) workspaceId: string,
    @Arg('limit', () => Int, { nullable: true }) limit?: number | null,
  ) {
    requireAdmin(ctx);
    if (!isUuid(workspaceId)) throw new NotFoundError('Workspace');
    const size = limit ?? 100;
    if (size < 1 || size > 1000) throw invalidField('limit', 'must be from 1 to 1000');
    return listAuditEvents(ctx.em, workspaceId, size);
  }
}
