// The proposals screen's detail pane: the selected proposal's facts, its changes beside the
// article's current version, and the review forms.
import { fill, h, message, time } from './dom.js';
import { splitLines } from './diff.js';
import { diffView } from './diffView.js';
import { kindLabel, subject } from './proposalList.js';
import { ARTICLE } from './proposalQueries.js';
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

  /** Shows proposal `p` (its heading takes the focus with `focus`), then reads what it changes. */
  async show(p, focus) {
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
    drawReview(
      p,
      { actions, notice },
      { gql: this.gql, view: this.view, w: this.w, reviewedHere: this.reviewedHere, onReviewed: this.onReviewed },
    );
    if (p.kind !== 'edit') fill(body, newDraftBody(p));
    else await this.drawEdit(p, body);
  }

  /** A live event said proposal `id` is now `status`: when it is on show and was not reviewed here, say so. */
  changed(id, status) {
    if (this.shown?.id !== id || status === 'open' || this.reviewedHere.has(id)) return;
    fill(this.shown.notice, message('warning', `Proposal #${id} was ${status} meanwhile (elsewhere).`));
    fill(this.shown.actions);
  }

  async drawEdit(p, body) {
    let article;
    try {
      article = (await this.gql(ARTICLE, { w: this.w, slug: p.articleSlug })).article;
    } catch (error) {
      if (!this.view.alive || this.shown?.id !== p.id) return;
      fill(
        body,
        message('error', `The current version of ${p.articleSlug} could not be read: ${error.message}`),
        p.markdown === null ? null : diffView([], splitLines(p.markdown), { left: 'Current version (unavailable)', right: 'Proposed' }),
      );
      return;
    }
    if (this.view.alive && this.shown?.id === p.id) fill(body, editBody(p, article));
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

/** An edit beside the article as it is now: a warning when the article moved on, the new title, the Markdown's diff. */
function editBody(p, article) {
  const retitled = p.title !== null && p.title !== article.title;
  return [
    article.version !== p.baseVersion
      ? message(
          'warning',
          `The article changed since this proposal was made (based on version ${p.baseVersion}, now version ${article.version}): ` +
            'approving it will be refused.',
        )
      : null,
    retitled
      ? h(
          'p',
          { class: 'title-change' },
          'Title: ',
          h('del', {}, article.title),
          h('span', { 'aria-hidden': 'true' }, ' → '),
          h('span', { class: 'sr-only' }, ' becomes '),
          h('ins', {}, p.title),
        )
      : null,
    p.markdown === null
      ? h('p', { class: 'muted' }, 'The Markdown stays as it is: only the title changes.')
      : diffView(splitLines(article.markdown), splitLines(p.markdown), {
          left: `Current: ${article.title} (version ${article.version})`,
          right: `Proposed${retitled ? `: ${p.title}` : ''}`,
        }),
  ];
}
