import type { EntityManager } from '@mikro-orm/postgresql';
import { authorize } from '../auth/authorize.js';
import type { RequestContext } from '../context.js';
import { sql } from '../db/sql.js';
import { ContentGapGroup, ContentGapReport } from '../entities/ContentGap.js';
import { NotFoundError } from '../errors.js';
import { enqueueEmbedding, signalEmbeddingWork } from '../search/vectors.js';
import { recordAudit } from './audit.js';
import { firstChars, scrub } from './scrub.js';

export const QUESTION_KEEP = 256;
const REDACTION_NAMES = [['email', 'e-mail addresses'], ['secret', 'secrets'], ['phone', 'phone numbers']] as const;

/**
 * Records one report per call: the question's first 256 characters, scrubbed of e-mail
 * addresses, secrets and phone numbers; an unknown slug is kept and flagged, never refused.
 */
export async function reportContentGap(ctx: RequestContext, workspace: string, input: { question?: string | null; slug?: string | null }): Promise<{ message: string; reported: true }> {
  const scope = await authorize(ctx, workspace, ['content_gap.report']);
  const raw = input.question?.trim() ? firstChars(input.question.trim(), QUESTION_KEEP) : null;
  const cleaned = raw ? scrub(raw) : { text: null, redacted: [] as string[] };
  const question = cleaned.text === null ? null : firstChars(cleaned.text, QUESTION_KEEP);
  const slug = input.slug?.trim() || null;
  const truncated = input.question ? Array.from(input.question.trim()).length > QUESTION_KEEP : false;
  const slugKnown = await ctx.em.transactional(async (em) => {
    const known = slug ? (await sql(em, 'select 1 from articles where workspace_id = ? and slug = ?', [scope.workspaceId, slug])).length > 0 : false;
    const [row] = await sql(
      em,
      'insert into content_gap_reports (workspace_id, question, slug, slug_known, redacted, agent_key_id, created_at) values (?, ?, ?, ?, ?, ?, ?) returning id',
      [scope.workspaceId, question, slug, known, cleaned.redacted.length > 0, scope.agent.keyId, new Date()],
    );
    if (question) await enqueueEmbedding(em, scope.workspaceId, 'gap', row.id);
    recordAudit(em, ctx, { action: 'content_gap.reported', targetType: 'content_gap_report', targetId: row.id, workspaceId: scope.workspaceId });
    return known;
  });
  if (question) signalEmbeddingWork();
  const notes = [
    cleaned.redacted.length ? `removed ${REDACTION_NAMES.filter(([kind]) => cleaned.redacted.includes(kind)).map(([, name]) => name).join(', ')} before storing` : null,
    truncated ? `kept the first ${QUESTION_KEEP} characters of the question` : null,
    slug && !slugKnown ? `no article has the slug "${slug}"; the report keeps it, flagged` : null,
  ].filter(Boolean);
  return { message: `Thanks, the gap was reported${notes.length ? `; ${notes.join('; ')}` : ''}.`, reported: true };
}

/** Reports of a workspace, newest first (dashboards). */
export async function listReports(em: EntityManager, workspaceId: string, limit = 200): Promise<ContentGapReport[]> {
  const rows = await sql(em, 'select * from content_gap_reports where workspace_id = ? order by created_at desc, id desc limit ?', [workspaceId, limit]);
  return rows.map((r) => em.map(ContentGapReport, r));
}

/** Groups of similar unanswered questions, most frequent first (dashboards). */
export async function listGroups(em: EntityManager, workspaceId: string, includeResolved: boolean): Promise<ContentGapGroup[]> {
  const rows = await sql(
    em,
    `select * from content_gap_groups where workspace_id = ? and (?::boolean or resolved_at is null) order by (report_count + search_count) desc, last_seen desc limit 500`,
    [workspaceId, includeResolved],
  );
  return rows.map((r) => em.map(ContentGapGroup, r));
}

/** Marks a group resolved; later similar questions start a new group. */
export async function resolveGroup(ctx: RequestContext, id: number): Promise<ContentGapGroup> {
  return ctx.em.transactional(async (em) => {
    const [row] = await sql(em, 'update content_gap_groups set resolved_at = coalesce(resolved_at, ?) where id = ? returning *', [new Date(), id]);
    if (!row) throw new NotFoundError('Content-gap group');
    recordAudit(em, ctx, { action: 'content_gap.resolved', targetType: 'content_gap_group', targetId: id, workspaceId: row.workspace_id });
    return em.map(ContentGapGroup, row);
  });
}
