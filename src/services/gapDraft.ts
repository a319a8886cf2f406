/**
 * From gap to draft with what agents learned: the memory notes that answer a content-gap group's
 * questions, and a new-article draft seeded with them (GET …/content-gaps/{group}/draft). The
 * draft is only offered: the caller edits it and proposes it (POST …/content-gaps/{group}/proposal).
 */
import type { Scope } from '../auth/authorize.js';
import type { RequestContext } from '../context.js';
import { ConflictError, NotFoundError } from '../errors.js';
import { RULES } from '../contract/rules.js';
import { seesRestricted } from '../auth/visibility.js';
import { COVERAGE_FLOOR } from '../search/explain.js';
import { rankFullText } from '../search/fullText.js';
import type { GapDraft, GapNote } from '../types/contentGaps.js';
import { groupRows, openGapRows } from '../store/contentGapGroups.js';
import { groupQuestions } from '../store/contentGapReports.js';
import { notesById, type NoteBodyRow } from '../store/noteSearch.js';
import { toGap } from './contentGaps.js';
import { firstChars, scrub } from './scrub.js';

/** How many of a group's questions (the newest) are asked of the notes. */
const QUESTIONS_ASKED = 10;
/** How many of each question's full-text hits are looked at. */
const HITS_PER_QUESTION = 10;
/** How many notes a draft quotes at most. */
const DRAFT_NOTES = 5;
const EXCERPT = 280;

/**
 * The group's draft: its newest questions, the notes that answer them and a draft quoting those
 * notes. A note answers a question by the rule that decides whether a search answered it: it holds
 * at least half of the question's weight, each word weighed by its idf among the notes (so a note
 * in the workspace's own words answers a paraphrase another question of the group used). Notes that
 * answer more of the questions come first. 404 for a group of another workspace, 409 when resolved.
 */
export async function gapDraft(ctx: RequestContext, scope: Scope, groupId: number): Promise<GapDraft> {
  const [row] = await openGapRows(ctx.db, {
    workspaceId: scope.workspaceId,
    canSee: seesRestricted(scope),
    afterAsked: null,
    afterId: null,
    limit: 1,
    onlyId: groupId,
  });
  if (!row) {
    const [resolved] = await groupRows(ctx.db, { workspaceId: scope.workspaceId, withResolved: true, onlyId: groupId, callers: null });
    if (resolved) throw new ConflictError(`Content-gap group ${groupId} is already resolved.`, { state: 'resolved' });
    throw new NotFoundError('Content-gap group');
  }
  const group = toGap(row);
  const asked = await groupQuestions(ctx.db, scope.workspaceId, [groupId], QUESTIONS_ASKED);
  const questions = [...new Set(asked.map((q) => scrub(q.question).text.trim()).filter(Boolean))];
  const answering = await notesAnswering(ctx, scope.workspaceId, questions);
  const rows = await notesById(
    ctx.db,
    scope.workspaceId,
    answering.slice(0, DRAFT_NOTES).map((a) => a.id),
  );
  const byId = new Map(answering.map((a) => [a.id, a]));
  const notes = rows.map((n) => gapNote(n, byId.get(n.id)!));
  return {
    group,
    questions,
    notes,
    title: firstChars(group.label, RULES.title.maxLength),
    markdown: draftMarkdown(questions, rows),
    summary: firstChars(
      `Answers the content gap “${group.label}”` +
        (notes.length ? ` with what agents wrote in ${notes.map((n) => n.path).join(', ')}.` : '; no memory note answers it yet.'),
      RULES.summary.maxLength,
    ),
  };
}

/** Notes holding at least COVERAGE_FLOOR of some question's weight: those answering most questions first, then by their best coverage. */
async function notesAnswering(ctx: RequestContext, workspaceId: string, questions: string[]) {
  const found = new Map<number, { id: number; answers: number; coverage: number; best: number }>();
  for (const q of questions) {
    const { ranking } = await rankFullText(ctx.db, ctx.search.fullText, {
      workspace: workspaceId,
      corpus: 'notes',
      q,
      seesRestricted: true,
      depth: HITS_PER_QUESTION,
    });
    ranking.hits.forEach((hit, rank) => {
      if (hit.coverage < COVERAGE_FLOOR) return;
      const seen = found.get(hit.id) ?? { id: hit.id, answers: 0, coverage: 0, best: rank };
      found.set(hit.id, {
        id: hit.id,
        answers: seen.answers + 1,
        coverage: Math.max(seen.coverage, hit.coverage),
        best: Math.min(seen.best, rank),
      });
    });
  }
  return [...found.values()].sort((a, b) => b.answers - a.answers || b.coverage - a.coverage || a.best - b.best || a.id - b.id);
}

function gapNote(n: NoteBodyRow, found: { answers: number; coverage: number }): GapNote {
  return {
    path: n.path,
    kind: n.kind,
    tags: n.tags,
    version: n.version,
    updatedAt: new Date(n.updated_at),
    answers: found.answers,
    coverage: Math.round(found.coverage * 1e4) / 1e4,
    excerpt: firstChars(n.body, EXCERPT),
  };
}

/** The questions as a list, then each note's body under a heading named from its path, with where it comes from. */
function draftMarkdown(questions: string[], notes: NoteBodyRow[]): string {
  const parts = [`Questions this article answers:\n\n${questions.map((q) => `- ${q}`).join('\n')}`];
  for (const n of notes) {
    parts.push(`## ${headingOf(n.path)}\n\n${n.body.trim()}\n\n_From the memory note \`${n.path}\` (version ${n.version})._`);
  }
  if (!notes.length) parts.push('No memory note answers these questions yet: write the answer here.');
  return `${parts.join('\n\n')}\n`;
}

/** A heading from a note's path: its last segment, `-` and `_` read as spaces, the first letter in capitals. */
function headingOf(path: string): string {
  const last = path.split('/').filter(Boolean).pop() ?? path;
  const words = last.replace(/[-_]+/g, ' ').trim() || path;
  return words.charAt(0).toUpperCase() + words.slice(1);
}
