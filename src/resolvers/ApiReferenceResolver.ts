import { GraphQLJSON } from 'graphql-scalars';
import { Arg, Ctx, Field, InputType, Int, Mutation, Query, Resolver } from 'type-graphql';
import { InputRule } from '../contract/declared.js';
import { Caller, Needs, type Scope } from '../auth/access.js';
import type { RequestContext } from '../context.js';
import { ApiPage, ApiSection, ApiSpecStatus, DetachedSpec, SyncPlan } from '../types/apiReference.js';
import * as api from '../services/apiReference.js';

@InputType({ description: 'Exactly one of url and spec.' })
class AttachSpecInput {
  @InputRule('url')
  @Field(() => String, { nullable: true, description: 'http(s) URL to fetch the spec from (public addresses only).' })
  url?: string | null;
  @InputRule('spec')
  @Field(() => GraphQLJSON, { nullable: true, description: 'The spec as JSON or YAML text, or as an object.' })
  spec?: unknown;
}

@InputType()
class PlaceApiPageInput {
  @InputRule('sectionKey') @Field(() => String, { nullable: true, description: 'Target section key; default: the current one.' }) section?:
    string | null;
  @InputRule('position') @Field(() => Int, { nullable: true }) position?: number | null;
}

@InputType()
class CreateApiSectionInput {
  @InputRule('label') @Field() label!: string;
  @InputRule('newSlug') @Field(() => String, { nullable: true }) key?: string | null;
  @InputRule('apiTag')
  @Field(() => String, { nullable: true, description: 'The OpenAPI tag whose operations the section collects; default: the label.' })
  tag?: string | null;
  @InputRule('position') @Field(() => Int, { nullable: true }) position?: number | null;
}

/** Generated API-reference pages, endpoints 22–29; rules live in services/apiReference.ts. */
@Resolver()
export class ApiReferenceResolver {
  @Needs(['openapi.read'])
  @Query(() => ApiSpecStatus)
  apiSpec(@Ctx() ctx: RequestContext, @Caller() scope: Scope) {
    return api.specStatus(ctx, scope);
  }

  @Needs(['openapi.manage'])
  @Mutation(() => ApiSpecStatus, { description: 'Attaches (or replaces) the spec and generates its pages.' })
  attachApiSpec(@Ctx() ctx: RequestContext, @Caller() scope: Scope, @Arg('input', () => AttachSpecInput) input: AttachSpecInput) {
    return api.attachSpec(ctx, scope, input, ctx.outbound);
  }

  @Needs(['openapi.manage'])
  @Mutation(() => DetachedSpec)
  detachApiSpec(@Ctx() ctx: RequestContext, @Caller() scope: Scope) {
    return api.detachSpec(ctx, scope);
  }

  @Needs(['openapi.read'])
  @Query(() => [ApiPage])
  apiPages(@Ctx() ctx: RequestContext, @Caller() scope: Scope) {
    return api.listPages(ctx, scope);
  }

  @Needs(['openapi.manage'])
  @Mutation(() => ApiPage)
  detachApiPage(@Ctx() ctx: RequestContext, @Caller() scope: Scope, @Arg('slug') slug: string) {
    return api.detachPage(ctx, scope, slug);
  }

  @Needs(['openapi.manage'])
  @Mutation(() => ApiPage)
  placeApiPage(
    @Ctx() ctx: RequestContext,
    @Caller() scope: Scope,
    @Arg('slug') slug: string,
    @Arg('input', () => PlaceApiPageInput) input: PlaceApiPageInput,
  ) {
    return api.placePage(ctx, scope, slug, input);
  }

  @Needs(['openapi.manage'])
  @Mutation(() => ApiSection)
  async createApiSection(
    @Ctx() ctx: RequestContext,
    @Caller() scope: Scope,
    @Arg('input', () => CreateApiSectionInput) input: CreateApiSectionInput,
  ) {
    const section = await api.createApiSection(ctx, scope, input);
    return {
      key: section.key,
      label: section.label,
      visibility: section.visibility,
      articleCount: section.articleCount,
      tag: (input.tag ?? input.label).trim(),
    };
  }

  @Needs(['openapi.manage'])
  @Mutation(() => SyncPlan)
  syncApiSpec(@Ctx() ctx: RequestContext, @Caller() scope: Scope) {
    return api.syncSpec(ctx, scope, ctx.outbound);
  }
}
