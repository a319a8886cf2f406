import { randomBytes } from 'node:crypto';
import type { EventSubscriber, TransactionEventArgs } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { RequestContext } from '../context.js';
import { sql, type SqlTarget } from '../db/sql.js';
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
  const rows = queued.get(em) ?? [];
  queued.set(em, rows);
  rows.push(auditValues(ctx, input));
  signalWebhookWork();
}

/** The audit row's 10 values, then the outbox row's 6 (see AUDIT_COLUMNS and OUTBOX_COLUMNS); the action is at ACTION_AT in both. */
function auditValues(ctx: RequestContext, input: AuditInput): unknown[] {
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
  return [
    organizationId, workspaceId, p.kind === 'agent' ? 'agent' : 'admin', p.kind === 'agent' ? p.keyId : null, p.kind === 'agent' ? p.memberId : null,
    input.action, input.targetType, targetId, ctx.requestId, now,
    `msg_${randomBytes(16).toString('base64url')}`, organizationId, workspaceId, input.action, JSON.stringify(payload), now,
  ];
}

const ACTION_AT = { audit: 5, outbox: 13 };
const AUDIT_COLUMNS = 'organization_id, workspace_id, actor, agent_key_id, member_id, action, target_type, target_id, request_id, created_at';
const AUDIT_VALUES = (action = '?') => `?::uuid, ?::uuid, ?, ?::uuid, ?::uuid, ${action}, ?, ?, ?, ?`;
const OUTBOX_COLUMNS = 'id, organization_id, workspace_id, type, payload, fanned_out, created_at';
const OUTBOX_VALUES = (type = '?') => `?, ?::uuid, ?::uuid, ${type}, ?::jsonb, false, ?`;

/**
 * Runs a write (`write`: a data-modifying statement with RETURNING, or a select of rows a
 * data-modifying CTE in `with` returned) and, in the same statement, writes an audit event and an
 * outbox event for each row it returns; resolves with those rows. `params` fill the `?` of
 * `with`, then of `write`. With `actionColumn`, each row's event type is that column of the row
 * (when one statement may update or create) instead of `input.action`; `name` prepares the
 * statement once per connection (see `sql`). Outside a transaction
 * that is one round trip and one atomic commit: the events exist exactly when the write does.
 */
export async function auditedWrite(
  em: SqlTarget, ctx: RequestContext, input: AuditInput,
  statement: { with?: string; write: string; actionColumn?: string; name?: string }, params: readonly unknown[],
): Promise<Record<string, any>[]> {
  const action = statement.actionColumn ? `written.${statement.actionColumn}` : undefined;
  const values = auditValues(ctx, input).filter((_, i) => !action || (i !== ACTION_AT.audit && i !== ACTION_AT.outbox));
  const rows = await sql(
    em,
    `with ${statement.with ? `${statement.with},` : ''} written as (${statement.write}),
     audit as (insert into audit_events (${AUDIT_COLUMNS}) select ${AUDIT_VALUES(action)} from written),
     outbox as (insert into webhook_events (${OUTBOX_COLUMNS}) select ${OUTBOX_VALUES(action)} from written)
     select * from written`,
    [...params, ...values],
    statement.name,
  );
  if (rows.length) signalWebhookWork();
  return rows;
}

/** Writes the audit and outbox rows queued by recordAudit, inside the transaction, before COMMIT. */
export const auditOutboxWriter: EventSubscriber = {
  async beforeTransactionCommit({ em, transaction }: TransactionEventArgs) {
    const rows = queued.get(em as EntityManager);
    if (!rows?.length) return;
    queued.delete(em as EntityManager);
    const audit = rows.map(() => `(${AUDIT_VALUES()})`).join(', ');
    const outbox = rows.map(() => `(${OUTBOX_VALUES()})`).join(', ');
    await (em as EntityManager).getConnection().execute(
      `with audit as (insert into audit_events (${AUDIT_COLUMNS}) values ${audit})
       insert into webhook_events (${OUTBOX_COLUMNS}) values ${outbox}`,
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
