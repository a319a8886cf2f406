// The proposals screen's detail pane: the selected proposal's facts, its changes beside the
// article's current version (merged into it when the article moved on, its conflicts shown), and the
// review forms.
import { fill, h, message, time } from './dom.js';
import { splitLines } from './diff.js';
import { diffView } from './diffView.js';
import { kindLabel, subject } from './proposalList.js';
import { ARTICLE, MERGE } from './proposalQueries.js';
import { drawReview } from './proposalReview.js';

/** The pane showing one proposal of workspace `w`; `onReviewed(id)` hears one approved or rejected here. */
export class ProposalDetail {
  constructor({ gql, view, w, onReviewed }) {
    Object.assign(this, { gql, view, w, onReviewed });
    this.pane = h('section', { class: 'detail-pane', 'aria-label': 'Selected proposal' });
    /** The proposal on show: `{ id, actions, notice }`. */
    this.shown = null;
    /** Proposals this tab approved or rejected: their live events are ours, not news. */
    this.reviewedHere = new Set();
  }

  /** The pane before any proposal is chosen. */
  placeholder() {
    fill(this.pane, h('p', { class: 'muted placeholder' }, 'Choose a proposal to see its changes.'));
  }

  /** Says proposal `id` is not (or no longer) open. */
  notOpen(id) {
    this.shown = null;
    fill(
      this.pane,
      h('h2', { tabindex: '-1' }, `Proposal #${id}`),
      message('info', `Proposal #${id} is not open: it may have been reviewed already.`),
    );
  }

  /** Shows proposal `p` (its heading takes the focus with `focus`; `warning` said first), then reads what it changes. */
  async show(p, focus, warning = null) {
    const heading = h(
      'h2',
      { tabindex: '-1', id: 'proposal-title' },
      `#${p.id} · ${kindLabel(p)}: `,
      h('span', { class: 'subject' }, subject(p)),
    );
    const body = h('div', { class: 'proposal-body' }, h('p', { class: 'muted' }, 'Loading the current version…'));
    const notice = h('div');
    const actions = h('div', { class: 'review-actions' });
    this.shown = { id: p.id, actions, notice };
    fill(this.pane, heading, facts(p), notice, body, actions);
    if (focus) heading.focus();
    if (p.kind !== 'edit') {
      this.review(p, { actions, notice }, null);
      fill(body, newDraftBody(p));
    } else await this.drawEdit(p, body, { actions, notice });
    if (warning && this.shown?.id === p.id) fill(notice, message('warning', warning));
  }

  /** The review forms of `p`; an approval refused because the article changed meanwhile shows the proposal again. */
  review(p, slots, merge) {
    drawReview(p, slots, {
      gql: this.gql,
      view: this.view,
      w: this.w,
      reviewedHere: this.reviewedHere,
      onReviewed: this.onReviewed,
      merge,
      onConflict: (text) => {
        if (this.view.alive && this.shown?.id === p.id) void this.show(p, false, `${text} The merge below is as of now.`);
      },
    });
  }

  /** A live event said proposal `id` is now `status`: when it is on show and was not reviewed here, say so. */
  changed(id, status) {
    if (this.shown?.id !== id || status === 'open' || this.reviewedHere.has(id)) return;
    fill(this.shown.notice, message('warning', `Proposal #${id} was ${status} meanwhile (elsewhere).`));
    fill(this.shown.actions);
  }

  /** An edit: the article now and the merge preview, read together; then the diff and the review forms. */
  async drawEdit(p, body, slots) {
    let article;
    let merge;
    try {
      const [now, preview] = await Promise.all([
        this.gql(ARTICLE, { w: this.w, slug: p.articleSlug }),
        this.gql(MERGE, { w: this.w, id: p.id }),
      ]);
      article = now.article;
      merge = preview.proposalMerge;
    } catch (error) {
      if (!this.view.alive || this.shown?.id !== p.id) return;
      fill(
        body,
        message('error', `The current version of ${p.articleSlug} could not be read: ${error.message}`),
        p.markdown === null ? null : diffView([], splitLines(p.markdown), { left: 'Current version (unavailable)', right: 'Proposed' }),
      );
      this.review(p, slots, null);
      return;
    }
    if (!this.view.alive || this.shown?.id !== p.id) return;
    fill(body, article.version === p.baseVersion || !merge ? editBody(p, article) : mergedBody(p, article, merge));
    this.review(p, slots, merge);
  }
}

function facts(p) {
  return h(
    'dl',
    { class: 'facts' },
    h('dt', {}, 'Summary'),
    h('dd', {}, p.summary),
    h('dt', {}, 'Sent'),
    h('dd', {}, time(p.createdAt)),
    p.kind === 'edit'
      ? [h('dt', {}, 'Based on'), h('dd', {}, `version ${p.baseVersion}`)]
      : [h('dt', {}, 'Section'), h('dd', {}, h('code', {}, p.section))],
    p.gapGroupId ? [h('dt', {}, 'Answers'), h('dd', {}, h('a', { href: '#/gaps' }, `content-gap group ${p.gapGroupId}`))] : null,
  );
}

function newDraftBody(p) {
  return [
    h(
      'p',
      { class: 'diff-intro' },
      'A new article: approving it creates a draft titled ',
      h('strong', {}, p.title ?? ''),
      ' in section ',
      h('code', {}, p.section),
      '.',
    ),
    diffView([], splitLines(p.markdown), { left: 'No article yet', right: `Proposed draft: ${p.title ?? ''}` }),
  ];
}

/** An edit of the article as it still is: the new title, the Markdown's diff. */
function editBody(p, article) {
  const retitled = p.title !== null && p.title !== article.title;
  return [
    retitled ? titleChange(article.title, p.title) : null,
    p.markdown === null
      ? h('p', { class: 'muted' }, 'The Markdown stays as it is: only the title changes.')
      : diffView(splitLines(article.markdown), splitLines(p.markdown), {
          left: `Current: ${article.title} (version ${article.version})`,
          right: `Proposed${retitled ? `: ${p.title}` : ''}`,
        }),
  ];
}

/**
 * An edit of an article that changed since it was made: what approving gives (the article now beside
 * the merge), or the lines both changed differently, each with its three versions.
 */
function mergedBody(p, article, merge) {
  const since = `The article changed since this proposal was made (based on version ${p.baseVersion}, now version ${article.version})`;
  if (merge.clean)
    return [
      message('info', `${since}: approving merges this edit into it. Below, the article now beside the merged text.`),
      merge.title !== article.title ? titleChange(article.title, merge.title) : null,
      diffView(splitLines(article.markdown), splitLines(merge.markdown), {
        left: `Current: ${article.title} (version ${article.version})`,
        right: 'After approval (merged)',
      }),
    ];
  const n = merge.conflicts.length;
  return [
    message(
      'warning',
      `${since}, and ${n === 1 ? 'one place was' : `${n} places were`} changed two ways: ` +
        `resolve ${n === 1 ? 'it' : 'them'} in the text below to approve, or return the proposal with a comment.`,
    ),
    h(
      'ol',
      { class: 'conflicts' },
      merge.conflicts.map((c) => h('li', { class: 'conflict' }, conflictView(p, article, c))),
    ),
  ];
}

/** One conflict: where it is in the article now, and its lines when proposed, in the edit and now. */
function conflictView(p, article, c) {
  const where =
    c.field === 'title'
      ? 'The title'
      : c.currentLines > 1
        ? `Lines ${c.line}–${c.line + c.currentLines - 1} of the article now`
        : `Line ${c.line} of the article now`;
  const column = (heading, lines) =>
    h('div', { class: 'conflict-side' }, h('h5', {}, heading), h('pre', { class: 'markdown' }, lines.length ? lines.join('\n') : '(none)'));
  return [
    h('h4', {}, where),
    h(
      'div',
      { class: 'conflict-sides' },
      column(`When proposed (version ${p.baseVersion})`, c.base),
      column('Proposed', c.proposed),
      column(`Now (version ${article.version})`, c.current),
    ),
  ];
}

function titleChange(before, after) {
  return h(
    'p',
    { class: 'title-change' },
    'Title: ',
    h('del', {}, before),
    h('span', { 'aria-hidden': 'true' }, ' → '),
    h('span', { class: 'sr-only' }, ' becomes '),
    h('ins', {}, after),
  );
}
