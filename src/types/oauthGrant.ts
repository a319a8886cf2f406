import { Field, ID, ObjectType } from 'type-graphql';

@ObjectType({ description: "A member's consent to one OAuth client in one workspace: its tokens act for the member within these scopes." })
export class OAuthGrant {
  @Field(() => ID) id!: string;
  @Field(() => ID) organizationId!: string;
  @Field(() => ID) memberId!: string;
  @Field() memberEmail!: string;
  @Field(() => ID) workspaceId!: string;
  @Field() workspaceName!: string;
  @Field({ description: 'The client_id: a registration (wks_client_…) or the URL of its Client ID Metadata Document.' }) clientId!: string;
  @Field({ description: 'The name the client gave (verified by its domain only for metadata-document clients).' }) clientName!: string;
  @Field(() => [String], {
    description: 'The permissions granted (what was asked, capped by the role at consent; the role now caps them again).',
  })
  scopes!: string[];
  @Field({ description: 'The resource (audience) the tokens are bound to: …/mcp, …/api/v1 or the service.' }) resource!: string;
  @Field() createdAt!: Date;
  @Field(() => Date, { nullable: true }) lastUsedAt!: Date | null;
  @Field(() => Date, { nullable: true }) revokedAt!: Date | null;
}
