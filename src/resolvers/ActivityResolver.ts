import { Arg, Ctx, FieldResolver, ID, Int, Query, Resolver, Root } from 'type-graphql';
import { InputRule } from '../contract/declared.js';
import { Needs } from '../auth/access.js';
import type { RequestContext } from '../context.js';
import { NotFoundError } from '../errors.js';
import { isUuid } from '../ids.js';
import * as activity from '../services/activity.js';
import { ActivityDay } from '../types/activity.js';
import { WorkspaceUsage } from '../types/usage.js';

/** Who uses a workspace, agents or people: its operations by door and kind of caller (services/activity.ts). */
@Resolver(() => WorkspaceUsage)
export class ActivityResolver {
  @Needs.personIn('audit.read', 'workspaceId')
  @Query(() => [ActivityDay], {
    description:
      "A workspace's use per UTC day, oldest first, by door (rest, mcp, graphql, console) and kind of caller (agents: agent_key, " +
      'oauth_grant; people: member; admin_token): reads, writes, searches, content-gap reports (admin token, or admins and owners).',
  })
  async workspaceActivity(
    @Ctx() ctx: RequestContext,
    @InputRule('id') @Arg('workspaceId', () => ID) workspaceId: string,
    @InputRule('analyticsDays') @Arg('days', () => Int, { defaultValue: 7, description: 'How many days back (1–90).' }) days: number,
  ) {
    if (!isUuid(workspaceId)) throw new NotFoundError('Workspace');
    return activity.workspaceActivity(ctx.db, workspaceId, days);
  }

  @FieldResolver(() => [ActivityDay], {
    description: 'The last 7 days (UTC), oldest first: reads, writes, searches and content-gap reports by door and kind of caller.',
  })
  activity(@Ctx() ctx: RequestContext, @Root() usage: WorkspaceUsage) {
    return activity.workspaceActivity(ctx.db, usage.workspaceId, 7);
  }
}
