/** Statements on members as the admin operations read and change them (managed entities). */
import type { RequiredEntityData } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Member } from '../entities/Member.js';
import type { Organization } from '../entities/Organization.js';

/** A member as a managed entity (changes to it are written when the transaction commits), if it exists. */
export function loadMember(em: EntityManager, id: string): Promise<Member | null> {
  return em.findOne(Member, { id });
}

/** Whether the organization has a member with this e-mail (as stored: trimmed, lower case). */
export async function memberEmailTaken(em: EntityManager, organization: Organization, email: string): Promise<boolean> {
  return (await em.count(Member, { organization, email })) > 0;
}

/** A new member, inserted when the transaction commits (its id is known at once). */
export function newMember(em: EntityManager, data: RequiredEntityData<Member>): Member {
  return em.create(Member, data);
}

/** A reference to the member with this id, for a foreign key (no statement: the member is not loaded). */
export function memberReference(em: EntityManager, id: string): Member {
  return em.getReference(Member, id);
}
