import { randomBytes, randomUUID } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { RequestContext } from '../context.js';
import type { Webhook, WebhookAttempt, WebhookDelivery } from '../entities/Webhook.js';
import { InvalidRequestError, invalidField, NotFoundError } from '../errors.js';
import { isUuid } from '../ids.js';
import { isAllowedAddress, NOT_ALLOWED } from '../net/safeFetch.js';
import { organizationExists, workspaceInOrganization } from '../store/organizations.js';
import { attemptsOf, deleteWebhookRow, deliveriesOf, loadWebhook, newWebhook, webhooksOf } from '../store/webhooks.js';
import { isKnownFilter } from '../webhooks/events.js';
import { recordAudit } from './audit.js';
import { inTransaction } from '../store/unitOfWork.js';

/** A Standard Webhooks secret: whsec_ + base64 of 32 random bytes. */
function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** Refuses URLs that could not be delivered safely: not http(s), or resolving to an internal address. */
async function checkTargetUrl(raw: string, allowLoopback: boolean): Promise<string> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalidField('url', 'is not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalidField('url', 'must be http or https');
  if (url.username || url.password) throw invalidField('url', 'must not contain credentials');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  if (isIP(host)) addresses = [host];
  else {
    try {
      addresses = (await lookup(host, { all: true })).map((a) => a.address);
    } catch {
      throw invalidField('url', `host "${host}" does not resolve`);
    }
  }
  const refused = addresses.find((a) => !isAllowedAddress(a, allowLoopback));
  if (refused) throw invalidField('url', NOT_ALLOWED);
  return url.toString();
}

function checkEvents(events: string[] | null | undefined): string[] | null {
  if (events == null) return null;
  const unknown = events.filter((e) => !isKnownFilter(e));
  if (unknown.length)
    throw new InvalidRequestError(`events: unknown event type(s) ${unknown.join(', ')}`, [
      { field: 'events', message: `unknown: ${unknown.join(', ')}` },
    ]);
  return [...new Set(events)];
}

async function find(em: EntityManager, id: string): Promise<Webhook> {
  const hook = isUuid(id) ? await loadWebhook(em, id) : null;
  if (!hook) throw new NotFoundError('Webhook');
  return hook;
}

/** createWebhook: org-wide or one workspace, optional event filter; the secret is shown here. */
export async function createWebhook(
  ctx: RequestContext,
  input: { organizationId: string; workspaceId?: string | null; url: string; events?: string[] | null },
): Promise<Webhook> {
  const url = await checkTargetUrl(input.url, ctx.outbound.allowLoopback);
  const events = checkEvents(input.events);
  return inTransaction(ctx.em, async (em) => {
    if (!isUuid(input.organizationId) || !(await organizationExists(em, input.organizationId))) throw new NotFoundError('Organization');
    if (input.workspaceId && (!isUuid(input.workspaceId) || !(await workspaceInOrganization(em, input.workspaceId, input.organizationId))))
      throw new NotFoundError('Workspace');
    const hook = newWebhook(em, {
      id: randomUUID(),
      organizationId: input.organizationId,
      workspaceId: input.workspaceId ?? null,
      url,
      events,
      secret: newSecret(),
      enabled: true,
      createdAt: new Date(),
    });
    recordAudit(em, ctx, {
      action: 'webhook.created',
      targetType: 'webhook',
      targetId: hook.id,
      organizationId: input.organizationId,
      workspaceId: input.workspaceId ?? null,
    });
    return hook;
  });
}

/** updateWebhook: URL, event filter, enabled (re-enabling clears the disabled reason). */
export async function updateWebhook(
  ctx: RequestContext,
  id: string,
  input: { url?: string | null; events?: string[] | null; enabled?: boolean | null; allEvents?: boolean | null },
): Promise<Webhook> {
  const url = input.url ? await checkTargetUrl(input.url, ctx.outbound.allowLoopback) : null;
  return inTransaction(ctx.em, async (em) => {
    const hook = await find(em, id);
    if (url) hook.url = url;
    if (input.events) hook.events = checkEvents(input.events);
    if (input.allEvents) hook.events = null;
    if (input.enabled != null) {
      hook.enabled = input.enabled;
      if (input.enabled) hook.disabledReason = null;
    }
    recordAudit(em, ctx, {
      action: 'webhook.updated',
      targetType: 'webhook',
      targetId: hook.id,
      organizationId: hook.organizationId,
      workspaceId: hook.workspaceId,
    });
    return hook;
  });
}

export async function deleteWebhook(ctx: RequestContext, id: string): Promise<Webhook> {
  return inTransaction(ctx.em, async (em) => {
    const hook = await find(em, id);
    await deleteWebhookRow(em, id);
    recordAudit(em, ctx, {
      action: 'webhook.deleted',
      targetType: 'webhook',
      targetId: id,
      organizationId: hook.organizationId,
      workspaceId: hook.workspaceId,
    });
    return hook;
  });
}

/** A new secret, effective for every later attempt; shown in the answer. */
export async function rotateSecret(ctx: RequestContext, id: string): Promise<Webhook> {
  return inTransaction(ctx.em, async (em) => {
    const hook = await find(em, id);
    hook.secret = newSecret();
    recordAudit(em, ctx, {
      action: 'webhook.secret_rotated',
      targetType: 'webhook',
      targetId: id,
      organizationId: hook.organizationId,
      workspaceId: hook.workspaceId,
    });
    return hook;
  });
}

export async function listWebhooks(ctx: RequestContext, organizationId: string): Promise<Webhook[]> {
  if (!isUuid(organizationId)) return [];
  return webhooksOf(ctx.em, organizationId);
}

/** Deliveries of a subscription, newest first, each with its attempts. */
export async function listDeliveries(
  ctx: RequestContext,
  webhookId: string,
  limit: number,
): Promise<(WebhookDelivery & { attemptLog: WebhookAttempt[] })[]> {
  await find(ctx.em, webhookId);
  const deliveries = await deliveriesOf(ctx.em, webhookId, limit);
  const attempts = deliveries.length
    ? await attemptsOf(
        ctx.em,
        deliveries.map((d) => d.id),
      )
    : [];
  return deliveries.map((d) => Object.assign(d, { attemptLog: attempts.filter((a) => a.deliveryId === d.id) }));
}
