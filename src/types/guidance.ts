import { Field, ID, ObjectType } from 'type-graphql';

@ObjectType({
  description: "A workspace's guidance for agents: how they should use this workspace, in Markdown, written by its administrators.",
})
export class WorkspaceGuidance {
  @Field(() => ID) workspaceId!: string;
  @Field({ description: 'Markdown, at most 4 KiB; empty when the workspace has none.' }) markdown!: string;
  @Field(() => Date, { nullable: true, description: 'When it was last set; null: never.' }) updatedAt!: Date | null;
}
