/**
 * An edit proposal applied as a three-way merge: the article's text at the version the proposal
 * was made on (its base, from the article's history), the proposal's text, and the article's text
 * now. Lines only one side changed are taken from it; lines both sides changed alike are taken
 * once; lines both changed differently are a conflict, named with both versions. So a change of
 * status, visibility or placement (which bumps the version but not the text), or an edit of other
 * paragraphs, never makes a proposal stale.
 */
import { diff3Merge } from 'node-diff3';

/** An article's text: its title and Markdown. */
export interface ArticleText {
  title: string;
  markdown: string;
}

/** Lines both sides changed differently: where in the current text (1-based, `currentLines` long), and each side's lines. */
export interface MergeConflict {
  field: 'title' | 'markdown';
  /** First line in the current text the conflict covers (1-based), and how many. */
  line: number;
  currentLines: number;
  base: string[];
  proposed: string[];
  current: string[];
}

/** The merge of a proposal: the text it gives, and its conflicts (none: it applies cleanly). */
export interface Merged extends ArticleText {
  clean: boolean;
  conflicts: MergeConflict[];
}

/** Markers around a conflict in the merged Markdown (a reviewer resolves it by editing the text). */
export const CONFLICT_MARKERS = { proposed: '<<<<<<< proposal', current: '=======', end: '>>>>>>> current' } as const;

/**
 * Merges a proposal (`title` and `markdown` it changes; null: unchanged) into the article now,
 * from the base it was made on. Conflicting Markdown is written with CONFLICT_MARKERS (the
 * proposal's lines, then the current ones); a conflicting title keeps the current title.
 */
export function mergeProposal(
  base: ArticleText,
  proposed: { title: string | null; markdown: string | null },
  current: ArticleText,
): Merged {
  const conflicts: MergeConflict[] = [];
  let title = current.title;
  if (proposed.title !== null && proposed.title !== base.title && proposed.title !== current.title) {
    if (current.title === base.title) title = proposed.title;
    else
      conflicts.push({
        field: 'title',
        line: 1,
        currentLines: 1,
        base: [base.title],
        proposed: [proposed.title],
        current: [current.title],
      });
  }
  const markdown =
    proposed.markdown === null ? { text: current.markdown, conflicts: [] } : mergeLines(base.markdown, proposed.markdown, current.markdown);
  conflicts.push(...markdown.conflicts);
  return { title, markdown: markdown.text, clean: conflicts.length === 0, conflicts };
}

/** The line-wise three-way merge of Markdown, with its conflicts. */
function mergeLines(base: string, proposed: string, current: string): { text: string; conflicts: MergeConflict[] } {
  const out: string[] = [];
  const conflicts: MergeConflict[] = [];
  for (const region of diff3Merge(proposed.split('\n'), base.split('\n'), current.split('\n'), { excludeFalseConflicts: true })) {
    if (region.ok) {
      out.push(...region.ok);
      continue;
    }
    const { a, o, b, bIndex } = region.conflict!;
    conflicts.push({ field: 'markdown', line: bIndex + 1, currentLines: b.length, base: o, proposed: a, current: b });
    out.push(CONFLICT_MARKERS.proposed, ...a, CONFLICT_MARKERS.current, ...b, CONFLICT_MARKERS.end);
  }
  return { text: out.join('\n'), conflicts };
}
