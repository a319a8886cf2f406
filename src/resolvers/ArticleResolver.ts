import { Arg, Ctx, Field, InputType, Int, Mutation, ObjectType, Query, registerEnumType, Resolver } from 'type-graphql';
import { InputRule } from '../contract/declared.js';
import { Caller, Needs, type Scope } from '../auth/access.js';
import type { RequestContext } from '../context.js';
import { Article, type ArticleStatus } from '../entities/Article.js';
import { Section, type Visibility } from '../entities/Section.js';
import * as history from '../services/articleHistory.js';
import * as articles from '../services/articles.js';
import { ArticleDiff, ArticleRevision, ArticleRevisionPage } from '../types/articleHistory.js';
import * as sections from '../services/sections.js';
import { guardOf, POLICIES } from '../auth/policies.js';

enum ArticleStatusValue {
  DRAFT = 'DRAFT',
  STABLE = 'STABLE',
  DEPRECATED = 'DEPRECATED',
  ARCHIVED = 'ARCHIVED',
}
registerEnumType(ArticleStatusValue, {
  name: 'ArticleStatus',
  description: 'DRAFT → STABLE | ARCHIVED; STABLE → DRAFT | DEPRECATED | ARCHIVED; DEPRECATED → STABLE | ARCHIVED; ARCHIVED → DRAFT',
});

enum VisibilityValue {
  public = 'public',
  restricted = 'restricted',
}
registerEnumType(VisibilityValue, {
  name: 'Visibility',
  description: 'restricted needs the pro or enterprise plan and hides the content from viewer-role keys',
});

@InputType()
class CreateSectionInput {
  @InputRule('label') @Field() label!: string;
  @InputRule('newSlug') @Field(() => String, { nullable: true, description: 'Slug; generated from the label when omitted.' }) key?:
    string | null;
  @Field(() => VisibilityValue, { nullable: true }) visibility?: Visibility | null;
  @InputRule('position') @Field(() => Int, { nullable: true, description: '0-based sidebar position; default: last.' }) position?:
    number | null;
}

@InputType()
class CreateArticleInput {
  @InputRule('title') @Field() title!: string;
  @InputRule('sectionKey') @Field({ description: 'Key of an existing section.' }) section!: string;
  @InputRule('markdown') @Field() markdown!: string;
  @Field(() => VisibilityValue, { nullable: true }) visibility?: Visibility | null;
}

@InputType()
class UpdateArticleInput {
  @InputRule('title') @Field({ nullable: true }) title?: string;
  @InputRule('markdown') @Field({ nullable: true }) markdown?: string;
  @Field(() => VisibilityValue, { nullable: true }) visibility?: Visibility;
  @Field(() => ArticleStatusValue, { nullable: true }) status?: ArticleStatus;
}

@InputType()
class PlaceArticleInput {
  @InputRule('sectionKey') @Field({ description: 'Key of the target section (may be the current one).' }) section!: string;
  @InputRule('position')
  @Field(() => Int, { nullable: true, description: '0-based position in the target section; default: last.' })
  position?: number | null;
}

@ObjectType({ description: 'A sidebar section with its articles, in order.' })
class SidebarSection {
  @Field() key!: string;
  @Field() label!: string;
  @Field() visibility!: string;
  @Field(() => Int) articleCount!: number;
  @Field(() => [Article]) articles!: Article[];
}

/** Sections and articles, endpoints 11–15, 18–19; rules live in services/articles.ts and sections.ts. */
@Resolver()
export class ArticleResolver {
  @Needs(['article.read'], { adminMayAct: true })
  @Query(() => [Section], { description: 'Sections in sidebar order.' })
  sections(@Ctx() ctx: RequestContext, @Caller() scope: Scope) {
    return sections.listSections(ctx, scope);
  }

  @Needs(['section.create'])
  @Mutation(() => Section)
  createSection(@Ctx() ctx: RequestContext, @Caller() scope: Scope, @Arg('input', () => CreateSectionInput) input: CreateSectionInput) {
    return sections.createSection(ctx, scope, input);
  }

  @Needs(['article.read'])
  @Query(() => [SidebarSection], { description: 'The sidebar tree: sections in order, each with its articles in order.' })
  articleTree(
    @Ctx() ctx: RequestContext,
    @Caller() scope: Scope,
    @Arg('status', () => ArticleStatusValue, { nullable: true }) status?: ArticleStatus | null,
    @InputRule('ifNoneMatch')
    @Arg('ifNoneMatch', () => String, {
      nullable: true,
      description:
        'The ETag of a tree you hold; when it is still current the answer is the `not_modified` error (REST: 304 without a body).',
    })
    ifNoneMatch?: string | null,
  ) {
    return articles.articleTree(ctx, scope, status, ifNoneMatch);
  }

  @Needs(['article.read'], { adminMayAct: true })
  @Query(() => Article)
  article(@Ctx() ctx: RequestContext, @Caller() scope: Scope, @Arg('slug') slug: string) {
    return articles.getArticle(ctx, scope, slug);
  }

  @Needs(['article.create'])
  @Mutation(() => Article, { description: 'Creates a DRAFT at the end of the section.' })
  createArticle(@Ctx() ctx: RequestContext, @Caller() scope: Scope, @Arg('input', () => CreateArticleInput) input: CreateArticleInput) {
    return articles.createArticle(ctx, scope, input);
  }

  @Needs(['article.update'], { policies: [POLICIES.articleStatus] })
  @Mutation(() => Article)
  updateArticle(
    @Ctx() ctx: RequestContext,
    @Caller() scope: Scope,
    @Arg('slug') slug: string,
    @Arg('input', () => UpdateArticleInput) input: UpdateArticleInput,
    @InputRule('ifMatch')
    @Arg('ifMatch', () => String, { nullable: true, description: 'The ETag the edit is based on ("v<version>"); 412 when it is stale.' })
    ifMatch?: string | null,
  ) {
    const clean: articles.UpdateArticleInput = {};
    if (input.title != null) clean.title = input.title;
    if (input.markdown != null) clean.markdown = input.markdown;
    if (input.visibility != null) clean.visibility = input.visibility;
    if (input.status != null) clean.status = input.status;
    return articles.updateArticle(ctx, scope, slug, clean, guardOf(POLICIES.articleStatus, scope), ifMatch);
  }

  @Needs(['article.update'])
  @Mutation(() => Article, { description: 'Moves an article into a section at a position, renumbering the others.' })
  placeArticle(
    @Ctx() ctx: RequestContext,
    @Caller() scope: Scope,
    @Arg('slug') slug: string,
    @Arg('input', () => PlaceArticleInput) input: PlaceArticleInput,
  ) {
    return articles.placeArticle(ctx, scope, slug, input);
  }

  @Needs(['article.read'])
  @Query(() => ArticleRevisionPage, { description: "An article's versions, newest first (Markdown by articleRevision)." })
  articleRevisions(
    @Ctx() ctx: RequestContext,
    @Caller() scope: Scope,
    @Arg('slug') slug: string,
    @InputRule('pageLimit') @Arg('limit', () => Int, { nullable: true }) limit?: number | null,
    @Arg('cursor', () => String, { nullable: true }) cursor?: string | null,
  ) {
    return history.articleRevisions(ctx, scope, slug, { limit, cursor });
  }

  @Needs(['article.read'])
  @Query(() => ArticleRevision, { description: 'One version of an article, with its Markdown.' })
  articleRevision(
    @Ctx() ctx: RequestContext,
    @Caller() scope: Scope,
    @Arg('slug') slug: string,
    @InputRule('version') @Arg('version', () => Int) version: number,
  ) {
    return history.articleRevision(ctx, scope, slug, version);
  }

  @Needs(['article.read'], { adminMayAct: true })
  @Query(() => ArticleDiff, { description: 'What changed between two versions: changed fields and a unified diff of the Markdown.' })
  articleDiff(
    @Ctx() ctx: RequestContext,
    @Caller() scope: Scope,
    @Arg('slug') slug: string,
    @InputRule('version') @Arg('from', () => Int) from: number,
    @InputRule('version') @Arg('to', () => Int, { nullable: true, description: 'Default: the current version.' }) to?: number | null,
  ) {
    return history.articleDiff(ctx, scope, slug, from, to);
  }

  @Needs(['article.update'])
  @Mutation(() => Article, { description: 'Brings back the title and Markdown of an earlier version as a new version.' })
  restoreArticle(
    @Ctx() ctx: RequestContext,
    @Caller() scope: Scope,
    @Arg('slug') slug: string,
    @InputRule('version') @Arg('version', () => Int) version: number,
    @InputRule('ifMatch')
    @Arg('ifMatch', () => String, { nullable: true, description: 'The ETag the restore is based on ("v<version>"); 412 when it is stale.' })
    ifMatch?: string | null,
  ) {
    return history.restoreArticle(ctx, scope, slug, version, ifMatch);
  }
}
