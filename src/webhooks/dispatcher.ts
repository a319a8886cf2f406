import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { Webhook as Signer } from 'standardwebhooks';
import { freshEm } from '../db/orm.js';
import { PollingLoop } from '../jobs.js';
import { pgArray, sql } from '../db/sql.js';
import { safeFetch } from '../net/safeFetch.js';
import { eventMatches } from './events.js';
import { onWebhookWork } from './signal.js';

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

/** An event waiting to be fanned out. */
interface EventRow {
  id: string;
  /** The writing transaction's id as text (ordering is by the column, never by this text). */
  event_xid: string;
  message_id: string;
  organization_id: string | null;
  workspace_id: string | null;
  type: string;
  created_at: string;
  target_id: string | null;
}

/** A subscription that could receive it. */
interface HookRow {
  id: string;
  organization_id: string;
  workspace_id: string | null;
  events: string[] | null;
  created_at: string;
}

/** A delivery claimed for an attempt. */
interface DeliveryRow {
  id: number;
  event_id: string;
  event_seq: string | null;
  webhook_id: string;
  attempts: number;
}

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
    return freshEm(this.orm).transactional(async (em) => {
      const [lock] = await sql<{ locked: boolean }>(em, 'select pg_try_advisory_xact_lock(?) as locked', [FAN_OUT_LOCK]);
      if (!lock.locked) return 0;
      const [cursor] = await sql<{ last_xid: string; last_id: string }>(
        em,
        `select last_xid::text, last_id from event_cursors where name = 'webhooks'`,
      );
      const events = await sql<EventRow>(
        em,
        `select id, xid::text as event_xid, message_id, organization_id, workspace_id, action as type, created_at, target_id from events
          where (xid, id) > (?::xid8, ?::bigint) and xid < pg_snapshot_xmin(pg_current_snapshot())
          order by events.xid, events.id limit ${FAN_OUT_BATCH}`,
        [cursor.last_xid, cursor.last_id],
      );
      if (!events.length) return 0;
      await this.insertDeliveries(em, events);
      const last = events[events.length - 1];
      await sql(em, `update event_cursors set last_xid = ?::xid8, last_id = ? where name = 'webhooks'`, [last.event_xid, last.id]);
      return events.length;
    });
  }

  /** One delivery per event and subscription that wants it (a subscription receives what happens after it exists, not its own creation). */
  private async insertDeliveries(em: EntityManager, events: EventRow[]): Promise<void> {
    const orgs = pgArray([...new Set(events.map((e) => e.organization_id).filter((id): id is string => Boolean(id)))]);
    const hooks = await sql<HookRow>(
      em,
      'select id, organization_id, workspace_id, events, created_at from webhooks where enabled and organization_id = any(?::uuid[])',
      [orgs],
    );
    if (!hooks.length) return;
    const rows: unknown[][] = [];
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
    for (let i = 0; i < rows.length; i += 200) {
      const part = rows.slice(i, i + 200);
      await sql(
        em,
        `insert into webhook_deliveries (event_id, event_type, webhook_id, event_seq, status, attempts, next_attempt_at, created_at)
         values ${part.map(() => `(?, ?, ?, ?::bigint, 'pending', 0, clock_timestamp(), clock_timestamp())`).join(', ')} on conflict do nothing`,
        part.flat(),
      );
    }
  }

  private async deliverDue(): Promise<number> {
    const em = freshEm(this.orm);
    const leaseSeconds = Math.ceil(this.timeoutMs / 1000) + 30;
    const claimed = await sql<DeliveryRow>(
      em,
      `update webhook_deliveries d set lease_until = clock_timestamp() + interval '${leaseSeconds} seconds'
         from (select id from webhook_deliveries where status = 'pending' and next_attempt_at <= clock_timestamp()
                 and (lease_until is null or lease_until < clock_timestamp())
               order by next_attempt_at limit ${BATCH} for update skip locked) c
        where d.id = c.id
        returning d.id, d.event_id, d.event_seq, d.webhook_id, d.attempts`,
    );
    await Promise.all(claimed.map((d) => this.deliver(d)));
    return claimed.length;
  }

  private async deliver(delivery: DeliveryRow): Promise<void> {
    const em = freshEm(this.orm);
    const [hook] = await sql<{ url: string; secret: string; enabled: boolean }>(
      em,
      'select url, secret, enabled from webhooks where id = ?',
      [delivery.webhook_id],
    );
    const event = await loadEvent(em, delivery);
    if (!hook || !hook.enabled || !event) {
      const reason = !hook ? 'subscription deleted' : !event ? 'event missing' : 'subscription disabled';
      await sql(em, `update webhook_deliveries set status = 'failed', last_error = ?, lease_until = null where id = ?`, [
        reason,
        delivery.id,
      ]);
      return;
    }
    const attempt = await this.send(hook, event);
    await em.transactional((tx) => this.record(tx, delivery, attempt));
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
    await sql(tx, 'insert into webhook_attempts (delivery_id, attempted_at, status_code, duration_ms, error) values (?, ?, ?, ?, ?)', [
      delivery.id,
      attempt.sentAt,
      statusCode,
      attempt.durationMs,
      error,
    ]);
    const settle = (state: string, lastError: string | null, next: Date | null) =>
      sql(
        tx,
        `update webhook_deliveries set status = ?, attempts = ?, last_status_code = ?, last_error = ?, lease_until = null,
           delivered_at = case when ? = 'delivered' then clock_timestamp() else delivered_at end, next_attempt_at = coalesce(?, next_attempt_at)
         where id = ?`,
        [state, attempts, statusCode, lastError, state, next, delivery.id],
      );
    if (!error) return void (await settle('delivered', null, null));
    if (statusCode === 410) {
      await settle('failed', 'receiver answered 410 Gone; subscription disabled', null);
      await sql(tx, `update webhooks set enabled = false, disabled_reason = 'receiver answered 410 Gone' where id = ?`, [
        delivery.webhook_id,
      ]);
      return;
    }
    if (attempts > this.schedule.length) return void (await settle('failed', `gave up after ${attempts} attempts: ${error}`, null));
    const delay = Math.max(Math.round(this.schedule[attempts - 1] * (0.8 + Math.random() * 0.4)), attempt.retryAfterMs);
    await settle('pending', error, new Date(Date.now() + delay));
  }
}

/** An event as the dispatcher sends it: its message id, type, webhook `data` and time. */
interface OutboxEvent {
  id: string;
  type: string;
  payload: unknown;
  created_at: string;
}

/** The event row's columns that a webhook's `data` carries. */
interface EventColumns {
  message_id: string;
  action: string;
  created_at: string;
  organization_id: string | null;
  workspace_id: string | null;
  actor: string;
  agent_key_id: string | null;
  member_id: string | null;
  target_type: string;
  target_id: string | null;
  request_id: string | null;
  payload: Record<string, unknown> | null;
}

/** The event a delivery sends: from the event table, or (deliveries made before events carried their payload) the old outbox. */
async function loadEvent(em: EntityManager, delivery: DeliveryRow): Promise<OutboxEvent | undefined> {
  if (delivery.event_seq === null) {
    const [legacy] = await sql<OutboxEvent>(em, 'select id, type, payload, created_at from webhook_events where id = ?', [
      delivery.event_id,
    ]);
    return legacy;
  }
  const [row] = await sql<EventColumns>(
    em,
    `select message_id, action, created_at, organization_id, workspace_id, actor, agent_key_id, member_id, target_type, target_id, request_id, payload
       from events where id = ?`,
    [delivery.event_seq],
  );
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
