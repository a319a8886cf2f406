import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { Webhook as Signer } from 'standardwebhooks';
import { freshEm } from '../db/orm.js';
import { PollingLoop } from '../jobs.js';
import { sql } from '../db/sql.js';
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

  constructor(private readonly orm: MikroORM, private readonly logger: Logger, private readonly options: DispatcherOptions) {
    this.schedule = options.retryScheduleMs ?? DEFAULT_RETRY_SCHEDULE_MS;
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.loop = new PollingLoop('webhook', () => this.passOnce(), logger, options.idleMs ?? 500);
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

  private async fanOut(): Promise<number> {
    return freshEm(this.orm).transactional(async (em) => {
      const events = await sql(em, `select id, organization_id, workspace_id, type, created_at, payload->'target'->>'id' as target_id from webhook_events where not fanned_out order by created_at limit 200 for update skip locked`);
      if (!events.length) return 0;
      const orgs = `{${[...new Set(events.map((e) => e.organization_id).filter(Boolean))].join(',')}}`;
      const hooks = await sql(em, 'select id, organization_id, workspace_id, events, created_at from webhooks where enabled and organization_id = any(?::uuid[])', [orgs]);
      const rows: unknown[][] = [];
      for (const event of events) {
        for (const hook of hooks) {
          if (hook.organization_id !== event.organization_id) continue;
          // A subscription receives what happens after it exists, not its own creation.
          if (new Date(hook.created_at) > new Date(event.created_at) || (event.type === 'webhook.created' && event.target_id === hook.id)) continue;
          if (hook.workspace_id && hook.workspace_id !== event.workspace_id) continue;
          if (hook.events && !(hook.events as string[]).some((f) => eventMatches(f, event.type))) continue;
          rows.push([event.id, event.type, hook.id]);
        }
      }
      for (let i = 0; i < rows.length; i += 200) {
        const part = rows.slice(i, i + 200);
        await sql(
          em,
          `insert into webhook_deliveries (event_id, event_type, webhook_id, status, attempts, next_attempt_at, created_at)
           values ${part.map(() => `(?, ?, ?, 'pending', 0, clock_timestamp(), clock_timestamp())`).join(', ')} on conflict do nothing`,
          part.flat(),
        );
      }
      await sql(em, 'update webhook_events set fanned_out = true where id = any(?::text[])', [`{${events.map((e) => e.id).join(',')}}`]);
      return events.length;
    });
  }

  private async deliverDue(): Promise<number> {
    const em = freshEm(this.orm);
    const leaseSeconds = Math.ceil(this.timeoutMs / 1000) + 30;
    const claimed = await sql(
      em,
      `update webhook_deliveries d set lease_until = clock_timestamp() + interval '${leaseSeconds} seconds'
         from (select id from webhook_deliveries where status = 'pending' and next_attempt_at <= clock_timestamp()
                 and (lease_until is null or lease_until < clock_timestamp())
               order by next_attempt_at limit ${BATCH} for update skip locked) c
        where d.id = c.id
        returning d.id, d.event_id, d.webhook_id, d.attempts`,
    );
    await Promise.all(claimed.map((d) => this.deliver(d)));
    return claimed.length;
  }

  private async deliver(delivery: Record<string, any>): Promise<void> {
    const em = freshEm(this.orm);
    const [hook] = await sql(em, 'select url, secret, enabled from webhooks where id = ?', [delivery.webhook_id]);
    const [event] = await sql(em, 'select id, type, payload, created_at from webhook_events where id = ?', [delivery.event_id]);
    if (!hook || !hook.enabled || !event) {
      await sql(em, `update webhook_deliveries set status = 'failed', last_error = ?, lease_until = null where id = ?`, [!hook ? 'subscription deleted' : !event ? 'event missing' : 'subscription disabled', delivery.id]);
      return;
    }
    const body = JSON.stringify({ type: event.type, timestamp: new Date(event.created_at).toISOString(), data: event.payload });
    const sentAt = new Date();
    const signature = new Signer(hook.secret).sign(event.id, sentAt, body);
    const started = performance.now();
    let statusCode: number | null = null;
    let error: string | null = null;
    let retryAfterMs = 0;
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
          'webhook-signature': signature,
        },
        body,
      });
      statusCode = res.status;
      retryAfterMs = parseRetryAfter(res.headers['retry-after']);
      if (res.status < 200 || res.status >= 300) error = `HTTP ${res.status}`;
    } catch (e) {
      error = (e as Error).message;
    }
    const durationMs = Math.round(performance.now() - started);
    const attempts = Number(delivery.attempts) + 1;
    await em.transactional(async (tx) => {
      await sql(tx, 'insert into webhook_attempts (delivery_id, attempted_at, status_code, duration_ms, error) values (?, ?, ?, ?, ?)', [delivery.id, sentAt, statusCode, durationMs, error]);
      if (!error) {
        await sql(tx, `update webhook_deliveries set status = 'delivered', attempts = ?, last_status_code = ?, last_error = null, delivered_at = clock_timestamp(), lease_until = null where id = ?`, [attempts, statusCode, delivery.id]);
      } else if (statusCode === 410) {
        await sql(tx, `update webhook_deliveries set status = 'failed', attempts = ?, last_status_code = 410, last_error = ?, lease_until = null where id = ?`, [attempts, 'receiver answered 410 Gone; subscription disabled', delivery.id]);
        await sql(tx, `update webhooks set enabled = false, disabled_reason = 'receiver answered 410 Gone' where id = ?`, [delivery.webhook_id]);
      } else if (attempts > this.schedule.length) {
        await sql(tx, `update webhook_deliveries set status = 'failed', attempts = ?, last_status_code = ?, last_error = ?, lease_until = null where id = ?`, [attempts, statusCode, `gave up after ${attempts} attempts: ${error}`, delivery.id]);
      } else {
        const base = this.schedule[attempts - 1];
        const delay = Math.max(Math.round(base * (0.8 + Math.random() * 0.4)), retryAfterMs);
        await sql(tx, `update webhook_deliveries set attempts = ?, last_status_code = ?, last_error = ?, next_attempt_at = ?, lease_until = null where id = ?`, [attempts, statusCode, error, new Date(Date.now() + delay), delivery.id]);
      }
    });
    if (error) this.logger.info({ webhookId: delivery.webhook_id, eventId: event.id, attempts, statusCode, error }, 'webhook delivery attempt failed');
  }
}

/** Retry-After as milliseconds (seconds or an HTTP date), capped at a day. */
function parseRetryAfter(value: string | string[] | undefined): number {
  const v = Array.isArray(value) ? value[0] : value;
  if (!v) return 0;
  const seconds = Number(v);
  const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(v) - Date.now();
  return Number.isFinite(ms) && ms > 0 ? Math.min(ms, 86_400_000) : 0;
}
