import type { EntityManager } from '@mikro-orm/postgresql';
import type { RequestContext } from '../context.js';
import type { Params, Row, SqlTarget } from '../db/sql.js';
import type { AuditEvent } from '../entities/AuditEvent.js';
import { signalWebhookWork, type Touched } from '../webhooks/signal.js';
import { eventPayloads, latestWorkspaceEvents, queueEvent, writeWithEvents, type EventedWrite } from '../store/events.js';
import type { EventType } from '../webhooks/events.js';

export interface AuditInput {
  action: EventType;
  targetType: string;
  targetId: string | number | null;
  workspaceId?: string | null;
  organizationId?: string | null;
  /** What the webhook's `data` carries besides the event's columns: `object`, `previous`, `truncated` (see eventPayload). */
  payload?: Record<string, unknown> | null;
}

/** Who an event is recorded under: the request's caller (an agent key, a signed-in member, or the admin token). */
export type EventCaller = Pick<RequestContext, 'principal' | 'requestId' | 'adminActing'>;

/**
 * Records a successful mutation as one event: the audit trail's row and the webhook outbox's at
 * once (the dispatcher reads events in commit order; see WebhookDispatcher). The event is queued
 * in the transaction of `em` and written in it just before it commits (one statement for all of
 * the transaction's events, in the order recorded), or not at all; without a transaction it throws.
 *
 * Which event path — the write's transaction decides: a write inside a transaction
 * (`em.transactional`) records its events with recordAudit on that transaction's EntityManager,
 * after the writes they describe; a write that is one statement outside any transaction records
 * them with auditedWrite, in that statement. Never auditedWrite inside a transaction (its event
 * would be written ahead of the events queued before it, and webhooks and live subscribers get
 * events in the order written); never a second statement for a lone write's event (a failure
 * between the two would lose it).
 */
export function recordAudit(em: EntityManager, ctx: EventCaller, input: AuditInput): void {
  queueEvent(em, eventValues(ctx, input));
  signalWebhookWork(touchedBy(input));
}

/** What the live hub hears a write touched (see signalWebhookWork). */
function touchedBy(input: AuditInput): Touched {
  return {
    workspaceId: input.workspaceId ?? null,
    action: input.action,
    targetType: input.targetType,
    targetId: input.targetId === null ? null : String(input.targetId),
  };
}

/** The event row's values, in EVENT_COLUMNS order. */
function eventValues(ctx: EventCaller, input: AuditInput): unknown[] {
  const p = ctx.principal;
  const agent = p.kind === 'agent' ? p : null;
  // A signed-in person's action is recorded under their member, with no key.
  const person = p.kind === 'member' ? p : null;
  return [
    input.organizationId ??
      agent?.organizationId ??
      person?.organizationId ??
      (input.workspaceId ? ctx.adminActing.get(input.workspaceId) : null) ??
      null,
    input.workspaceId ?? null,
    // An OAuth token acts for its member (member_id) through a grant, not a key; a signed-in person under their member, with no key.
    agent?.oauth ? 'oauth' : agent ? 'agent' : person ? 'member' : 'admin',
    agent?.oauth ? null : (agent?.keyId ?? null),
    agent?.memberId ?? person?.memberId ?? null,
    input.action,
    input.targetType,
    input.targetId === null ? null : String(input.targetId),
    ctx.requestId,
    new Date(),
    input.payload ? JSON.stringify(input.payload) : null,
  ];
}

/**
 * Runs a write (`write`: a data-modifying statement with RETURNING, or a select of rows a
 * data-modifying CTE in `with` returned) and, in the same statement, writes an event (the audit
 * trail's and the webhook outbox's row) for each row it returns — none when it wrote none; resolves
 * with those rows. `params` fill the `?` of `with`, then of `write` (or their `:name` placeholders).
 * With `actionColumn`, each row's event type is that column of the row (when one statement may
 * update or create) instead of `input.action`; with `payloadColumn`, that column (jsonb) is the
 * event's payload; `name` prepares the statement once per connection (see `sql`). Outside a
 * transaction that is one round trip and one atomic commit: the events exist exactly when the
 * write does.
 *
 * Which event path — the write's transaction decides: a write that is one statement outside any
 * transaction (autocommit, `ctx.db`) records its events with auditedWrite, in that statement; a
 * write inside a transaction (`em.transactional`) records them with recordAudit on that
 * transaction's EntityManager. Never auditedWrite inside a transaction (its event would be written
 * ahead of the events queued before it, and webhooks and live subscribers get events in the order
 * written); never a second statement for a lone write's event (a failure between the two would lose
 * it).
 */
export async function auditedWrite<T = Row>(
  em: SqlTarget,
  ctx: EventCaller,
  input: AuditInput,
  statement: EventedWrite,
  params: Params,
): Promise<T[]> {
  const rows = await writeWithEvents<T>(em, statement, params, eventValues(ctx, input));
  const column = statement.actionColumn;
  // With actionColumn, each row's event type is its own (returned with it, or unknown): one signal per type written.
  const actions = new Set(rows.map((row) => (column ? (row as Row)[column] : input.action)));
  for (const action of actions)
    signalWebhookWork(typeof action === 'string' ? touchedBy({ ...input, action: action as EventType }) : undefined);
  return rows;
}

/** The newest audit events of a workspace. */
export async function listAuditEvents(em: EntityManager, workspaceId: string, limit: number): Promise<AuditEvent[]> {
  const events = await latestWorkspaceEvents(em, workspaceId, limit);
  if (!events.length) return events;
  const payloads = await eventPayloads(
    em,
    events.map((e) => e.id),
  );
  const byId = new Map(payloads.map((p) => [p.id, p.payload]));
  for (const event of events) event.payload = byId.get(String(event.id)) ?? null;
  return events;
}
