import { randomUUID } from 'node:crypto';
import { Entity, PrimaryKey, Property } from '@mikro-orm/core';
import { Field, ID, ObjectType } from 'type-graphql';
import type { Plan } from '../plans.js';

@ObjectType({ description: 'A customer organization: owns workspaces, members and their keys.' })
@Entity({ tableName: 'organizations' })
export class Organization {
  @Field(() => ID)
  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @Field()
  @Property({ type: 'text' })
  name!: string;

  @Field(() => String, { description: 'free | pro | enterprise' })
  @Property({ type: 'text' })
  plan: Plan = 'free';

  @Field()
  @Property({ type: 'boolean' })
  requireTwoFactor: boolean = false;

  @Field(() => Date)
  @Property({ columnType: 'timestamptz', type: 'datetime' })
  createdAt: Date = new Date();
}
