import { randomUUID } from 'node:crypto';
import { Entity, ManyToOne, PrimaryKey, Property, Unique } from '@mikro-orm/core';
import { Field, ID, ObjectType } from 'type-graphql';
import type { Role } from '../roles.js';
import { Organization } from './Organization.js';

@ObjectType({ description: 'A person in an organization; their role caps what their keys may do.' })
@Entity({ tableName: 'members' })
@Unique({ properties: ['organization', 'email'] })
export class Member {
  @Field(() => ID)
  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @ManyToOne(() => Organization, { fieldName: 'organization_id', deleteRule: 'cascade' })
  organization!: Organization;

  @Field()
  @Property({ type: 'text' })
  email!: string;

  @Field(() => String, { description: 'viewer | editor | admin | owner' })
  @Property({ type: 'text' })
  role: Role = 'viewer';

  @Field()
  @Property({ type: 'boolean' })
  twoFactorEnabled: boolean = false;

  @Field(() => Date)
  @Property({ columnType: 'timestamptz', type: 'datetime' })
  createdAt: Date = new Date();

  @Field(() => ID)
  organizationId(): string {
    return this.organization.id;
  }
}
