import { Arg, Args, ArgsType, Ctx, Field, InputType, Int, Mutation, ObjectType, Query, registerEnumType, Resolver } from 'type-graphql';
import { InputRule } from '../contract/declared.js';
import { Caller, CallerOf, Needs, type Scope } from '../auth/access.js';
import type { RequestContext } from '../context.js';
import { PageOf } from '../types/page.js';
import { ChangelogEntry, type ChangelogStatus } from '../entities/ChangelogEntry.js';
import * as changelog from '../services/changelog.js';
import { guardOf, permitOf, POLICIES } from '../auth/policies.js';

enum ChangelogStatusValue {
  draft = 'draft',
  published = 'published',
}
registerEnumType(ChangelogStatusValue, { name: 'ChangelogStatus', description: 'draft | published' });

@InputType()
class CreateChangelogEntryInput {
  @InputRule('title') @Field() title!: string;
  @InputRule('markdown') @Field() markdown!: string;
  @Field(() => ChangelogStatusValue) status!: ChangelogStatus;
  @InputRule('changelogTags') @Field(() => [String]) tags!: string[];
  @Field(() => Date, { nullable: true, description: 'Publication time; a published entry without one gets now.' })
  publishedAt!: Date | null;
}

@InputType()
class UpdateChangelogEntryInput {
  @InputRule('title') @Field({ nullable: true }) title?: string;
  @InputRule('markdown') @Field({ nullable: true }) markdown?: string;
  @Field(() => ChangelogStatusValue, { nullable: true }) status?: ChangelogStatus;
  @InputRule('changelogTags') @Field(() => [String], { nullable: true }) tags?: string[];
  @Field(() => Date, { nullable: true }) publishedAt?: Date | null;
}

@ArgsType()
class ListChangelogArgs {
  @Field(() => String, { description: 'Workspace id, or "-" for the key\'s bound workspace.' }) workspace!: string;
  @Field(() => Boolean, { nullable: true, description: 'Include drafts (honoured only with changelog.update).' }) drafts?: boolean | null;
  @InputRule('pageLimit') @Field(() => Int, { nullable: true }) limit?: number | null;
  @Field(() => String, { nullable: true }) cursor?: string | null;
}

@ObjectType()
class ChangelogEntryPage extends PageOf(ChangelogEntry) {}

@ObjectType()
class DeletedChangelogEntry {
  @Field(() => Int) id!: number;
  @Field() deleted!: boolean;
}

/** Changelog endpoints 1–4; rules live in services/changelog.ts. */
@Resolver()
export class ChangelogResolver {
  @Needs(['changelog.read'], { policies: [POLICIES.changelogDrafts] })
  @Query(() => ChangelogEntryPage, { description: 'Published entries, newest first (drafts with changelog.update).' })
  changelogEntries(
    @Ctx() ctx: RequestContext,
    @CallerOf('workspace') scope: Scope,
    @Args(() => ListChangelogArgs) args: ListChangelogArgs,
  ) {
    return changelog.listChangelog(ctx, scope, args, permitOf(POLICIES.changelogDrafts, scope));
  }

  @Needs(['changelog.update'], {
    policies: [
      {
        policy: POLICIES.changelogPublish,
        fromArgs: (args) => ({ publishes: (args.input as { status?: string }).status === 'published' }),
      },
    ],
  })
  @Mutation(() => ChangelogEntry)
  createChangelogEntry(
    @Ctx() ctx: RequestContext,
    @Caller() scope: Scope,
    @Arg('input', () => CreateChangelogEntryInput) input: CreateChangelogEntryInput,
  ) {
    return changelog.createChangelogEntry(ctx, scope, input);
  }

  @Needs(['changelog.update'], { policies: [POLICIES.changelogPublish] })
  @Mutation(() => ChangelogEntry)
  updateChangelogEntry(
    @Ctx() ctx: RequestContext,
    @Caller() scope: Scope,
    @Arg('id', () => Int) id: number,
    @Arg('input', () => UpdateChangelogEntryInput) input: UpdateChangelogEntryInput,
  ) {
    return changelog.updateChangelogEntry(ctx, scope, id, stripNulls(input), guardOf(POLICIES.changelogPublish, scope));
  }

  @Needs(['changelog.update'])
  @Mutation(() => DeletedChangelogEntry)
  deleteChangelogEntry(@Ctx() ctx: RequestContext, @Caller() scope: Scope, @Arg('id', () => Int) id: number) {
    return changelog.deleteChangelogEntry(ctx, scope, id);
  }
}

/** In an update, null means "leave as is" for non-nullable fields; only publishedAt may be cleared. */
function stripNulls(input: UpdateChangelogEntryInput): changelog.ChangelogInput {
  const out: changelog.ChangelogInput = {};
  if (input.title != null) out.title = input.title;
  if (input.markdown != null) out.markdown = input.markdown;
  if (input.status != null) out.status = input.status;
  if (input.tags != null) out.tags = input.tags;
  if (input.publishedAt !== undefined) out.publishedAt = input.publishedAt;
  return out;
}
