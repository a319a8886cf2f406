import { randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { RequestContext } from '../context.js';
import { AuditEvent } from '../entities/AuditEvent.js';
import { WebhookEvent } from '../entities/Webhook.js';
import { signalWebhookWork } from '../webhooks/signal.js';
import type { EventType } from '../webhooks/events.js';

export interface AuditInput {
  action: EventType;
  targetType: string;
  targetId: string | number | null;
  workspaceId?: string | null;
  organizationId?: string | null;
}

/**
 * Records a successful mutation: its audit event and its outbound webhook event (the outbox).
 * Call it with the transaction's EntityManager, so both commit or roll back with the change.
 */
export function recordAudit(em: EntityManager, ctx: RequestContext, input: AuditInput): AuditEvent {
  const p = ctx.principal;
  const now = new Date();
  const organizationId = input.organizationId ?? (p.kind === 'agent' ? p.organizationId : null);
  const event = em.create(AuditEvent, {
    action: input.action,
    targetType: input.targetType,
    targetId: input.targetId === null ? null : String(input.targetId),
    workspaceId: input.workspaceId ?? null,
    organizationId,
    actor: p.kind === 'agent' ? 'agent' : 'admin',
    agentKeyId: p.kind === 'agent' ? p.keyId : null,
    memberId: p.kind === 'agent' ? p.memberId : null,
    requestId: ctx.requestId,
    createdAt: now,
  });
  em.persist(event);
  em.persist(
    em.create(WebhookEvent, {
      id: `msg_${randomBytes(16).toString('base64url')}`,
      organizationId,
      workspaceId: input.workspaceId ?? null,
      type: input.action,
      payload: {
        workspaceId: input.workspaceId ?? null,
        organizationId,
        target: { type: input.targetType, id: event.targetId },
        actor: p.kind === 'agent' ? { type: 'agent', agentKeyId: p.keyId, memberId: p.memberId } : { type: 'admin' },
        requestId: ctx.requestId,
      },
      fannedOut: false,
      createdAt: now,
    }),
  );
  signalWebhookWork();
  return event;
}

/** The newest audit events of a workspace. */
export async function listAuditEvents(em: EntityManager, workspaceId: string, limit: number): Promise<AuditEvent[]> {
  return em.find(AuditEvent, { workspaceId }, { orderBy: { createdAt: 'desc', id: 'desc' }, limit });
}
