import { Field, Int, ObjectType, registerEnumType } from 'type-graphql';

@ObjectType({ description: 'Questions of a content-gap group asked through one door by one kind of caller.' })
export class CallerCount {
  @Field({ description: 'rest | mcp | graphql | console (unknown: asked before doors were recorded)' }) door!: string;
  @Field({ description: 'agent_key | oauth_grant (agents) | member (people) | admin_token (unknown: asked before callers were recorded)' })
  caller!: string;
  @Field(() => Int) questions!: number;
}

@ObjectType({ description: "A workspace's use on one UTC day through one door by one kind of caller." })
export class ActivityDay {
  @Field({ description: 'The day, YYYY-MM-DD (UTC).' }) day!: string;
  @Field({ description: 'rest | mcp | graphql | console (unknown: before doors were recorded)' }) door!: string;
  @Field({ description: 'agent_key | oauth_grant (agents) | member (people) | admin_token' }) caller!: string;
  @Field(() => Int, { description: 'Operations that read (REST GETs, MCP read tools, GraphQL queries).' }) reads!: number;
  @Field(() => Int, { description: 'Operations that write.' }) writes!: number;
  @Field(() => Int, { description: 'Searches (also counted among the reads).' }) searches!: number;
  @Field(() => Int, { description: 'Content-gap reports (also counted among the writes).' }) contentGaps!: number;
}

/** Agents (agent keys and apps with an OAuth grant) or people (signed-in members). */
export enum Audience {
  AGENTS = 'agents',
  PEOPLE = 'people',
}
registerEnumType(Audience, {
  name: 'Audience',
  description: 'AGENTS: agent keys and apps with an OAuth grant; PEOPLE: signed-in members.',
});

/** The kinds of caller of each audience. */
export const AUDIENCE_CALLERS: Record<Audience, readonly string[]> = {
  [Audience.AGENTS]: ['agent_key', 'oauth_grant'],
  [Audience.PEOPLE]: ['member'],
};
