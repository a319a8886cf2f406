import { randomUUID } from 'node:crypto';
import { Entity, ManyToOne, PrimaryKey, Property } from '@mikro-orm/core';
import { Field, ID, ObjectType } from 'type-graphql';
import { Organization } from './Organization.js';

@ObjectType({ description: 'A documentation workspace; every workspace-scoped row carries its id.' })
@Entity({ tableName: 'workspaces' })
export class Workspace {
  @Field(() => ID)
  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @ManyToOne(() => Organization, { fieldName: 'organization_id', deleteRule: 'cascade' })
  organization!: Organization;

  @Field()
  @Property({ type: 'text' })
  name!: string;

  @Field(() => Date)
  @Property({ columnType: 'timestamptz', type: 'datetime' })
  createdAt: Date = new Date();

  /** Raised by the database at the commit of every change to the workspace's sections or articles (the sidebar tree's ETag). */
  @Property({ type: 'bigint', persist: false, lazy: true, hidden: true })
  contentRevision?: string;

  @Field(() => ID)
  organizationId(): string {
    return this.organization.id;
  }
}
