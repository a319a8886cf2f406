import { GraphQLJSON } from 'graphql-scalars';
import { Field, Int, InterfaceType, ObjectType } from 'type-graphql';
import { PageOf } from './page.js';

@InterfaceType({ description: 'The fields every view of an article version has: the state it had, who made it and how.' })
export abstract class ArticleVersionInfo {
  @Field(() => Int, { description: 'The version; the article\'s ETag at that version was "v<version>".' }) version!: number;
  @Field() title!: string;
  @Field({ description: 'DRAFT | STABLE | DEPRECATED | ARCHIVED' }) status!: string;
  @Field({ description: "public | restricted (the article's own setting)" }) visibility!: string;
  @Field({ description: 'Key of the section the article was in.' }) section!: string;
  @Field(() => Int, { description: 'Its 0-based position in that section.' }) position!: number;
  @Field({
    description:
      'How the version came about: created, updated, status_changed, moved, proposal_approved, restored, synced (OpenAPI sync), ' +
      'detached (from the spec), or baseline (the state when history began).',
  })
  action!: string;
  @Field(() => [String], {
    description: 'The fields that differ from the previous version (title, markdown, status, visibility, section, position, apiState).',
  })
  changed!: string[];
  @Field(() => String, { nullable: true, description: "Why: an approved proposal's summary, or what a restore restored." })
  summary!: string | null;
  @Field(() => String, { nullable: true, description: 'The agent key that made this version (null for baseline versions).' })
  agentKeyId!: string | null;
  @Field(() => String, { nullable: true, description: "That key's member." }) memberId!: string | null;
  @Field(() => Int, { nullable: true, description: 'The approved proposal that made this version.' }) proposalId!: number | null;
  @Field(() => Int, { nullable: true, description: 'The version a restore brought back.' }) restoredFrom!: number | null;
  @Field(() => Int, { description: 'Markdown size in UTF-8 bytes.' }) size!: number;
  @Field(() => Date) createdAt!: Date;
}

@ObjectType({ implements: ArticleVersionInfo, description: 'One version of an article in its history (no Markdown).' })
export class ArticleRevisionEntry extends ArticleVersionInfo {}

@ObjectType({ implements: ArticleVersionInfo, description: 'One version of an article, with its Markdown.' })
export class ArticleRevision extends ArticleVersionInfo {
  @Field() markdown!: string;
}

@ObjectType()
export class ArticleRevisionPage extends PageOf(ArticleRevisionEntry) {}

@ObjectType({ description: 'A field whose value differs between the two versions.' })
export class ArticleFieldChange {
  @Field({ description: 'title, status, visibility, section or position' }) field!: string;
  @Field(() => GraphQLJSON, { description: 'The value at `from`.' }) from!: string | number;
  @Field(() => GraphQLJSON, { description: 'The value at `to`.' }) to!: string | number;
}

@ObjectType({ description: 'What changed between two versions of an article.' })
export class ArticleDiff {
  @Field() slug!: string;
  @Field(() => Int) from!: number;
  @Field(() => Int) to!: number;
  @Field(() => [ArticleFieldChange], { description: 'Changed fields other than the Markdown.' }) changes!: ArticleFieldChange[];
  @Field({
    description:
      'Unified diff of the Markdown (3 lines of context; empty hunks when it is unchanged). When the edit is too large to compute quickly, it ' +
      'replaces every line.',
  })
  diff!: string;
  @Field(() => Int, { description: 'Markdown lines added.' }) additions!: number;
  @Field(() => Int, { description: 'Markdown lines removed.' }) deletions!: number;
}
