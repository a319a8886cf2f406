/**
 * Statements on agent_keys: the key lookup by digest (with its member and organization), the
 * last-used touch, and the keys the admin operations mint and change.
 */
import type { RequiredEntityData } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { KeyRow } from './keyRow.js';
import { sql, type SqlTarget } from '../db/sql.js';
import { AgentKey } from '../entities/AgentKey.js';

/**
 * The key lookup by digest (`$1`): the key, its member and organization, and whether the key is
 * usable now (so a rate-limit count can ride along in the same statement, see PostgresRateLimiter).
 */
export const KEY_LOOKUP_SQL = `select k.id, k.name, k.permissions, k.workspace_id, k.expires_at, k.revoked_at, k.last_used_at,
       m.id as member_id, m.role, m.two_factor_enabled,
       o.id as organization_id, o.plan, o.require_two_factor,
       (k.revoked_at is null and (k.expires_at is null or k.expires_at > now())) as usable
  from agent_keys k
  join members m on m.id = k.member_id
  join organizations o on o.id = k.organization_id
 where k.digest = $1`;

/** Runs KEY_LOOKUP_SQL for a digest. */
export async function lookupKey(db: SqlTarget, digest: string): Promise<KeyRow | undefined> {
  return (await sql<KeyRow>(db, KEY_LOOKUP_SQL.replace('$1', '?'), [digest]))[0];
}

/** Records when a key was last used. */
export async function touchKey(db: SqlTarget, id: string, at: Date): Promise<void> {
  await sql(db, 'update agent_keys set last_used_at = ? where id = ?', [at, id]);
}

/** A key as a managed entity (changes to it are written when the transaction commits), with its member loaded if asked; null if none has the id. */
export function loadAgentKey(em: EntityManager, id: string, withMember = false): Promise<AgentKey | null> {
  return withMember ? em.findOne(AgentKey, { id }, { populate: ['member'] }) : em.findOne(AgentKey, { id });
}

/** A new key, inserted when the transaction commits (its id is known at once). */
export function newAgentKey(em: EntityManager, data: RequiredEntityData<AgentKey>): AgentKey {
  return em.create(AgentKey, data);
}
