import { randomUUID } from 'node:crypto';
import { ArrayType, Entity, ManyToOne, PrimaryKey, Property } from '@mikro-orm/core';
import { Field, ID, ObjectType } from 'type-graphql';
import { Member } from './Member.js';
import { Organization } from './Organization.js';
import { Workspace } from './Workspace.js';

@ObjectType({ description: 'An agent key. The secret is shown once at creation and stored only as an HMAC digest.' })
@Entity({ tableName: 'agent_keys' })
export class AgentKey {
  @Field(() => ID)
  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @ManyToOne(() => Organization, { fieldName: 'organization_id', deleteRule: 'cascade' })
  organization!: Organization;

  @ManyToOne(() => Member, { fieldName: 'member_id', deleteRule: 'cascade' })
  member!: Member;

  /** The member who minted the key (a signed-in admin or owner); null when the admin token did. */
  @ManyToOne(() => Member, { fieldName: 'created_by_member_id', nullable: true, deleteRule: 'set null' })
  createdBy: Member | null = null;

  /** Bound workspace; null means the key is org-wide. */
  @ManyToOne(() => Workspace, { fieldName: 'workspace_id', nullable: true, deleteRule: 'cascade' })
  workspace: Workspace | null = null;

  @Field()
  @Property({ type: 'text' })
  name!: string;

  @Field(() => [String])
  @Property({ type: ArrayType, columnType: 'text[]' })
  permissions: string[] = [];

  /** HMAC-SHA256 of the secret under the server secret; looked up through its unique index. */
  @Property({ type: 'text', unique: 'agent_keys_digest_unique' })
  digest!: string;

  @Field(() => Date, { nullable: true })
  @Property({ columnType: 'timestamptz', type: 'datetime', nullable: true })
  expiresAt: Date | null = null;

  @Field(() => Date, { nullable: true })
  @Property({ columnType: 'timestamptz', type: 'datetime', nullable: true })
  revokedAt: Date | null = null;

  @Field(() => Date, { nullable: true })
  @Property({ columnType: 'timestamptz', type: 'datetime', nullable: true })
  lastUsedAt: Date | null = null;

  @Field(() => Date)
  @Property({ columnType: 'timestamptz', type: 'datetime' })
  createdAt: Date = new Date();

  @Field(() => ID)
  memberId(): string {
    return this.member.id;
  }

  @Field(() => ID, {
    nullable: true,
    description:
      'The member who minted the key (a signed-in admin or owner), or null when the admin token did. ' +
      'The key acts, and is audited, as its own member (memberId).',
  })
  createdByMemberId(): string | null {
    return this.createdBy?.id ?? null;
  }

  @Field(() => ID, { nullable: true, description: 'The bound workspace, or null for an org-wide key.' })
  workspaceId(): string | null {
    return this.workspace?.id ?? null;
  }
}
