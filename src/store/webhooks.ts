/** Statements on webhooks, webhook_deliveries, webhook_attempts and the old outbox webhook_events: subscriptions, deliveries and their attempts. */
import type { RequiredEntityData } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { pgArray, sql, type SqlTarget } from '../db/sql.js';
import { Webhook, WebhookAttempt, WebhookDelivery } from '../entities/Webhook.js';

/** A subscription as a managed entity (changes to it are written when the transaction commits), if it exists. */
export function loadWebhook(em: EntityManager, id: string): Promise<Webhook | null> {
  return em.findOne(Webhook, { id });
}

/** A new subscription, inserted when the transaction commits. */
export function newWebhook(em: EntityManager, data: RequiredEntityData<Webhook>): Webhook {
  return em.create(Webhook, data);
}

/** An organization's subscriptions, oldest first. */
export function webhooksOf(em: EntityManager, organizationId: string): Promise<Webhook[]> {
  return em.find(Webhook, { organizationId }, { orderBy: { createdAt: 'asc' } });
}

/** A subscription's latest `limit` deliveries, newest first. */
export function deliveriesOf(em: EntityManager, webhookId: string, limit: number): Promise<WebhookDelivery[]> {
  return em.find(WebhookDelivery, { webhookId }, { orderBy: { id: 'desc' }, limit });
}

/** The attempts of these deliveries, in the order they were made. */
export function attemptsOf(em: EntityManager, deliveryIds: number[]): Promise<WebhookAttempt[]> {
  return em.find(WebhookAttempt, { deliveryId: { $in: deliveryIds } }, { orderBy: { id: 'asc' } });
}

/** Deletes a subscription (deliveries still due then fail as 'subscription deleted'). */
export async function deleteWebhookRow(db: SqlTarget, id: string): Promise<void> {
  await sql(db, 'delete from webhooks where id = ?', [id]);
}

/** A subscription that could receive an event. */
export interface HookRow {
  id: string;
  organization_id: string;
  workspace_id: string | null;
  events: string[] | null;
  created_at: string;
}

/** The enabled subscriptions of these organizations. */
export function enabledHooksOf(db: SqlTarget, organizationIds: string[]): Promise<HookRow[]> {
  return sql<HookRow>(
    db,
    'select id, organization_id, workspace_id, events, created_at from webhooks where enabled and organization_id = any(?::uuid[])',
    [pgArray(organizationIds)],
  );
}

/** Inserts pending deliveries, each (message id, event type, webhook id, event id), 200 a statement; one already there is skipped. */
export async function insertDeliveries(db: SqlTarget, rows: [string, string, string, string][]): Promise<void> {
  for (let i = 0; i < rows.length; i += 200) {
    const part = rows.slice(i, i + 200);
    await sql(
      db,
      `insert into webhook_deliveries (event_id, event_type, webhook_id, event_seq, status, attempts, next_attempt_at, created_at)
         values ${part.map(() => `(?, ?, ?, ?::bigint, 'pending', 0, clock_timestamp(), clock_timestamp())`).join(', ')} on conflict do nothing`,
      part.flat(),
    );
  }
}

/** A delivery claimed for an attempt. */
export interface DeliveryRow {
  id: number;
  event_id: string;
  event_seq: string | null;
  webhook_id: string;
  attempts: number;
}

/** Claims up to `batch` due deliveries for `leaseSeconds`, earliest due first, skipping rows another process holds. */
export function claimDueDeliveries(db: SqlTarget, leaseSeconds: number, batch: number): Promise<DeliveryRow[]> {
  return sql<DeliveryRow>(
    db,
    `update webhook_deliveries d set lease_until = clock_timestamp() + interval '${leaseSeconds} seconds'
         from (select id from webhook_deliveries where status = 'pending' and next_attempt_at <= clock_timestamp()
                 and (lease_until is null or lease_until < clock_timestamp())
               order by next_attempt_at limit ${batch} for update skip locked) c
        where d.id = c.id
        returning d.id, d.event_id, d.event_seq, d.webhook_id, d.attempts`,
  );
}

/** A subscription's target, secret and state. */
export async function findHookTarget(db: SqlTarget, id: string): Promise<{ url: string; secret: string; enabled: boolean } | undefined> {
  const [hook] = await sql<{ url: string; secret: string; enabled: boolean }>(
    db,
    'select url, secret, enabled from webhooks where id = ?',
    [id],
  );
  return hook;
}

/** Fails a delivery for good without an attempt, with the reason. */
export async function failDelivery(db: SqlTarget, id: number, reason: string): Promise<void> {
  await sql(db, `update webhook_deliveries set status = 'failed', last_error = ?, lease_until = null where id = ?`, [reason, id]);
}

/** One delivery attempt as recorded. */
export interface AttemptRecord {
  deliveryId: number;
  attemptedAt: Date;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
}

/** Records one attempt of a delivery. */
export async function insertAttempt(db: SqlTarget, attempt: AttemptRecord): Promise<void> {
  await sql(db, 'insert into webhook_attempts (delivery_id, attempted_at, status_code, duration_ms, error) values (?, ?, ?, ?, ?)', [
    attempt.deliveryId,
    attempt.attemptedAt,
    attempt.statusCode,
    attempt.durationMs,
    attempt.error,
  ]);
}

/** What follows an attempt: the delivery's state, attempts, last answer and error, and the next attempt's time (null: unchanged). */
export interface DeliverySettlement {
  state: string;
  attempts: number;
  statusCode: number | null;
  lastError: string | null;
  next: Date | null;
}

/** Settles a delivery after an attempt and frees its lease (a delivered one gets its delivery time). */
export async function settleDelivery(db: SqlTarget, id: number, s: DeliverySettlement): Promise<void> {
  await sql(
    db,
    `update webhook_deliveries set status = ?, attempts = ?, last_status_code = ?, last_error = ?, lease_until = null,
           delivered_at = case when ? = 'delivered' then clock_timestamp() else delivered_at end, next_attempt_at = coalesce(?, next_attempt_at)
         where id = ?`,
    [s.state, s.attempts, s.statusCode, s.lastError, s.state, s.next, id],
  );
}

/** Disables a subscription whose receiver answered 410 Gone. */
export async function disableGoneWebhook(db: SqlTarget, id: string): Promise<void> {
  await sql(db, `update webhooks set enabled = false, disabled_reason = 'receiver answered 410 Gone' where id = ?`, [id]);
}

/** An event as the dispatcher sends it: its message id, type, webhook `data` and time. */
export interface OutboxEvent {
  id: string;
  type: string;
  payload: unknown;
  created_at: string;
}

/** An event of the old outbox (deliveries made before events carried their payload). */
export async function legacyOutboxEvent(db: SqlTarget, id: string): Promise<OutboxEvent | undefined> {
  const [legacy] = await sql<OutboxEvent>(db, 'select id, type, payload, created_at from webhook_events where id = ?', [id]);
  return legacy;
}
