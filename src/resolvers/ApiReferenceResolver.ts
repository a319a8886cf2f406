import { GraphQLJSON } from 'graphql-scalars';
import { Arg, Ctx, Field, InputType, Int, Mutation, ObjectType, Query, Resolver } from 'type-graphql';
import type { RequestContext } from '../context.js';
import * as api from '../services/apiReference.js';

@ObjectType()
class DriftedPage {
  @Field() slug!: string;
  @Field() operationKey!: string;
  @Field({ description: 'changed | removed' }) reason!: string;
}

@ObjectType({ description: 'What a sync did: operation keys added, changed (hash differs) and removed, and detached pages whose operation drifted.' })
class SyncPlan {
  @Field(() => [String]) added!: string[];
  @Field(() => [String]) changed!: string[];
  @Field(() => [String]) removed!: string[];
  @Field(() => Int) unchanged!: number;
  @Field(() => [DriftedPage]) drifted!: DriftedPage[];
}

@ObjectType({ description: 'The attached OpenAPI spec and its last sync.' })
class ApiSpecStatus {
  @Field({ description: 'url | raw' }) source!: string;
  @Field(() => String, { nullable: true }) url!: string | null;
  @Field(() => String, { nullable: true }) title!: string | null;
  @Field(() => String, { nullable: true }) version!: string | null;
  @Field(() => String, { nullable: true, description: '2.0, 3.0.x or 3.1.x' }) openapiVersion!: string | null;
  @Field(() => Int) operationCount!: number;
  @Field(() => Int, { description: 'Generated and detached pages.' }) pageCount!: number;
  @Field(() => Date, { nullable: true }) lastSyncAt!: Date | null;
  @Field(() => String, { nullable: true, description: 'ok | failed' }) lastSyncResult!: string | null;
  @Field(() => String, { nullable: true }) lastSyncError!: string | null;
  @Field(() => SyncPlan, { nullable: true }) lastSync!: SyncPlan | null;
  @Field(() => [String]) warnings!: string[];
}

@ObjectType({ description: 'A page generated from an operation.' })
class ApiPage {
  @Field() slug!: string;
  @Field() title!: string;
  @Field({ description: 'Key of its section.' }) section!: string;
  @Field(() => Int) position!: number;
  @Field({ description: 'operationId, else "METHOD /path".' }) operationKey!: string;
  @Field(() => String, { nullable: true }) method!: string | null;
  @Field(() => String, { nullable: true }) path!: string | null;
  @Field({ description: 'generated | detached' }) state!: string;
}

@ObjectType()
class DetachedSpec {
  @Field() detached!: boolean;
  @Field(() => Int) removedPages!: number;
}

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
  @Field(() => String, { nullable: true, description: 'The OpenAPI tag whose operations the section collects; default: the label.' }) tag?: string | null;
  @Field(() => Int, { nullable: true }) position?: number | null;
}

@ObjectType()
class ApiSection {
  @Field() key!: string;
  @Field() label!: string;
  @Field() visibility!: string;
  @Field(() => Int) articleCount!: number;
  @Field() tag!: string;
}

/** Generated API-reference pages, endpoints 22–29; rules live in services/apiReference.ts. */
@Resolver()
export class ApiReferenceResolver {
  @Query(() => ApiSpecStatus)
  apiSpec(@Ctx() ctx: RequestContext, @Arg('workspace') workspace: string) {
    return api.specStatus(ctx, workspace);
  }

  @Mutation(() => ApiSpecStatus, { description: 'Attaches (or replaces) the spec and generates its pages.' })
  attachApiSpec(@Ctx() ctx: RequestContext, @Arg('workspace') workspace: string, @Arg('input', () => AttachSpecInput) input: AttachSpecInput) {
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
  placeApiPage(@Ctx() ctx: RequestContext, @Arg('workspace') workspace: string, @Arg('slug') slug: string, @Arg('input', () => PlaceApiPageInput) input: PlaceApiPageInput) {
    return api.placePage(ctx, workspace, slug, input);
  }

  @Mutation(() => ApiSection)
  async createApiSection(@Ctx() ctx: RequestContext, @Arg('workspace') workspace: string, @Arg('input', () => CreateApiSectionInput) input: CreateApiSectionInput) {
    const section = await api.createApiSection(ctx, workspace, input);
    return { key: section.key, label: section.label, visibility: section.visibility, articleCount: section.articleCount, tag: (input.tag ?? input.label).trim() };
  }

  @Mutation(() => SyncPlan)
  syncApiSpec(@Ctx() ctx: RequestContext, @Arg('workspace') workspace: string) {
    return api.syncSpec(ctx, workspace, ctx.outbound);
  }
}
