import type { EntityManager } from '@mikro-orm/postgresql';
import type { RequestContext } from '../context.js';
import { AuditEvent } from '../entities/AuditEvent.js';

export interface AuditInput {
  action: string;
  targetType: string;
  targetId: string | number | null;
  workspaceId?: string | null;
  organizationId?: string | null;
}

/** Records a successful mutation; call it with the transaction's EntityManager so both commit together. */
export function recordAudit(em: EntityManager, ctx: RequestContext, input: AuditInput): AuditEvent {
  const p = ctx.principal;
  const event = em.create(AuditEvent, {
    action: input.action,
    targetType: input.targetType,
    targetId: input.targetId === null ? null : String(input.targetId),
    workspaceId: input.workspaceId ?? null,
    organizationId: input.organizationId ?? (p.kind === 'agent' ? p.organizationId : null),
    actor: p.kind === 'agent' ? 'agent' : 'admin',
    agentKeyId: p.kind === 'agent' ? p.keyId : null,
    memberId: p.kind === 'agent' ? p.memberId : null,
    requestId: ctx.requestId,
    createdAt: new Date(),
  });
  em.persist(event);
  return event;
}

/** The newest audit events of a workspace. */
export async function listAuditEvents(em: EntityManager, workspaceId: string, limit: number): Promise<AuditEvent[]> {
  return em.find(AuditEvent, { workspaceId }, { orderBy: { createdAt: 'desc', id: 'desc' }, limit });
}
