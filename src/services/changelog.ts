import type { Scope } from '../auth/authorize.js';
import type { DraftsAsked, Guard, Permit, Publishing } from '../auth/policies.js';
import type { RequestContext } from '../context.js';
import type { ChangelogEntry, ChangelogStatus } from '../entities/ChangelogEntry.js';
import { NotFoundError } from '../errors.js';
import { decodeCursor, pageSize, toPage, type Page } from '../pagination.js';
import { signalEmbeddingWork } from '../search/vectors.js';
import { eventObject, objectPayload } from '../webhooks/objects.js';
import { insertChangelogEntry, listChangelogRows, loadChangelogEntry, removeChangelogEntry } from '../store/changelog.js';
import { enqueueEmbedding, removeEmbeddings } from '../store/embeddings.js';
import { flushChanges } from '../store/entities.js';
import { recordAudit } from './audit.js';
import { inTransaction } from '../store/unitOfWork.js';

export interface ListChangelogArgs {
  drafts?: boolean | null;
  limit?: number | null;
  cursor?: string | null;
}

export interface ChangelogInput {
  title?: string;
  markdown?: string;
  status?: ChangelogStatus;
  tags?: string[];
  publishedAt?: Date | null;
}

/** Published entries, newest first; drafts too when asked for and the operation's policy permits them. */
export async function listChangelog(
  ctx: RequestContext,
  scope: Scope,
  args: ListChangelogArgs,
  permit: Permit<DraftsAsked>,
): Promise<Page<ChangelogEntry>> {
  const size = pageSize(args.limit);
  const withDrafts = Boolean(args.drafts) && permit({ drafts: true });
  const after = args.cursor ? decodeCursor<[string, number]>(args.cursor, ['string', 'number']) : null;
  const rows = await listChangelogRows(ctx.db, scope.workspaceId, { publishedOnly: !withDrafts, after, limit: size + 1 });
  // Read-only: plain objects, not managed entities (no identity map or change tracking per row).
  const entries = rows.map(
    (r) =>
      ({
        id: r.id,
        author: r.author,
        title: r.title,
        markdown: r.markdown,
        status: r.status,
        tags: r.tags,
        createdAt: new Date(r.created_at),
        updatedAt: new Date(r.updated_at),
        publishedAt: r.published_at ? new Date(r.published_at) : null,
      }) as ChangelogEntry,
  );
  return toPage(entries, size, (e) => [(e.publishedAt ?? e.createdAt).toISOString(), e.id]);
}

/** Creates an entry; `status: published` also needs `changelog.publish`. */
export async function createChangelogEntry(
  ctx: RequestContext,
  scope: Scope,
  input: Required<Omit<ChangelogInput, 'publishedAt'>> & { publishedAt: Date | null },
): Promise<ChangelogEntry> {
  return inTransaction(ctx.em, async (em) => {
    const now = new Date();
    const entry = await insertChangelogEntry(em, {
      workspace: scope.workspaceId,
      author: scope.agent.keyName,
      title: input.title,
      markdown: input.markdown,
      status: input.status,
      tags: uniqueTags(input.tags),
      publishedAt: input.publishedAt ?? (input.status === 'published' ? now : null),
      createdAt: now,
      updatedAt: now,
    });
    await enqueueEmbedding(em, scope.workspaceId, 'changelog', entry.id);
    signalEmbeddingWork();
    recordAudit(em, ctx, {
      action: 'changelog.created',
      targetType: 'changelog_entry',
      targetId: entry.id,
      workspaceId: scope.workspaceId,
      payload: objectPayload('ChangelogEntry', entry),
    });
    return entry;
  });
}

/**
 * Updates the given fields. Changing `status`, or the publication time of a published entry,
 * also needs `changelog.publish`. Moving to draft clears `publishedAt` unless one is sent.
 */
export async function updateChangelogEntry(
  ctx: RequestContext,
  scope: Scope,
  id: number,
  input: ChangelogInput,
  guard: Guard<Publishing>,
): Promise<ChangelogEntry> {
  return inTransaction(ctx.em, async (em) => {
    const entry = await findEntry(em, scope, id);
    const before = eventObject('ChangelogEntry', entry);
    const statusChanges = input.status !== undefined && input.status !== entry.status;
    const publishedAtChanges =
      input.publishedAt !== undefined && (input.publishedAt?.getTime() ?? null) !== (entry.publishedAt?.getTime() ?? null);
    guard({ publishes: statusChanges || (publishedAtChanges && (input.status ?? entry.status) === 'published') });
    if ((input.title !== undefined && input.title !== entry.title) || (input.markdown !== undefined && input.markdown !== entry.markdown)) {
      await enqueueEmbedding(em, scope.workspaceId, 'changelog', entry.id);
      signalEmbeddingWork();
    }
    if (input.title !== undefined) entry.title = input.title;
    if (input.markdown !== undefined) entry.markdown = input.markdown;
    if (input.tags !== undefined) entry.tags = uniqueTags(input.tags);
    if (input.publishedAt !== undefined) entry.publishedAt = input.publishedAt;
    if (statusChanges) {
      entry.status = input.status!;
      if (entry.status === 'published') entry.publishedAt ??= new Date();
      else if (input.publishedAt === undefined) entry.publishedAt = null;
    }
    entry.updatedAt = new Date();
    // Written now, so the entity's own update hooks have run before the event takes its state.
    await flushChanges(em);
    recordAudit(em, ctx, {
      action: statusChanges ? 'changelog.status_changed' : 'changelog.updated',
      targetType: 'changelog_entry',
      targetId: entry.id,
      workspaceId: scope.workspaceId,
      payload: objectPayload('ChangelogEntry', entry, before),
    });
    return entry;
  });
}

/** Deletes an entry of the workspace (404 for any other workspace's id). */
export async function deleteChangelogEntry(ctx: RequestContext, scope: Scope, id: number): Promise<{ id: number; deleted: true }> {
  return inTransaction(ctx.em, async (em) => {
    const entry = await findEntry(em, scope, id);
    const payload = objectPayload('ChangelogEntry', entry);
    removeChangelogEntry(em, entry);
    await removeEmbeddings(em, 'changelog', [id]);
    recordAudit(em, ctx, {
      action: 'changelog.deleted',
      targetType: 'changelog_entry',
      targetId: id,
      workspaceId: scope.workspaceId,
      payload,
    });
    return { id, deleted: true as const };
  });
}

async function findEntry(em: RequestContext['em'], scope: Scope, id: number): Promise<ChangelogEntry> {
  const entry = await loadChangelogEntry(em, scope.workspaceId, id);
  if (!entry) throw new NotFoundError('Changelog entry');
  return entry;
}

function uniqueTags(tags: string[]): string[] {
  return [...new Set(tags.map((t) => t.trim()).filter(Boolean))];
}
