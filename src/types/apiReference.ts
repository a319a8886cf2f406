import { Field, Int, ObjectType } from 'type-graphql';

@ObjectType()
export class DriftedPage {
  @Field() slug!: string;
  @Field() operationKey!: string;
  @Field(() => String, { description: 'changed | removed' }) reason!: 'changed' | 'removed';
}

@ObjectType({
  description: 'What a sync did: operation keys added, changed (hash differs) and removed, and detached pages whose operation drifted.',
})
export class SyncPlan {
  @Field(() => [String]) added!: string[];
  @Field(() => [String]) changed!: string[];
  @Field(() => [String]) removed!: string[];
  @Field(() => Int) unchanged!: number;
  @Field(() => [DriftedPage]) drifted!: DriftedPage[];
}

@ObjectType({ description: 'The attached OpenAPI spec and its last sync.' })
export class ApiSpecStatus {
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
export class ApiPage {
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
export class DetachedSpec {
  @Field() detached!: boolean;
  @Field(() => Int) removedPages!: number;
}

@ObjectType()
export class ApiSection {
  @Field() key!: string;
  @Field() label!: string;
  @Field() visibility!: string;
  @Field(() => Int) articleCount!: number;
  @Field() tag!: string;
}
