/**
 * OAuth grants, the one home of each: a grant created when its code is redeemed, its token pairs
 * issued, the grant (its whole token family) revoked, and the grants a caller may list and revoke
 * over GraphQL and in the console.
 */
import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Ownership, Permit } from '../auth/policies.js';
import { announceAuthChange, signalAuthChanged } from '../auth/keyCache.js';
import { digestSecret, newSecret } from '../auth/keys.js';
import type { AgentPrincipal, RequestContext } from '../context.js';
import { invalidField, NotFoundError } from '../errors.js';
import { isUuid } from '../ids.js';
import { recordAudit } from '../services/audit.js';
import { findGrant, insertGrant, listGrants, revokeGrantRow, type GrantRow, type NewGrant } from '../store/oauthGrants.js';
import { insertToken } from '../store/oauthTokens.js';
import { OAuthGrant } from '../types/oauthGrant.js';
import type { OAuthSettings } from './oauthSettings.js';
import { ACCESS_PREFIX, REFRESH_PREFIX } from './secrets.js';
import { inTransaction } from '../store/unitOfWork.js';

/** Whose grants a caller may see and revoke: an organization's (all of them, or one member's). */
interface GrantViewer {
  organizationId: string;
  /** Only this member's grants; null: every member's. */
  memberId: string | null;
}

/**
 * A signed-in member sees and revokes their own grants, and every member's of their organization
 * when the operation's policy permits it (`grants.others`); the admin token names the organization
 * and sees all of it.
 */
function viewerOf(ctx: RequestContext, organizationId: string | null | undefined, permit: Permit<Ownership>): GrantViewer {
  const p = ctx.principal;
  if (p.kind === 'member') {
    if (organizationId && organizationId.toLowerCase() !== p.organizationId) throw new NotFoundError('Organization');
    return { organizationId: p.organizationId, memberId: permit({ own: false }) ? null : p.memberId };
  }
  if (!organizationId || !isUuid(organizationId)) throw invalidField('organizationId', 'the admin token must name an organization id');
  return { organizationId: organizationId.toLowerCase(), memberId: null };
}

function toGrant(row: GrantRow): OAuthGrant {
  return Object.assign(new OAuthGrant(), {
    id: row.id,
    organizationId: row.organization_id,
    memberId: row.member_id,
    memberEmail: row.member_email,
    workspaceId: row.workspace_id,
    workspaceName: row.workspace_name,
    clientId: row.client_id,
    clientName: row.client_name,
    scopes: row.scopes,
    resource: row.resource,
    createdAt: new Date(row.created_at),
    lastUsedAt: row.last_used_at ? new Date(row.last_used_at) : null,
    revokedAt: row.revoked_at ? new Date(row.revoked_at) : null,
  });
}

/** The live OAuth grants the caller may see, newest first (optionally one member's). */
export async function listOAuthGrants(
  ctx: RequestContext,
  args: { organizationId?: string | null; memberId?: string | null },
  permit: Permit<Ownership>,
): Promise<OAuthGrant[]> {
  const viewer = viewerOf(ctx, args.organizationId, permit);
  if (args.memberId && !isUuid(args.memberId)) throw invalidField('memberId', 'must be a member id');
  const memberId = viewer.memberId ?? args.memberId?.toLowerCase() ?? null;
  return (await listGrants(ctx.db, viewer.organizationId, memberId)).map(toGrant);
}

/**
 * Revokes a grant: its access and refresh tokens stop working in every process within seconds
 * (the key cache's change notification). Recorded in the audit trail; 404 for a grant the caller
 * may not see.
 */
export async function revokeOAuthGrant(
  ctx: RequestContext,
  id: string,
  organizationId: string | null | undefined,
  permit: Permit<Ownership>,
): Promise<OAuthGrant> {
  const viewer = viewerOf(ctx, organizationId, permit);
  const grant = isUuid(id) ? await findGrant(ctx.db, id.toLowerCase()) : undefined;
  if (!grant || grant.organization_id !== viewer.organizationId || (viewer.memberId && grant.member_id !== viewer.memberId))
    throw new NotFoundError('OAuth grant');
  await inTransaction(ctx.em, async (em: EntityManager) => {
    if (!(await revokeGrantIn(em, grant.id, 'revoked in the console or over GraphQL'))) return;
    recordAudit(em, ctx, {
      action: 'oauth_grant.revoked',
      targetType: 'oauth_grant',
      targetId: grant.id,
      workspaceId: grant.workspace_id,
      organizationId: grant.organization_id,
      payload: { object: { clientId: grant.client_id, clientName: grant.client_name, memberId: grant.member_id } },
    });
  });
  signalAuthChanged();
  return toGrant((await findGrant(ctx.db, grant.id))!);
}

/** What a grant is made of when its authorization code is redeemed (its store row, less the id). */
export type { NewGrant };

/**
 * Creates the grant a redeemed code starts (the family its tokens belong to), inside `em`'s
 * transaction, recorded in the audit trail under the member who consented. Returns its id.
 */
export async function createOAuthGrant(em: EntityManager, grant: NewGrant, requestId: string): Promise<string> {
  const id = randomUUID();
  await insertGrant(em, { id, ...grant });
  // The event's actor is the grant acting for its member (what eventValues reads of a context).
  const principal = {
    kind: 'agent',
    keyId: id,
    memberId: grant.memberId,
    organizationId: grant.organizationId,
    oauth: {},
  } as AgentPrincipal;
  const actor = { principal, requestId, adminActing: new Map<string, string>() } as unknown as RequestContext;
  recordAudit(em, actor, {
    action: 'oauth_grant.created',
    targetType: 'oauth_grant',
    targetId: id,
    workspaceId: grant.workspaceId,
    organizationId: grant.organizationId,
    payload: { object: { clientId: grant.clientId, clientName: grant.clientName, scopes: grant.scopes, resource: grant.resource } },
  });
  return id;
}

/** What the token endpoint answers (RFC 6749 §5.1). */
export interface TokenAnswer {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
}

/** Issues a new access and refresh token pair of a grant (only their digests are stored). */
export async function issueTokens(
  em: EntityManager,
  serverSecret: string,
  settings: Pick<OAuthSettings, 'accessTokenTtlS' | 'refreshTokenTtlS'>,
  grantId: string,
  scopes: readonly string[],
): Promise<TokenAnswer> {
  const access = newSecret(ACCESS_PREFIX);
  const refresh = newSecret(REFRESH_PREFIX);
  const now = Date.now();
  await insertToken(em, grantId, 'access', digestSecret(serverSecret, access), new Date(now + settings.accessTokenTtlS * 1000));
  await insertToken(em, grantId, 'refresh', digestSecret(serverSecret, refresh), new Date(now + settings.refreshTokenTtlS * 1000));
  return {
    access_token: access,
    token_type: 'Bearer',
    expires_in: settings.accessTokenTtlS,
    refresh_token: refresh,
    scope: scopes.join(' '),
  };
}

/**
 * Revokes a grant and every token of it, inside `em`'s transaction, and tells every process's key
 * cache at commit (call `signalAuthChanged` after the commit for this one's).
 */
export async function revokeGrantIn(em: EntityManager, grantId: string, reason: string): Promise<boolean> {
  const revoked = await revokeGrantRow(em, grantId, reason);
  await announceAuthChange(em);
  return revoked;
}

/** Revokes a grant in its own transaction: in force in every process within seconds. */
export async function revokeGrant(em: EntityManager, grantId: string, reason: string): Promise<boolean> {
  const revoked = await inTransaction(em, (trx) => revokeGrantIn(trx, grantId, reason));
  signalAuthChanged();
  return revoked;
}
