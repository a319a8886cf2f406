// The content-gaps screen's list: each group of unanswered questions as a card with its counts, its
// sample questions and what can be done with it (draft a proposal, review the one drafted).
import { badge, fill, h, keepFocus, keyedList, message, time } from './dom.js';
import { GROUPS, SAMPLES } from './gapQueries.js';

/** At most this many pages of sample questions are read per refresh. */
const SAMPLE_PAGES = 5;

const plural = (n, word, suffix = 's') => `${n} ${word}${n === 1 ? '' : suffix}`;

/** Where groups come from, for an empty list. */
const FIRST_STEP =
  'Questions arrive when an agent reports one the docs did not answer (POST /api/v1/workspaces/-/content-gaps, or the MCP tool ' +
  'content_gaps_report) and when a search finds nothing; similar ones are grouped here.';

/** The groups of workspace `w`; `drafting()` names the group whose draft is open, `onDraft(group)` opens one. */
export class GapList {
  constructor({ gql, view, w, drafting, onDraft }) {
    Object.assign(this, { gql, view, w, drafting, onDraft });
    this.groups = [];
    this.samples = new Map();
    this.includeResolved = h('input', { type: 'checkbox', id: 'gaps-resolved' });
    this.includeResolved.addEventListener('change', () => void this.load());
    this.list = h('ol', { class: 'gap-list' });
    this.errors = h('div');
    this.count = h('span', { class: 'count' });
  }

  /** The sample questions of group `id` (none when they could not be read). */
  questions(id) {
    return this.samples.get(id)?.sampleQuestions ?? [];
  }

  /** Reads the groups and their sample questions again. */
  async load() {
    try {
      const [data, samples] = await Promise.all([
        this.gql(GROUPS, { w: this.w, resolved: this.includeResolved.checked }),
        this.loadSamples().catch(() => null), // the groups still show without their questions
      ]);
      if (!this.view.alive) return;
      this.groups = data.contentGapGroups;
      if (samples) this.samples = samples;
      fill(this.errors);
      this.draw();
    } catch (error) {
      if (this.view.alive) this.showError(error.message);
    }
  }

  async loadSamples() {
    const found = new Map();
    let cursor = null;
    for (let page = 0; page < SAMPLE_PAGES; page++) {
      const { contentGaps } = await this.gql(SAMPLES, { w: this.w, cursor });
      for (const gap of contentGaps.items) found.set(gap.id, gap);
      cursor = contentGaps.nextCursor;
      if (!cursor) break;
    }
    return found;
  }

  /** Shows `text` as an error above the list. */
  showError(text) {
    fill(this.errors, message('error', text));
  }

  /** Redraws the cards that changed, keeping the keyboard's place. */
  draw() {
    keepFocus(this.list, () => {
      fill(this.count, plural(this.groups.length, 'group'));
      keyedList(this.list, this.groups, {
        key: (g) => g.id,
        signature: (g) => JSON.stringify([g, this.questions(g.id), this.drafting()?.id === g.id]),
        empty: h(
          'li',
          { class: 'empty' },
          this.includeResolved.checked ? 'No content gaps recorded.' : 'No open content gaps.',
          ' ',
          FIRST_STEP,
        ),
        render: (g) => this.card(g),
      });
    });
  }

  /** Puts the focus on group `id`'s action (back from its draft); `mark` also marks its card as the one asked for and shows it. */
  focusGroup(id, mark = false) {
    const action = this.list.querySelector(`[data-focus="gap:${id}"]`);
    if (mark) {
      const card = action?.closest('li.gap');
      card?.classList.add('gap-asked');
      card?.scrollIntoView({ block: 'center' });
    }
    action?.focus({ preventScroll: mark });
  }

  card(g) {
    const questions = this.questions(g.id);
    return h(
      'li',
      { class: ['card', 'gap', this.drafting()?.id === g.id && 'gap-selected'] },
      h('h3', { class: 'gap-label' }, g.label),
      h(
        'p',
        { class: 'gap-meta' },
        badge(g.state),
        ` ${plural(g.reportCount, 'report')} · ${plural(g.searchCount, 'search', 'es')} without results · first `,
        time(g.firstSeen),
        ' · last ',
        time(g.lastSeen),
      ),
      g.nearestArticleSlug ? h('p', { class: 'gap-meta' }, 'Closest article: ', h('code', {}, g.nearestArticleSlug)) : null,
      questions.length
        ? h(
            'div',
            { class: 'gap-questions' },
            h('p', { class: 'gap-questions-title' }, 'Questions asked'),
            h(
              'ul',
              {},
              questions.map((q) => h('li', {}, q)),
            ),
          )
        : null,
      h('div', { class: 'gap-actions' }, this.action(g)),
    );
  }

  /** A proposed group links to its proposal, a resolved one says when; an open one can be drafted. */
  action(g) {
    if (g.state === 'proposed' && g.proposalId) {
      const href = `#/proposals/${g.proposalId}`;
      return h('a', { href, class: 'button-link', 'data-focus': `gap:${g.id}` }, `Review proposal #${g.proposalId}`);
    }
    if (g.state === 'resolved') return h('span', { class: 'muted' }, 'Resolved ', time(g.resolvedAt));
    return h(
      'button',
      {
        type: 'button',
        class: this.drafting()?.id === g.id ? 'primary' : null,
        'data-focus': `gap:${g.id}`,
        'aria-controls': 'draft-pane',
        on: { click: () => this.onDraft(g) },
      },
      'Draft a proposal',
    );
  }

  /** The list's column: heading with the count, "Include resolved", refresh, errors, the cards. */
  element() {
    return h(
      'section',
      { 'aria-labelledby': 'groups-title', class: 'gap-column' },
      h(
        'div',
        { class: 'pane-head' },
        h('h2', { id: 'groups-title' }, 'Groups ', this.count),
        h(
          'div',
          { class: 'pane-tools' },
          h('span', { class: 'check' }, this.includeResolved, h('label', { for: 'gaps-resolved' }, 'Include resolved')),
          h('button', { type: 'button', class: 'button-quiet button-small', on: { click: () => this.load() } }, 'Refresh'),
        ),
      ),
      this.errors,
      this.list,
    );
  }
}
