import { GraphQLJSON } from 'graphql-scalars';
import { Arg, Ctx, Field, InputType, Int, Mutation, Query, Resolver } from 'type-graphql';
import type { RequestContext } from '../context.js';
import { ApiPage, ApiSection, ApiSpecStatus, DetachedSpec, SyncPlan } from '../types/apiReference.js';
import * as api from '../services/apiReference.js';

@InputType({ description: 'Exactly one of url and spec.' })
class AttachSpecInput {
  @Field(() => String, { nullable: true, description: 'http(s) URL to fetch the spec from (public addresses only).' }) url?: string | null;
  @Field(() => GraphQLJSON, { nullable: true, description: 'The spec as JSON or YAML text, or as an object.' }) spec?: unknown;
}

@InputType()
class PlaceApiPageInput {
  @Field(() => String, { nullable: true, description: 'Target section key; default: the current one.' }) section?: string | null;
  @Field(() => Int, { nullable: true }) position?: number | null;
}

@InputType()
class CreateApiSectionInput {
  @Field() label!: string;
  @Field(() => String, { nullable: true }) key?: string | null;
  @Field(() => String, { nullable: true, description: 'The OpenAPI tag whose operations the section collects; default: the label.' }) tag?:
    string | null;
  @Field(() => Int, { nullable: true }) position?: number | null;
}

/** Generated API-reference pages, endpoints 22–29; rules live in services/apiReference.ts. */
@Resolver()
export class ApiReferenceResolver {
  @Query(() => ApiSpecStatus)
  apiSpec(@Ctx() ctx: RequestContext, @Arg('workspace') workspace: string) {
    return api.specStatus(ctx, workspace);
  }

  @Mutation(() => ApiSpecStatus, { description: 'Attaches (or replaces) the spec and generates its pages.' })
  attachApiSpec(
    @Ctx() ctx: RequestContext,
    @Arg('workspace') workspace: string,
    @Arg('input', () => AttachSpecInput) input: AttachSpecInput,
  ) {
    return api.attachSpec(ctx, workspace, input, ctx.outbound);
  }

  @Mutation(() => DetachedSpec)
  detachApiSpec(@Ctx() ctx: RequestContext, @Arg('workspace') workspace: string) {
    return api.detachSpec(ctx, workspace);
  }

  @Query(() => [ApiPage])
  apiPages(@Ctx() ctx: RequestContext, @Arg('workspace') workspace: string) {
    return api.listPages(ctx, workspace);
  }

  @Mutation(() => ApiPage)
  detachApiPage(@Ctx() ctx: RequestContext, @Arg('workspace') workspace: string, @Arg('slug') slug: string) {
    return api.detachPage(ctx, workspace, slug);
  }

  @Mutation(() => ApiPage)
  placeApiPage(
    @Ctx() ctx: RequestContext,
    @Arg('workspace') workspace: string,
    @Arg('slug') slug: string,
    @Arg('input', () => PlaceApiPageInput) input: PlaceApiPageInput,
  ) {
    return api.placePage(ctx, workspace, slug, input);
  }

  @Mutation(() => ApiSection)
  async createApiSection(
    @Ctx() ctx: RequestContext,
    @Arg('workspace') workspace: string,
    @Arg('input', () => CreateApiSectionInput) input: CreateApiSectionInput,
  ) {
    const section = await api.createApiSection(ctx, workspace, input);
    return {
      key: section.key,
      label: section.label,
      visibility: section.visibility,
      articleCount: section.articleCount,
      tag: (input.tag ?? input.label).trim(),
    };
  }

  @Mutation(() => SyncPlan)
  syncApiSpec(@Ctx() ctx: RequestContext, @Arg('workspace') workspace: string) {
    return api.syncSpec(ctx, workspace, ctx.outbound);
  }
}
