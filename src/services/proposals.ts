import type { EntityManager } from '@mikro-orm/postgresql';
import type { Scope } from '../auth/authorize.js';
import type { Guard, ProposalKind } from '../auth/policies.js';
import type { RequestContext } from '../context.js';
import { Proposal, type ProposalStatus } from '../entities/Proposal.js';
import { ConflictError, InvalidRequestError, invalidField, NotFoundError } from '../errors.js';
import { decodeCursor, pageSize, toPage, type Page } from '../pagination.js';
import type { EventType } from '../webhooks/events.js';
import { eventObject, objectPayload } from '../webhooks/objects.js';
import { articleEvent, describeArticleChange, findArticle, findArticleById, insertArticle } from './articles.js';
import { enqueueEmbedding, signalEmbeddingWork } from '../search/vectors.js';
import { recordAudit, type AuditInput } from './audit.js';
import { writeArticleText } from '../store/articles.js';
import { resolveGroup } from '../store/contentGapGroups.js';
import { insertProposalRow, lockProposal, markApproved, markReviewed, proposalById, proposalRows } from '../store/proposals.js';
import { revisionWithMarkdown } from '../store/articleRevisions.js';
import { CONFLICT_MARKERS, mergeProposal, type ArticleText, type Merged } from './proposalMerge.js';
import type { Article } from '../entities/Article.js';
import { findVisibleSection } from './sections.js';
import { entityOf, inTransaction } from '../store/unitOfWork.js';

export interface CreateProposalInput {
  article?: string | null;
  section?: string | null;
  title?: string | null;
  markdown?: string | null;
  summary: string;
}

/**
 * Stores an `open` proposal: an edit of an existing article (`article` + new `title` and/or
 * `markdown`, based on the article's current version) or a new draft (`section`, `title`, `markdown`).
 */
export async function createProposal(ctx: RequestContext, scope: Scope, input: CreateProposalInput): Promise<Proposal> {
  return inTransaction(ctx.em, (em) => insertProposal(em, ctx, scope, input, null));
}

/** The insert behind createProposal and proposals made from a content-gap group; call inside a transaction. */
export async function insertProposal(
  em: EntityManager,
  ctx: RequestContext,
  scope: Scope,
  input: CreateProposalInput,
  gapGroupId: number | null,
): Promise<Proposal> {
  {
    let values: { kind: 'edit' | 'new'; articleSlug: string | null; baseVersion: number | null; section: string | null };
    if (input.article) {
      if (input.section) throw invalidField('section', 'only a new draft names a section; an edit keeps the article where it is');
      if (input.title == null && input.markdown == null)
        throw new InvalidRequestError('An edit proposal needs a new title and/or markdown.', [
          { field: 'markdown', message: 'title or markdown is required for an edit' },
        ]);
      const article = await findArticle(em, scope, input.article, false).catch((error) => {
        if (error instanceof NotFoundError) throw invalidField('article', `no article with slug "${input.article}"`);
        throw error;
      });
      values = { kind: 'edit', articleSlug: article.slug, baseVersion: article.version, section: null };
    } else {
      const missing = (['section', 'title', 'markdown'] as const).filter((f) => !input[f]);
      if (missing.length)
        throw new InvalidRequestError(
          `A new-draft proposal needs ${missing.join(', ')} (or name an existing "article" to propose an edit).`,
          missing.map((field) => ({ field, message: 'is required for a new draft' })),
        );
      if (!(await findVisibleSection(em, scope, input.section!))) throw invalidField('section', `no section with key "${input.section}"`);
      values = { kind: 'new', articleSlug: null, baseVersion: null, section: input.section! };
    }
    const row = await insertProposalRow(em, {
      workspaceId: scope.workspaceId,
      ...values,
      title: input.title ?? null,
      markdown: input.markdown ?? null,
      summary: input.summary,
      agentKeyId: scope.agent.keyId,
      memberId: scope.agent.memberId,
      createdAt: new Date(),
      gapGroupId,
    });
    const proposal = entityOf(em, Proposal, row);
    recordAudit(em, ctx, proposalEvent('proposal.created', scope, proposal));
    return proposal;
  }
}

export interface ListProposalArgs {
  status?: ProposalStatus | null;
  limit?: number | null;
  cursor?: string | null;
}

/** The caller key's own proposals, newest first. */
export async function listMyProposals(ctx: RequestContext, scope: Scope, args: ListProposalArgs): Promise<Page<Proposal>> {
  return listProposals(ctx, scope, args, scope.agent.keyId);
}

/** Every proposal of the workspace, for reviewers (needs `article.update`). */
export async function listAllProposals(ctx: RequestContext, scope: Scope, args: ListProposalArgs): Promise<Page<Proposal>> {
  return listProposals(ctx, scope, args, null);
}

async function listProposals(ctx: RequestContext, scope: Scope, args: ListProposalArgs, keyId: string | null): Promise<Page<Proposal>> {
  const size = pageSize(args.limit);
  const beforeId = args.cursor ? decodeCursor<[number]>(args.cursor, ['number'])[0] : null;
  const rows = await proposalRows(ctx.em, { workspaceId: scope.workspaceId, keyId, status: args.status, beforeId, limit: size + 1 });
  return toPage(
    rows.map((r) => entityOf(ctx.em, Proposal, r)),
    size,
    (p) => [p.id],
  );
}

/** The reviewer's own resolution of a conflicting edit: the title and Markdown to apply instead of the merge. */
export interface Resolution {
  title?: string | null;
  markdown?: string | null;
}

/**
 * Applies an open proposal in one transaction, recording the reviewer. An edit is merged into the
 * article as it is now (see mergeProposal): changes of status, visibility or placement, or edits
 * of other lines, made since the proposal do not stop it; lines both changed differently answer
 * 409 naming them with both versions, and the proposal stays open — the reviewer then sends the
 * text to apply (`resolution`), or returns the proposal.
 */
export async function approveProposal(
  ctx: RequestContext,
  scope: Scope,
  id: number,
  guard: Guard<ProposalKind>,
  resolution: Resolution = {},
): Promise<Proposal> {
  return inTransaction(ctx.em, async (em) => {
    const proposal = await lockOpen(em, scope, id);
    guard({ kind: proposal.kind });
    const open = eventObject('Proposal', proposal);
    const now = new Date();
    await describeArticleChange(em, scope, { action: 'proposal_approved', proposalId: id, summary: proposal.summary });
    if (proposal.kind === 'edit') await applyEdit(em, ctx, scope, proposal, resolution, now);
    else {
      const article = await insertArticle(em, scope, { title: proposal.title!, section: proposal.section!, markdown: proposal.markdown! });
      proposal.articleSlug = article.slug;
      recordAudit(em, ctx, articleEvent('article.created', scope, article));
    }
    const approved = entityOf(em, Proposal, await markApproved(em, id, proposal.articleSlug, scope.agent.memberId, now));
    recordAudit(em, ctx, proposalEvent('proposal.approved', scope, approved, open));
    // The content-gap group a draft was proposed from is answered once the draft is approved.
    if (approved.gapGroupId !== null && (await resolveGroup(em, scope.workspaceId, approved.gapGroupId, now)))
      recordAudit(em, ctx, {
        action: 'content_gap.resolved',
        targetType: 'content_gap_group',
        targetId: approved.gapGroupId,
        workspaceId: scope.workspaceId,
      });
    return approved;
  });
}

/** Writes an approved edit: the reviewer's resolution, else the merge (409 on a conflict). */
async function applyEdit(em: EntityManager, ctx: RequestContext, scope: Scope, proposal: Proposal, resolution: Resolution, now: Date) {
  const article = await findArticle(em, scope, proposal.articleSlug!, true);
  const before = eventObject('Article', article);
  let text: ArticleText;
  if (resolution.title != null || resolution.markdown != null) text = resolved(article, resolution);
  else {
    const merged = await mergeInto(em, scope, proposal, article);
    if (!merged.clean) throw conflictOf(proposal, article, merged);
    text = merged;
  }
  await writeArticleText(em, article.id, text.title, text.markdown, now);
  await enqueueEmbedding(em, scope.workspaceId, 'article', article.id);
  signalEmbeddingWork();
  recordAudit(em, ctx, articleEvent('article.updated', scope, await findArticleById(em, article.id), before));
}

/** The reviewer's text, checked to hold no conflict marker left unresolved. */
function resolved(article: Article, resolution: Resolution): ArticleText {
  const markdown = resolution.markdown ?? article.markdown;
  if (markdown.split('\n').some((line) => (Object.values(CONFLICT_MARKERS) as string[]).includes(line)))
    throw invalidField(
      'markdown',
      `still holds conflict markers (${CONFLICT_MARKERS.proposed} … ${CONFLICT_MARKERS.end}): resolve every conflict`,
    );
  return { title: resolution.title ?? article.title, markdown };
}

/** The proposal merged into the article now, from its base version (the article's history keeps every version). */
async function mergeInto(em: EntityManager, scope: Scope, proposal: Proposal, article: Article): Promise<Merged> {
  let base: ArticleText = article;
  if (proposal.baseVersion !== article.version) {
    const revision = await revisionWithMarkdown(em, {
      workspaceId: scope.workspaceId,
      articleId: article.id,
      version: proposal.baseVersion!,
      canSee: true,
    });
    if (!revision)
      throw new ConflictError(`The version ${proposal.baseVersion} this proposal was made on is no longer kept; return it.`, {});
    base = { title: revision.title, markdown: revision.markdown! };
  }
  return mergeProposal(base, proposal, article);
}

/** The 409 of an edit whose lines the article changed differently since: each conflict's lines in the current text, and both versions. */
function conflictOf(proposal: Proposal, article: Article, merged: Merged): ConflictError {
  const where = merged.conflicts.map((c) =>
    c.field === 'title' ? 'the title' : `line ${c.line}${c.currentLines > 1 ? `–${c.line + c.currentLines - 1}` : ''}`,
  );
  return new ConflictError(
    `Article "${article.slug}" changed ${where.join(', ')} differently since this proposal was made (version ${proposal.baseVersion} → ` +
      `${article.version}): approve it with the text to apply (the merge preview marks each conflict), or return it to its proposer.`,
    { baseVersion: proposal.baseVersion, currentVersion: article.version, conflicts: merged.conflicts },
  );
}

/** How an open edit would merge now (its text, and its conflicts), for the reviewer before approving; null for a new draft. */
export async function previewMerge(ctx: RequestContext, scope: Scope, id: number): Promise<Merged | null> {
  const row = await proposalById(ctx.db, id, scope.workspaceId);
  if (!row) throw new NotFoundError('Proposal');
  const proposal = entityOf(ctx.em, Proposal, row);
  if (proposal.kind !== 'edit') return null;
  const article = await findArticle(ctx.em, scope, proposal.articleSlug!, false);
  return mergeInto(ctx.em, scope, proposal, article);
}

/** Rejects an open proposal with a reason (needs `article.update`; the reason's bounds are the input contract's). */
export async function rejectProposal(ctx: RequestContext, scope: Scope, id: number, reason: string): Promise<Proposal> {
  return closeProposal(ctx, scope, id, 'rejected', reason);
}

/** Returns an open proposal to its proposer with a comment (in `reason`), which they read with their proposals over REST and MCP. */
export async function returnProposal(ctx: RequestContext, scope: Scope, id: number, comment: string): Promise<Proposal> {
  return closeProposal(ctx, scope, id, 'returned', comment);
}

async function closeProposal(ctx: RequestContext, scope: Scope, id: number, status: 'rejected' | 'returned', reason: string) {
  return inTransaction(ctx.em, async (em) => {
    const open = eventObject('Proposal', await lockOpen(em, scope, id));
    const closed = entityOf(em, Proposal, await markReviewed(em, id, status, reason, scope.agent.memberId, new Date()));
    if (status === 'rejected') recordAudit(em, ctx, proposalEvent('proposal.rejected', scope, closed, open));
    else recordAudit(em, ctx, proposalEvent('proposal.returned', scope, closed, open));
    return closed;
  });
}

/** The event of a proposal change, carrying the proposal as REST returns it (and, for reviews, what the review changed). */
function proposalEvent(action: EventType, scope: Scope, proposal: Proposal, before?: Record<string, unknown>): AuditInput {
  return {
    action,
    targetType: 'proposal',
    targetId: proposal.id,
    workspaceId: scope.workspaceId,
    payload: objectPayload('Proposal', proposal, before),
  };
}

async function lockOpen(em: RequestContext['em'], scope: Scope, id: number): Promise<Proposal> {
  const row = await lockProposal(em, id, scope.workspaceId);
  if (!row) throw new NotFoundError('Proposal');
  const proposal = entityOf(em, Proposal, row);
  if (proposal.status !== 'open') throw new ConflictError(`Proposal ${id} is already ${proposal.status}.`, { status: proposal.status });
  return proposal;
}

/** A proposal of the workspace by id, whatever its status (live updates), or null. */
export async function findProposal(em: RequestContext['em'], workspaceId: string, id: number): Promise<Proposal | null> {
  const row = await proposalById(em, id, workspaceId);
  return row ? entityOf(em, Proposal, row) : null;
}
