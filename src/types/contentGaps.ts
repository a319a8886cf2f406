import { Field, Float, Int, ObjectType } from 'type-graphql';
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

@ObjectType({ description: 'A memory note that answers questions of a content-gap group.' })
export class GapNote {
  @Field() path!: string;
  @Field() kind!: string;
  @Field(() => [String]) tags!: string[];
  @Field(() => Int, { description: 'The version quoted.' }) version!: number;
  @Field(() => Date) updatedAt!: Date;
  @Field(() => Int, {
    description: "How many of the group's questions it answers (in full text, it holds at least half of the question's weight).",
  })
  answers!: number;
  @Field(() => Float, { description: "The largest share of a question's weight (by idf) it holds, 0–1." }) coverage!: number;
  @Field({ description: 'The first 280 characters of its body.' }) excerpt!: string;
}

@ObjectType({
  description: 'A new-article draft that answers a content-gap group, seeded with the memory notes that answer its questions.',
})
export class GapDraft {
  @Field(() => ContentGap) group!: ContentGap;
  @Field(() => [String], { description: 'The questions asked of the notes: the group’s newest, scrubbed.' }) questions!: string[];
  @Field(() => [GapNote], { description: 'Notes that answer its questions, those answering most first (at most 5).' })
  notes!: GapNote[];
  @Field({ description: 'The group’s label.' }) title!: string;
  @Field({ description: 'Its questions, then each note under a heading with its path and version.' }) markdown!: string;
  @Field({ description: 'What the draft answers and which notes it comes from, for the reviewer.' }) summary!: string;
}
