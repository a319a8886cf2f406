import { Arg, Ctx, Field, FieldResolver, ID, InputType, Int, Mutation, ObjectType, Query, Resolver, Root } from 'type-graphql';
import { InputRule } from '../contract/declared.js';
import { Needs } from '../auth/access.js';
import type { RequestContext } from '../context.js';
import { Webhook, WebhookAttempt, WebhookDelivery } from '../entities/Webhook.js';
import * as webhooks from '../services/webhooks.js';

@InputType()
class CreateWebhookInput {
  @InputRule('id') @Field(() => ID) organizationId!: string;
  @InputRule('id')
  @Field(() => ID, { nullable: true, description: "Only this workspace's events; omit for the whole organization." })
  workspaceId?: string | null;
  @InputRule('url') @Field() url!: string;
  @InputRule('events')
  @Field(() => [String], { nullable: true, description: 'Event types or "resource.*" filters; omit for every event.' })
  events?: string[] | null;
}

@InputType()
class UpdateWebhookInput {
  @InputRule('url') @Field(() => String, { nullable: true }) url?: string | null;
  @InputRule('events') @Field(() => [String], { nullable: true }) events?: string[] | null;
  @Field(() => Boolean, { nullable: true, description: 'true: receive every event again (clears the filter).' }) allEvents?: boolean | null;
  @Field(() => Boolean, { nullable: true }) enabled?: boolean | null;
}

@ObjectType()
class WebhookDeliveryWithAttempts extends WebhookDelivery {
  @Field(() => [WebhookAttempt]) attemptLog!: WebhookAttempt[];
}

/** Webhook subscriptions for dashboards (admin token). */
@Resolver(() => Webhook)
export class WebhookResolver {
  @Needs.admin()
  @Mutation(() => Webhook, {
    description: 'Creates a subscription; the answer is the only place the secret is shown (besides rotateWebhookSecret).',
  })
  async createWebhook(@Ctx() ctx: RequestContext, @Arg('input', () => CreateWebhookInput) input: CreateWebhookInput) {
    return Object.assign(await webhooks.createWebhook(ctx, input), { revealSecret: true });
  }

  @Needs.admin()
  @Mutation(() => Webhook)
  updateWebhook(
    @Ctx() ctx: RequestContext,
    @Arg('id', () => ID) id: string,
    @Arg('input', () => UpdateWebhookInput) input: UpdateWebhookInput,
  ) {
    return webhooks.updateWebhook(ctx, id, input);
  }

  @Needs.admin()
  @Mutation(() => Webhook)
  deleteWebhook(@Ctx() ctx: RequestContext, @Arg('id', () => ID) id: string) {
    return webhooks.deleteWebhook(ctx, id);
  }

  @Needs.admin()
  @Mutation(() => Webhook, { description: 'Replaces the secret (shown in the answer).' })
  async rotateWebhookSecret(@Ctx() ctx: RequestContext, @Arg('id', () => ID) id: string) {
    return Object.assign(await webhooks.rotateSecret(ctx, id), { revealSecret: true });
  }

  @Needs.admin()
  @Query(() => [Webhook])
  webhooks(@Ctx() ctx: RequestContext, @InputRule('id') @Arg('organizationId', () => ID) organizationId: string) {
    return webhooks.listWebhooks(ctx, organizationId);
  }

  @Needs.admin()
  @Query(() => [WebhookDeliveryWithAttempts], {
    description: 'Deliveries of a subscription, newest first, with every attempt (status, duration, error).',
  })
  webhookDeliveries(
    @Ctx() ctx: RequestContext,
    @InputRule('id') @Arg('webhookId', () => ID) webhookId: string,
    @InputRule('deliveryLimit') @Arg('limit', () => Int, { defaultValue: 50 }) limit: number,
  ) {
    return webhooks.listDeliveries(ctx, webhookId, Math.min(Math.max(limit, 1), 500));
  }

  @FieldResolver(() => String, {
    nullable: true,
    description: 'whsec_… secret; only in the answers of createWebhook and rotateWebhookSecret.',
  })
  secret(@Root() hook: Webhook & { revealSecret?: boolean }) {
    return hook.revealSecret ? hook.secret : null;
  }
}
