import type { EntityManager } from '@mikro-orm/postgresql';
import type { Scope } from '../auth/authorize.js';
import { seesRestricted } from '../auth/visibility.js';
import { callerKind, type RequestContext } from '../context.js';
import { AUDIENCE_CALLERS, type Audience } from '../types/activity.js';
import { ContentGapGroup, ContentGapReport } from '../entities/ContentGap.js';
import { ConflictError, NotFoundError } from '../errors.js';
import type { Proposal } from '../entities/Proposal.js';
import { decodeCursor, pageSize, toPage, type Page } from '../pagination.js';
import type { ContentGap } from '../types/contentGaps.js';
import { insertProposal } from './proposals.js';
import { enqueueEmbedding, signalEmbeddingWork } from '../search/vectors.js';
import { recordAudit } from './audit.js';
import { firstChars, scrub } from './scrub.js';
import { articleVisibility } from '../store/articles.js';
import { groupRows, lockGroup, markGroupResolved, openGapRows, type GapRow } from '../store/contentGapGroups.js';
import { insertReport, reportRows } from '../store/contentGapReports.js';
import { openProposalOfGroup } from '../store/proposals.js';
import { entityOf, inTransaction } from '../store/unitOfWork.js';

/** Characters of a question kept (code points). */
export const QUESTION_KEEP = 256;
const REDACTION_NAMES = [
  ['email', 'e-mail addresses'],
  ['secret', 'secrets'],
  ['phone', 'phone numbers'],
] as const;

/**
 * Records one report per call: the question's first 256 characters, scrubbed of e-mail
 * addresses, secrets and phone numbers; an unknown slug is kept and flagged, never refused.
 */
export async function reportContentGap(
  ctx: RequestContext,
  scope: Scope,
  input: { question?: string | null; slug?: string | null },
): Promise<{ message: string; reported: true }> {
  const raw = input.question?.trim() ? firstChars(input.question.trim(), QUESTION_KEEP) : null;
  const cleaned = raw ? scrub(raw) : { text: null, redacted: [] as string[] };
  const question = cleaned.text === null ? null : firstChars(cleaned.text, QUESTION_KEEP);
  const slug = input.slug?.trim() || null;
  const truncated = input.question ? Array.from(input.question.trim()).length > QUESTION_KEEP : false;
  const slugKnown = await inTransaction(ctx.em, async (em) => {
    // Stored: whether the slug names an article. Answered: whether it names one this key may see,
    // so a restricted article and no article read the same to a viewer.
    const article = slug ? await articleVisibility(em, scope.workspaceId, slug, seesRestricted(scope)) : undefined;
    const known = Boolean(article);
    const id = await insertReport(em, {
      workspaceId: scope.workspaceId,
      question,
      slug,
      slugKnown: known,
      redacted: cleaned.redacted.length > 0,
      agentKeyId: scope.agent.keyId,
      door: ctx.via,
      caller: callerKind(ctx.principal),
      createdAt: new Date(),
    });
    if (question) await enqueueEmbedding(em, scope.workspaceId, 'gap', id);
    recordAudit(em, ctx, {
      action: 'content_gap.reported',
      targetType: 'content_gap_report',
      targetId: id,
      workspaceId: scope.workspaceId,
    });
    return Boolean(article?.visible);
  });
  if (question) signalEmbeddingWork();
  const notes = [
    cleaned.redacted.length
      ? `removed ${REDACTION_NAMES.filter(([kind]) => cleaned.redacted.includes(kind))
          .map(([, name]) => name)
          .join(', ')} before storing`
      : null,
    truncated ? `kept the first ${QUESTION_KEEP} characters of the question` : null,
    // The slug is not echoed: the answer for a slug this key cannot see reads the same for every such slug.
    slug && !slugKnown ? 'no article has the slug you named; the report keeps it, flagged' : null,
  ].filter(Boolean);
  return { message: `Thanks, the gap was reported${notes.length ? `; ${notes.join('; ')}` : ''}.`, reported: true };
}

/** Reports of a workspace, newest first (dashboards). */
export async function listReports(em: EntityManager, workspaceId: string, limit = 200): Promise<ContentGapReport[]> {
  const rows = await reportRows(em, workspaceId, limit);
  return rows.map((r) => entityOf(em, ContentGapReport, r));
}

/** Groups of similar unanswered questions, most frequent first (dashboards); with `onlyId`, that group alone (resolved or not). */
export async function listGroups(
  em: EntityManager,
  workspaceId: string,
  includeResolved: boolean,
  onlyId: number | null = null,
  askedBy: Audience | null = null,
): Promise<ContentGapGroup[]> {
  const rows = await groupRows(em, {
    workspaceId,
    withResolved: includeResolved || onlyId !== null,
    onlyId,
    callers: askedBy ? AUDIENCE_CALLERS[askedBy] : null,
  });
  return rows.map((r) => {
    const { asked_by: askedByRows, ...columns } = r;
    const group = entityOf(em, ContentGapGroup, columns);
    group.proposalId = r.proposal_id;
    group.state = group.resolvedAt ? 'resolved' : r.proposal_status === 'open' ? 'proposed' : 'open';
    group.askedBy = askedByRows;
    return group;
  });
}

/** Marks a group resolved; later similar questions start a new group. */
export async function resolveGroup(ctx: RequestContext, id: number): Promise<ContentGapGroup> {
  return inTransaction(ctx.em, async (em) => {
    const row = await markGroupResolved(em, id, new Date());
    if (!row) throw new NotFoundError('Content-gap group');
    recordAudit(em, ctx, { action: 'content_gap.resolved', targetType: 'content_gap_group', targetId: id, workspaceId: row.workspace_id });
    return entityOf(em, ContentGapGroup, row);
  });
}

/**
 * The open content-gap groups of the caller's workspace, most asked first (cursor-paginated):
 * label, counts, first and last seen, sample questions (scrubbed of e-mail addresses, secrets and
 * phone numbers), the nearest article (only one the key may see), and whether a proposal made
 * from the group is waiting for review (`proposed`).
 */
export async function listOpenGaps(
  ctx: RequestContext,
  scope: Scope,
  args: { limit?: number | null; cursor?: string | null },
): Promise<Page<ContentGap>> {
  const size = pageSize(args.limit);
  const after = args.cursor ? decodeCursor<[number, number]>(args.cursor, ['number', 'number']) : null;
  const rows = await openGapRows(ctx.db, {
    workspaceId: scope.workspaceId,
    canSee: seesRestricted(scope),
    afterAsked: after?.[0] ?? null,
    afterId: after?.[1] ?? null,
    limit: size + 1,
  });
  return toPage(rows.map(toGap), size, (g) => [g.questionCount, g.id]);
}

/**
 * Turns an open group into a new-draft proposal linked to it (needs `article.create` and
 * `proposal.create`); approving the proposal resolves the group. 404 for a group of another
 * workspace, 409 when the group is resolved or already has a proposal waiting for review.
 */
export async function proposeFromGap(
  ctx: RequestContext,
  scope: Scope,
  groupId: number,
  input: { title: string; section: string; markdown: string; summary: string },
): Promise<Proposal> {
  return inTransaction(ctx.em, async (em) => {
    const group = await lockGroup(em, groupId, scope.workspaceId);
    if (!group) throw new NotFoundError('Content-gap group');
    if (group.resolved_at) throw new ConflictError(`Content-gap group ${groupId} is already resolved.`, { state: 'resolved' });
    const waiting = await openProposalOfGroup(em, groupId);
    if (waiting)
      throw new ConflictError(`Content-gap group ${groupId} already has proposal ${waiting.id} waiting for review.`, {
        state: 'proposed',
        proposalId: waiting.id,
      });
    return insertProposal(em, ctx, scope, { ...input, article: null }, groupId);
  });
}

/** A listed group as answered: label and questions scrubbed, counts as numbers. */
export function toGap(r: GapRow): ContentGap {
  return {
    id: r.id,
    label: scrub(r.label).text,
    questionCount: Number(r.asked),
    reportCount: Number(r.report_count),
    searchCount: Number(r.search_count),
    firstSeen: new Date(r.first_seen),
    lastSeen: new Date(r.last_seen),
    sampleQuestions: r.samples.map((q) => scrub(q).text),
    nearestArticle: r.nearest,
    state: r.proposal_id === null ? 'open' : 'proposed',
    proposalId: r.proposal_id,
    askedBy: r.asked_by,
  };
}
