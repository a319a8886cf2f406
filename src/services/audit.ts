import { randomBytes } from 'node:crypto';
import type { EventSubscriber, TransactionEventArgs } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { RequestContext } from '../context.js';
import { AuditEvent } from '../entities/AuditEvent.js';
import { signalWebhookWork } from '../webhooks/signal.js';
import type { EventType } from '../webhooks/events.js';

export interface AuditInput {
  action: EventType;
  targetType: string;
  targetId: string | number | null;
  workspaceId?: string | null;
  organizationId?: string | null;
}

/** Rows recorded in a transaction, written by AuditOutboxWriter just before it commits. */
const queued = new WeakMap<EntityManager, unknown[][]>();

/**
 * Records a successful mutation: its audit event and its outbound webhook event (the outbox).
 * Call it with the transaction's EntityManager: both rows are written in that transaction, just
 * before it commits (one statement for all of the transaction's events), or not at all.
 */
export function recordAudit(em: EntityManager, ctx: RequestContext, input: AuditInput): void {
  if (!em.isInTransaction()) throw new Error('recordAudit needs the EntityManager of a transaction');
  const p = ctx.principal;
  const now = new Date();
  const organizationId = input.organizationId ?? (p.kind === 'agent' ? p.organizationId : null);
  const workspaceId = input.workspaceId ?? null;
  const targetId = input.targetId === null ? null : String(input.targetId);
  const payload = {
    workspaceId,
    organizationId,
    target: { type: input.targetType, id: targetId },
    actor: p.kind === 'agent' ? { type: 'agent', agentKeyId: p.keyId, memberId: p.memberId } : { type: 'admin' },
    requestId: ctx.requestId,
  };
  const rows = queued.get(em) ?? [];
  queued.set(em, rows);
  rows.push([
    organizationId, workspaceId, p.kind === 'agent' ? 'agent' : 'admin', p.kind === 'agent' ? p.keyId : null, p.kind === 'agent' ? p.memberId : null,
    input.action, input.targetType, targetId, ctx.requestId, now,
    `msg_${randomBytes(16).toString('base64url')}`, organizationId, workspaceId, input.action, JSON.stringify(payload), now,
  ]);
  signalWebhookWork();
}

/** Writes the audit and outbox rows queued by recordAudit, inside the transaction, before COMMIT. */
export const auditOutboxWriter: EventSubscriber = {
  async beforeTransactionCommit({ em, transaction }: TransactionEventArgs) {
    const rows = queued.get(em as EntityManager);
    if (!rows?.length) return;
    queued.delete(em as EntityManager);
    const audit = rows.map(() => '(?::uuid, ?::uuid, ?, ?::uuid, ?::uuid, ?, ?, ?, ?, ?)').join(', ');
    const outbox = rows.map(() => '(?, ?::uuid, ?::uuid, ?, ?::jsonb, false, ?)').join(', ');
    await (em as EntityManager).getConnection().execute(
      `with audit as (insert into audit_events (organization_id, workspace_id, actor, agent_key_id, member_id, action, target_type, target_id, request_id, created_at) values ${audit})
       insert into webhook_events (id, organization_id, workspace_id, type, payload, fanned_out, created_at) values ${outbox}`,
      [...rows.flatMap((r) => r.slice(0, 10)), ...rows.flatMap((r) => r.slice(10))],
      'run',
      transaction,
    );
  },
};

/** The newest audit events of a workspace. */
export async function listAuditEvents(em: EntityManager, workspaceId: string, limit: number): Promise<AuditEvent[]> {
  return em.find(AuditEvent, { workspaceId }, { orderBy: { createdAt: 'desc', id: 'desc' }, limit });
}
