import { Field, Int, ObjectType } from 'type-graphql';
import { PageOf } from './page.js';
import { CallerCount } from './activity.js';

@ObjectType({ description: 'An open group of similar unanswered questions (content-gap reports and zero-result searches).' })
export class ContentGap {
  @Field(() => Int) id!: number;
  @Field({ description: 'The first question of the group (scrubbed).' }) label!: string;
  @Field(() => Int, { description: 'Reports and zero-result searches in the group.' }) questionCount!: number;
  @Field(() => Int) reportCount!: number;
  @Field(() => Int) searchCount!: number;
  @Field(() => Date) firstSeen!: Date;
  @Field(() => Date) lastSeen!: Date;
  @Field(() => [String], {
    description: 'Up to 3 of its questions, newest first, with e-mail addresses, secrets and phone numbers replaced.',
  })
  sampleQuestions!: string[];
  @Field(() => String, { nullable: true, description: 'Slug of the closest article, when one is close and the key may see it.' })
  nearestArticle!: string | null;
  @Field({ description: 'open, or proposed when a proposal made from the group waits for review' }) state!: string;
  @Field(() => Int, { nullable: true, description: 'That proposal.' }) proposalId!: number | null;
  @Field(() => [CallerCount], { description: 'Its questions by door and kind of caller, most first: who asks, agents or people.' })
  askedBy!: CallerCount[];
}

@ObjectType()
export class ContentGapPage extends PageOf(ContentGap) {}
