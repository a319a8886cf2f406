import type { EntityManager } from '@mikro-orm/postgresql';
import type { Scope } from '../auth/authorize.js';
import { articleVisible, seesRestricted } from '../auth/visibility.js';
import type { RequestContext } from '../context.js';
import { pgArray, sql } from '../db/sql.js';
import { cosine } from '../search/embedder.js';
import { ContentGapGroup, ContentGapReport } from '../entities/ContentGap.js';
import { ConflictError, NotFoundError } from '../errors.js';
import type { Proposal } from '../entities/Proposal.js';
import { decodeCursor, pageSize, toPage, type Page } from '../pagination.js';
import type { ContentGap } from '../types/contentGaps.js';
import { insertProposal } from './proposals.js';
import { enqueueEmbedding, signalEmbeddingWork, type Neighbour } from '../search/vectors.js';
import type { QuestionToCluster } from '../search/worker.js';
import { recordAudit } from './audit.js';
import { firstChars, scrub } from './scrub.js';

const QUESTION_KEEP = 256;
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
  const slugKnown = await ctx.em.transactional(async (em) => {
    // Stored: whether the slug names an article. Answered: whether it names one this key may see,
    // so a restricted article and no article read the same to a viewer.
    const [article] = slug
      ? await sql(
          em,
          `select ${articleVisible('a', 's')} as visible from articles a join sections s on s.id = a.section_id where a.workspace_id = ? and a.slug = ?`,
          [seesRestricted(scope), scope.workspaceId, slug],
        )
      : [];
    const known = Boolean(article);
    const [row] = await sql<{ id: number }>(
      em,
      'insert into content_gap_reports (workspace_id, question, slug, slug_known, redacted, agent_key_id, created_at) values (?, ?, ?, ?, ?, ?, ?) returning id',
      [scope.workspaceId, question, slug, known, cleaned.redacted.length > 0, scope.agent.keyId, new Date()],
    );
    if (question) await enqueueEmbedding(em, scope.workspaceId, 'gap', row.id);
    recordAudit(em, ctx, {
      action: 'content_gap.reported',
      targetType: 'content_gap_report',
      targetId: row.id,
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
  const rows = await sql(em, 'select * from content_gap_reports where workspace_id = ? order by created_at desc, id desc limit ?', [
    workspaceId,
    limit,
  ]);
  return rows.map((r) => em.map(ContentGapReport, r));
}

/** Groups of similar unanswered questions, most frequent first (dashboards); with `onlyId`, that group alone (resolved or not). */
export async function listGroups(
  em: EntityManager,
  workspaceId: string,
  includeResolved: boolean,
  onlyId: number | null = null,
): Promise<ContentGapGroup[]> {
  const rows = await sql<{ proposal_id: number | null; proposal_status: string | null }>(
    em,
    `select g.*, p.id as proposal_id, p.status as proposal_status from content_gap_groups g
       left join lateral (select id, status from proposals where gap_group_id = g.id order by id desc limit 1) p on true
      where g.workspace_id = ? and (?::boolean or g.resolved_at is null) and (?::int is null or g.id = ?::int)
      order by (g.report_count + g.search_count) desc, g.last_seen desc limit 500`,
    [workspaceId, includeResolved || onlyId !== null, onlyId, onlyId],
  );
  return rows.map((r) => {
    const group = em.map(ContentGapGroup, r);
    group.proposalId = r.proposal_id;
    group.state = group.resolvedAt ? 'resolved' : r.proposal_status === 'open' ? 'proposed' : 'open';
    return group;
  });
}

/** Marks a group resolved; later similar questions start a new group. */
export async function resolveGroup(ctx: RequestContext, id: number): Promise<ContentGapGroup> {
  return ctx.em.transactional(async (em) => {
    const [row] = await sql<{ workspace_id: string }>(
      em,
      'update content_gap_groups set resolved_at = coalesce(resolved_at, ?) where id = ? returning *',
      [new Date(), id],
    );
    if (!row) throw new NotFoundError('Content-gap group');
    recordAudit(em, ctx, { action: 'content_gap.resolved', targetType: 'content_gap_group', targetId: id, workspaceId: row.workspace_id });
    return em.map(ContentGapGroup, row);
  });
}

/** Sample questions a listed group carries (newest first). */
const SAMPLES = 3;

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
  const rows = await sql<GapRow>(
    ctx.db,
    `select g.id, g.label, g.report_count, g.search_count, g.report_count + g.search_count as asked, g.first_seen, g.last_seen,
            (select a.slug from articles a join sections s on s.id = a.section_id
              where a.workspace_id = g.workspace_id and a.slug = g.nearest_article_slug and ${articleVisible('a', 's', ':see_restricted')}) as nearest,
            (select p.id from proposals p where p.gap_group_id = g.id and p.status = 'open' order by p.id desc limit 1) as proposal_id,
            array(select q.question from (
                    select r.question, r.created_at, r.id from content_gap_reports r where r.group_id = g.id and r.question is not null
                    union all
                    select l.query, l.created_at, l.id from search_log l where l.group_id = g.id) q
                  order by q.created_at desc, q.id desc limit ${SAMPLES}) as samples
       from content_gap_groups g
      where g.workspace_id = :workspace and g.resolved_at is null
        and (:after_asked::int is null or (g.report_count + g.search_count, g.id) < (:after_asked::int, :after_id::int))
      order by asked desc, g.id desc limit :limit`,
    {
      workspace: scope.workspaceId,
      see_restricted: seesRestricted(scope),
      after_asked: after?.[0] ?? null,
      after_id: after?.[1] ?? null,
      limit: size + 1,
    },
  );
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
  return ctx.em.transactional(async (em) => {
    const [group] = await sql<{ resolved_at: string | null }>(
      em,
      'select resolved_at from content_gap_groups where id = ? and workspace_id = ? for update',
      [groupId, scope.workspaceId],
    );
    if (!group) throw new NotFoundError('Content-gap group');
    if (group.resolved_at) throw new ConflictError(`Content-gap group ${groupId} is already resolved.`, { state: 'resolved' });
    const [waiting] = await sql<{ id: number }>(em, "select id from proposals where gap_group_id = ? and status = 'open'", [groupId]);
    if (waiting)
      throw new ConflictError(`Content-gap group ${groupId} already has proposal ${waiting.id} waiting for review.`, {
        state: 'proposed',
        proposalId: waiting.id,
      });
    return insertProposal(em, ctx, scope, { ...input, article: null }, groupId);
  });
}

interface GapRow {
  id: number;
  label: string;
  report_count: number;
  search_count: number;
  asked: number;
  first_seen: string;
  last_seen: string;
  nearest: string | null;
  proposal_id: number | null;
  samples: string[];
}

function toGap(r: GapRow): ContentGap {
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
  };
}

/** Questions this similar (cosine) to a group's centroid join it. */
const GROUP_SIMILARITY = 0.7;
/** Below this similarity, no article is named as the nearest. */
const NEAREST_ARTICLE_FLOOR = 0.3;

/** An unanswered question just embedded: a content-gap report or a zero-result search. */

/**
 * Puts an unanswered question into the most similar open group of its workspace (≥ 0.7 to the
 * group's centroid, which moves to include it), or starts a group named by it with the nearest
 * article; inside the caller's transaction (groups are locked while compared).
 */
export async function clusterQuestion(
  em: EntityManager,
  question: QuestionToCluster,
  nearestArticle: (vector: number[]) => Promise<Neighbour[]>,
): Promise<void> {
  const groups = await sql<GroupRow>(
    em,
    'select id, centroid, report_count, search_count from content_gap_groups where workspace_id = ? and resolved_at is null order by id for update',
    [question.workspaceId],
  );
  let best: { group: GroupRow; similarity: number } | null = null;
  for (const group of groups) {
    const similarity = cosine(question.vector, group.centroid);
    if (similarity >= GROUP_SIMILARITY && (!best || similarity > best.similarity)) best = { group, similarity };
  }
  const table = question.itemType === 'gap' ? 'content_gap_reports' : 'search_log';
  const [{ created_at: seen }] = await sql<{ created_at: string }>(em, `select created_at from ${table} where id = ?`, [question.itemId]);
  const groupId = best ? await joinGroup(em, best.group, question, seen) : await startGroup(em, question, seen, nearestArticle);
  await sql(em, `update ${table} set group_id = ? where id = ?`, [groupId, question.itemId]);
}

interface GroupRow {
  id: number;
  centroid: number[];
  report_count: number;
  search_count: number;
}

async function joinGroup(em: EntityManager, group: GroupRow, question: QuestionToCluster, seen: string): Promise<number> {
  const n = Number(group.report_count) + Number(group.search_count);
  const centroid = group.centroid.map((c, i) => (c * n + question.vector[i]) / (n + 1));
  const isReport = question.itemType === 'gap';
  await sql(
    em,
    `update content_gap_groups set centroid = ?::real[], report_count = report_count + ?, search_count = search_count + ?,
       first_seen = least(first_seen, ?), last_seen = greatest(last_seen, ?) where id = ?`,
    [pgArray(centroid), isReport ? 1 : 0, isReport ? 0 : 1, seen, seen, group.id],
  );
  return group.id;
}

async function startGroup(
  em: EntityManager,
  question: QuestionToCluster,
  seen: string,
  nearestArticle: (vector: number[]) => Promise<Neighbour[]>,
): Promise<number> {
  const [nearest] = await nearestArticle(question.vector);
  let slug: string | null = null;
  if (nearest && nearest.similarity >= NEAREST_ARTICLE_FLOOR) {
    const [row] = await sql<{ slug: string }>(em, 'select slug from articles where id = ?', [nearest.itemId]);
    slug = row?.slug ?? null;
  }
  const isReport = question.itemType === 'gap';
  const [row] = await sql<{ id: number }>(
    em,
    `insert into content_gap_groups (workspace_id, label, centroid, report_count, search_count, first_seen, last_seen, nearest_article_slug)
     values (?, ?, ?::real[], ?, ?, ?, ?, ?) returning id`,
    [
      question.workspaceId,
      question.text.slice(0, QUESTION_KEEP),
      pgArray(question.vector),
      isReport ? 1 : 0,
      isReport ? 0 : 1,
      seen,
      seen,
      slug,
    ],
  );
  return row.id;
}
