import type { Scope } from '../auth/authorize.js';
import type { RequestContext } from '../context.js';
import { AuditEvent } from '../entities/AuditEvent.js';
import type { ContentGapGroup } from '../entities/ContentGap.js';
import type { Proposal } from '../entities/Proposal.js';
import { NotFoundError, UnauthorizedError } from '../errors.js';
import { isUuid } from '../ids.js';
import { ADMIN_SUBSCRIPTIONS, SUBSCRIPTIONS_PER_HOLDER, type LiveEvent, type LiveStream } from '../live/hub.js';
import { eventRow } from '../store/events.js';
import { proposalGapGroupId, reportGroupId } from '../store/live.js';
import { workspaceExists } from '../store/organizations.js';
import { listGroups } from './contentGaps.js';
import { findProposal } from './proposals.js';
import { scrub } from './scrub.js';
import { entityOf, forkOf } from '../store/unitOfWork.js';

/** What a proposal subscriber receives: the event's type and the proposal as it is now. */
export interface ProposalChangeValue {
  action: string;
  proposal: Proposal;
}

/** What a content-gap subscriber receives: the event's type, and the group once the question is grouped. */
export interface ContentGapChangeValue {
  action: string;
  reportId: number | null;
  group: ContentGapGroup | null;
}

/**
 * A live subscription: a slot of the caller's cap is held while it is open, each event is turned
 * into its value by `load` (null: skip it), and before each delivery the caller is authorised
 * again by `recheck`, as its credential stands then: a revoked or expired key stops receiving at
 * its next event (`unauthorized`), and so does one that lost a permission or whose member lost
 * the role (`permission_denied`).
 */
async function liveStream<T>(
  ctx: RequestContext,
  holder: string,
  workspaceId: string,
  field: string,
  recheck: (now: RequestContext) => Promise<unknown>,
  accept: (event: LiveEvent) => boolean,
  load: (event: LiveEvent) => Promise<T | null>,
): Promise<AsyncIterableIterator<T>> {
  const lease = await ctx.live.acquire(holder, workspaceId, field, holder === 'admin' ? ADMIN_SUBSCRIPTIONS : SUBSCRIPTIONS_PER_HOLDER);
  let events: LiveStream;
  try {
    events = await ctx.live.subscribe(workspaceId, accept);
  } catch (error) {
    await ctx.live.release(lease);
    throw error;
  }
  let released = false;
  const release = async () => {
    if (released) return;
    released = true;
    await ctx.live.release(lease);
  };
  const iterator: AsyncIterableIterator<T> = {
    async next() {
      try {
        for (;;) {
          const step = await events.next();
          if (step.done) {
            await release();
            return { value: undefined, done: true };
          }
          const principal = await ctx.currentPrincipal();
          if (principal.kind === 'anonymous' || principal.kind === 'invalid') throw new UnauthorizedError();
          await recheck(Object.create(ctx, { principal: { value: principal } }) as RequestContext);
          const value = await load(step.value);
          if (value !== null) return { value, done: false };
        }
      } catch (error) {
        await events.return?.();
        await release();
        throw error;
      }
    },
    async return() {
      await events.return?.();
      await release();
      return { value: undefined, done: true };
    },
    [Symbol.asyncIterator]() {
      return iterator;
    },
  };
  return iterator;
}

/** The admin token's slot holder name, else the key id. */
function holderOf(ctx: RequestContext): string {
  const p = ctx.principal;
  return p.kind === 'agent' ? p.keyId : p.kind === 'member' ? `session:${p.sessionId}` : 'admin';
}

/** New audit events of a workspace (admin token, like the audit trail), optionally of one action. */
export async function auditEventStream(
  ctx: RequestContext,
  workspaceId: string,
  action: string | null,
  reader: (c: RequestContext) => Promise<unknown>,
): Promise<AsyncIterableIterator<AuditEvent>> {
  await reader(ctx);
  if (!isUuid(workspaceId) || !(await workspaceExists(ctx.db, workspaceId))) throw new NotFoundError('Workspace');
  return liveStream(
    ctx,
    holderOf(ctx),
    workspaceId.toLowerCase(),
    'auditEventAdded',
    reader,
    (e) => !action || e.action === action,
    async (e) => {
      const row = await eventRow(ctx.db, e.id);
      if (!row) return null;
      // A fork per event: the subscription's own EntityManager would keep every event it ever delivered.
      const event = entityOf(forkOf(ctx.em), AuditEvent, row);
      event.payload = (row.payload as Record<string, unknown> | null) ?? null;
      return event;
    },
  );
}

/** Proposals of a workspace as they are created, approved and rejected (reviewers: like the `proposals` query). */
export async function proposalStream(
  ctx: RequestContext,
  reviewer: (c: RequestContext) => Promise<Scope>,
): Promise<AsyncIterableIterator<ProposalChangeValue>> {
  const scope = await reviewer(ctx);
  return liveStream(
    ctx,
    holderOf(ctx),
    scope.workspaceId,
    'proposalChanged',
    reviewer,
    (e) => e.action.startsWith('proposal.'),
    async (e) => {
      const proposal = await findProposal(forkOf(ctx.em), scope.workspaceId, Number(e.targetId));
      return proposal ? { action: e.action, proposal } : null;
    },
  );
}

/** Content-gap reports, groups resolved, and proposals drafted from groups (like the `contentGaps` query: article.create). */
export async function contentGapStream(
  ctx: RequestContext,
  drafter: (c: RequestContext) => Promise<Scope>,
): Promise<AsyncIterableIterator<ContentGapChangeValue>> {
  const scope = await drafter(ctx);
  return liveStream(
    ctx,
    holderOf(ctx),
    scope.workspaceId,
    'contentGapChanged',
    drafter,
    (e) => e.action.startsWith('content_gap.') || e.action.startsWith('proposal.'),
    async (e) => {
      let groupId: number | null;
      let reportId: number | null = null;
      if (e.action === 'content_gap.reported') {
        reportId = Number(e.targetId);
        groupId = await reportGroupId(ctx.db, reportId);
      } else if (e.action === 'content_gap.resolved') {
        groupId = Number(e.targetId);
      } else {
        groupId = await proposalGapGroupId(ctx.db, Number(e.targetId), scope.workspaceId);
        if (!groupId) return null; // a proposal not drafted from a group
      }
      const [group] = groupId === null ? [] : await listGroups(forkOf(ctx.em), scope.workspaceId, true, groupId);
      // The label is a question as it was asked: scrubbed like the contentGaps query's.
      if (group) group.label = scrub(group.label).text;
      return { action: e.action, reportId, group: group ?? null };
    },
  );
}
