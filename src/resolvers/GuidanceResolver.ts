import { Arg, Ctx, Field, InputType, Mutation, Query, Resolver } from 'type-graphql';
import { Caller, Needs, type Scope } from '../auth/access.js';
import { InputRule } from '../contract/declared.js';
import type { RequestContext } from '../context.js';
import * as guidance from '../services/guidance.js';
import { WorkspaceGuidance } from '../types/guidance.js';

@InputType()
class WorkspaceGuidanceInput {
  @InputRule('guidance')
  @Field({ description: 'Markdown, at most 4 KiB (UTF-8); empty removes the guidance.' })
  markdown!: string;
}

/** A workspace's guidance for agents; rules live in services/guidance.ts. */
@Resolver()
export class GuidanceResolver {
  @Needs([], { adminMayAct: true })
  @Query(() => WorkspaceGuidance, { description: "The workspace's guidance for agents (any caller of the workspace)." })
  workspaceGuidance(@Ctx() ctx: RequestContext, @Caller() scope: Scope) {
    return guidance.getGuidance(ctx, scope);
  }

  @Needs(['guidance.update'], { adminMayAct: true })
  @Mutation(() => WorkspaceGuidance, {
    description: "Replaces the workspace's guidance for agents (empty removes it): admins and owners, or the admin token.",
  })
  setWorkspaceGuidance(
    @Ctx() ctx: RequestContext,
    @Caller() scope: Scope,
    @Arg('input', () => WorkspaceGuidanceInput) input: WorkspaceGuidanceInput,
  ) {
    return guidance.setGuidance(ctx, scope, input.markdown);
  }
}
