import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { Webhook as Signer } from 'standardwebhooks';
import { freshEm } from '../db/orm.js';
import { PollingLoop } from '../jobs.js';
import { safeFetch } from '../net/safeFetch.js';
import {
  advanceWebhookCursor,
  eventForDelivery,
  eventsPast,
  passEventsWithoutHooks,
  readWebhookCursor,
  tryTransactionLock,
  type EventColumns,
  type FanOutEvent,
} from '../store/events.js';
import {
  claimDueDeliveries,
  disableGoneWebhook,
  enabledHooksOf,
  failDelivery,
  findHookTarget,
  insertAttempt,
  insertDeliveries,
  legacyOutboxEvent,
  settleDelivery,
  type DeliveryRow,
  type OutboxEvent,
} from '../store/webhooks.js';
import { eventMatches } from './events.js';
import { onWebhookWork } from './signal.js';
import { inTransaction } from '../store/unitOfWork.js';

/** Delays before attempts 2, 3, … (±20 % jitter); after the last one the delivery fails for good. */
export const DEFAULT_RETRY_SCHEDULE_MS = [5_000, 30_000, 120_000, 600_000, 1_800_000, 7_200_000, 21_600_000];

export interface DispatcherOptions {
  allowLoopback: boolean;
  retryScheduleMs?: number[];
  timeoutMs?: number;
  idleMs?: number;
}

const BATCH = 20;
const FAN_OUT_BATCH = 500;
/** Arbitrary, fixed: one process fans out at a time. */
const FAN_OUT_LOCK = 0x5753_4b32;
/** Fan-out passes are at least this far apart, however many writes wake the dispatcher. */
const MIN_PASS_GAP_MS = 100;

/**
 * Delivers the outbox at least once, from every process: fans new events out to matching
 * subscriptions and sends due deliveries, each claimed with `FOR UPDATE SKIP LOCKED` plus a lease,
 * so processes share the work and a restart loses nothing. Requests go out through safeFetch,
 * signed per Standard Webhooks; non-2xx and timeouts are retried with backoff and jitter
 * (honouring Retry-After); 410 Gone disables the subscription; every attempt is recorded.
 */
export class WebhookDispatcher {
  private readonly loop: PollingLoop;
  private readonly unsubscribe: () => void;
  private readonly schedule: number[];
  private readonly timeoutMs: number;

  constructor(
    private readonly orm: MikroORM,
    private readonly logger: Logger,
    private readonly options: DispatcherOptions,
  ) {
    this.schedule = options.retryScheduleMs ?? DEFAULT_RETRY_SCHEDULE_MS;
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.loop = new PollingLoop('webhook', () => this.passOnce(), logger, options.idleMs ?? 500, MIN_PASS_GAP_MS);
    this.unsubscribe = onWebhookWork(() => this.loop.kick());
  }

  start(): void {
    this.loop.start();
  }

  async stop(): Promise<void> {
    this.unsubscribe();
    await this.loop.stop();
  }

  /** One round of fan-out and delivery; the number of things done. */
  async passOnce(): Promise<number> {
    return (await this.fanOut()) + (await this.deliverDue());
  }

  /**
   * Fans new events out to matching subscriptions, in commit order: events are read past the
   * cursor and only from transactions older than every one still running (their xid is below the
   * snapshot's xmin), so no later commit can add an event behind the cursor. One process at a time
   * (an advisory lock); nothing is written when there is nothing new, and no event row is ever
   * updated.
   */
  private async fanOut(): Promise<number> {
    // Most passes find no subscription for the new events: one statement moves the cursor past them.
    const pass = await passEventsWithoutHooks(freshEm(this.orm), FAN_OUT_LOCK, FAN_OUT_BATCH);
    if (!pass.locked) return 0;
    if (!pass.hooked) return pass.events;
    return inTransaction(freshEm(this.orm), async (em) => {
      if (!(await tryTransactionLock(em, FAN_OUT_LOCK))) return 0;
      const cursor = await readWebhookCursor(em);
      const events = await eventsPast(em, cursor, FAN_OUT_BATCH);
      if (!events.length) return 0;
      await this.insertDeliveries(em, events);
      const last = events[events.length - 1];
      await advanceWebhookCursor(em, { xid: last.event_xid, id: last.id });
      return events.length;
    });
  }

  /** One delivery per event and subscription that wants it (a subscription receives what happens after it exists, not its own creation). */
  private async insertDeliveries(em: EntityManager, events: FanOutEvent[]): Promise<void> {
    const hooks = await enabledHooksOf(em, [...new Set(events.map((e) => e.organization_id).filter((id): id is string => Boolean(id)))]);
    if (!hooks.length) return;
    const rows: [string, string, string, string][] = [];
    for (const event of events) {
      for (const hook of hooks) {
        if (hook.organization_id !== event.organization_id) continue;
        if (new Date(hook.created_at) > new Date(event.created_at) || (event.type === 'webhook.created' && event.target_id === hook.id))
          continue;
        if (hook.workspace_id && hook.workspace_id !== event.workspace_id) continue;
        if (hook.events && !hook.events.some((f) => eventMatches(f, event.type))) continue;
        rows.push([event.message_id, event.type, hook.id, event.id]);
      }
    }
    await insertDeliveries(em, rows);
  }

  private async deliverDue(): Promise<number> {
    const em = freshEm(this.orm);
    const leaseSeconds = Math.ceil(this.timeoutMs / 1000) + 30;
    const claimed = await claimDueDeliveries(em, leaseSeconds, BATCH);
    await Promise.all(claimed.map((d) => this.deliver(d)));
    return claimed.length;
  }

  private async deliver(delivery: DeliveryRow): Promise<void> {
    const em = freshEm(this.orm);
    const hook = await findHookTarget(em, delivery.webhook_id);
    const event = await loadEvent(em, delivery);
    if (!hook || !hook.enabled || !event) {
      const reason = !hook ? 'subscription deleted' : !event ? 'event missing' : 'subscription disabled';
      await failDelivery(em, delivery.id, reason);
      return;
    }
    const attempt = await this.send(hook, event);
    await inTransaction(em, (tx) => this.record(tx, delivery, attempt));
    if (attempt.error) {
      const { statusCode, error } = attempt;
      this.logger.info(
        { webhookId: delivery.webhook_id, eventId: event.id, attempts: delivery.attempts + 1, statusCode, error },
        'webhook delivery attempt failed',
      );
    }
  }

  /** One signed POST of the event to the subscription's URL: its status, error, duration and Retry-After. */
  private async send(hook: { url: string; secret: string }, event: OutboxEvent): Promise<Attempt> {
    const body = JSON.stringify({ type: event.type, timestamp: new Date(event.created_at).toISOString(), data: event.payload });
    const sentAt = new Date();
    const started = performance.now();
    const attempt: Attempt = { sentAt, statusCode: null, error: null, retryAfterMs: 0, durationMs: 0 };
    try {
      const res = await safeFetch(hook.url, {
        method: 'POST',
        allowLoopback: this.options.allowLoopback,
        timeoutMs: this.timeoutMs,
        maxBytes: 64 * 1024,
        maxRedirects: 0,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'workspace-knowledge-service-webhooks/1',
          'webhook-id': event.id,
          'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
          'webhook-signature': new Signer(hook.secret).sign(event.id, sentAt, body),
        },
        body,
      });
      attempt.statusCode = res.status;
      attempt.retryAfterMs = parseRetryAfter(res.headers['retry-after']);
      if (res.status < 200 || res.status >= 300) attempt.error = `HTTP ${res.status}`;
    } catch (e) {
      attempt.error = (e as Error).message;
    }
    attempt.durationMs = Math.round(performance.now() - started);
    return attempt;
  }

  /** Records an attempt and what follows: delivered, failed for good (410 disables the subscription), or retried later. */
  private async record(tx: EntityManager, delivery: DeliveryRow, attempt: Attempt): Promise<void> {
    const { statusCode, error } = attempt;
    const attempts = delivery.attempts + 1;
    await insertAttempt(tx, { deliveryId: delivery.id, attemptedAt: attempt.sentAt, statusCode, durationMs: attempt.durationMs, error });
    const settle = (state: string, lastError: string | null, next: Date | null) =>
      settleDelivery(tx, delivery.id, { state, attempts, statusCode, lastError, next });
    if (!error) return void (await settle('delivered', null, null));
    if (statusCode === 410) {
      await settle('failed', 'receiver answered 410 Gone; subscription disabled', null);
      await disableGoneWebhook(tx, delivery.webhook_id);
      return;
    }
    if (attempts > this.schedule.length) return void (await settle('failed', `gave up after ${attempts} attempts: ${error}`, null));
    const delay = Math.max(Math.round(this.schedule[attempts - 1] * (0.8 + Math.random() * 0.4)), attempt.retryAfterMs);
    await settle('pending', error, new Date(Date.now() + delay));
  }
}

/** The event a delivery sends: from the event table, or (deliveries made before events carried their payload) the old outbox. */
async function loadEvent(em: EntityManager, delivery: DeliveryRow): Promise<OutboxEvent | undefined> {
  if (delivery.event_seq === null) return legacyOutboxEvent(em, delivery.event_id);
  const row = await eventForDelivery(em, delivery.event_seq);
  return row && { id: row.message_id, type: row.action, created_at: row.created_at, payload: webhookData(row) };
}

/** A webhook's `data`: where the event happened, what it touched, who did it, and the request. */
function webhookData(row: EventColumns): Record<string, unknown> {
  return {
    workspaceId: row.workspace_id,
    organizationId: row.organization_id,
    target: { type: row.target_type, id: row.target_id },
    actor: row.actor === 'agent' ? { type: 'agent', agentKeyId: row.agent_key_id, memberId: row.member_id } : { type: 'admin' },
    requestId: row.request_id,
    ...row.payload,
  };
}

/** What one delivery attempt did. */
interface Attempt {
  sentAt: Date;
  statusCode: number | null;
  error: string | null;
  retryAfterMs: number;
  durationMs: number;
}

/** Retry-After as milliseconds (seconds or an HTTP date), capped at a day. */
function parseRetryAfter(value: string | string[] | undefined): number {
  const v = Array.isArray(value) ? value[0] : value;
  if (!v) return 0;
  const seconds = Number(v);
  const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(v) - Date.now();
  return Number.isFinite(ms) && ms > 0 ? Math.min(ms, 86_400_000) : 0;
}
