// The proposals screen's list of open proposals: newest first, page by page, the selected one marked;
// redrawn in place so a live refresh keeps the keyboard's place.
import { badge, fill, h, keepFocus, keyedList, message, time } from './dom.js';
import { OPEN } from './proposalQueries.js';

/** "Edit" or "New draft". */
export const kindLabel = (p) => (p.kind === 'edit' ? 'Edit' : 'New draft');

/** What a proposal is about: the article it edits, or the title of the new one. */
export const subject = (p) => (p.kind === 'edit' ? p.articleSlug : (p.title ?? 'untitled'));

/** The open proposals of workspace `w`; `onSelect(id)` hears a click on one. */
export class ProposalList {
  constructor({ gql, view, w, onSelect }) {
    Object.assign(this, { gql, view, w, onSelect });
    this.open = [];
    this.nextCursor = null;
    this.selectedId = null;
    this.count = h('span', { class: 'count' });
    this.list = h('ul', { class: 'proposal-list' });
    this.more = h('div', { class: 'more' });
    this.errors = h('div');
  }

  /** Reads the first page again, or (`append`) the next one. */
  async load(append = false) {
    try {
      const data = await this.gql(OPEN, { w: this.w, cursor: append ? this.nextCursor : null });
      if (!this.view.alive) return;
      const items = data.proposals.items;
      this.open = append ? [...this.open, ...items.filter((p) => !this.open.some((o) => o.id === p.id))] : items;
      this.nextCursor = data.proposals.nextCursor;
      fill(this.errors);
      this.draw();
    } catch (error) {
      if (this.view.alive) fill(this.errors, message('error', error.message));
    }
  }

  /** The open proposal `id`, if it is listed. */
  find(id) {
    return this.open.find((p) => p.id === id);
  }

  /** Marks proposal `id` as the one on show. */
  select(id) {
    this.selectedId = id;
    this.draw();
  }

  /** Drops a reviewed proposal from the list. */
  forget(id) {
    this.open = this.open.filter((p) => p.id !== id);
    this.draw();
  }

  /** Shows `message` above the list (e.g. the live updates stopped). */
  showError(text) {
    fill(this.errors, message('error', text));
  }

  draw() {
    keepFocus(this.list, () => {
      fill(this.count, `${this.open.length}${this.nextCursor ? '+' : ''} open`);
      keyedList(this.list, this.open, {
        key: (p) => p.id,
        signature: (p) => JSON.stringify([p.summary, p.title, p.id === this.selectedId]),
        empty: h(
          'li',
          { class: 'empty' },
          'No open proposals. Agents send them with POST /api/v1/workspaces/-/proposals (or the MCP tool proposals_create) ',
          'and they appear here at once; you can also ',
          h('a', { href: '#/gaps' }, 'draft one from a content gap'),
          '.',
        ),
        render: (p) => this.item(p),
      });
      const more = h('button', { type: 'button', class: 'button-quiet', on: { click: () => this.load(true) } }, 'Load more');
      fill(this.more, this.nextCursor ? more : null);
    });
  }

  item(p) {
    return h(
      'li',
      {},
      h(
        'button',
        {
          type: 'button',
          class: 'proposal-item',
          'aria-current': p.id === this.selectedId ? 'true' : null,
          'data-focus': `proposal:${p.id}`,
          on: { click: () => this.onSelect(p.id) },
        },
        h(
          'span',
          { class: 'proposal-item-head' },
          h('span', { class: 'proposal-id' }, `#${p.id}`),
          badge(kindLabel(p), p.kind),
          subject(p),
        ),
        h('span', { class: 'proposal-item-summary' }, p.summary),
        h('span', { class: 'pick-meta' }, time(p.createdAt)),
      ),
    );
  }

  /** The list's pane: heading with the count and a refresh button, errors, list, "load more". */
  element() {
    return h(
      'aside',
      { class: 'card list-pane', 'aria-labelledby': 'open-title' },
      h(
        'div',
        { class: 'pane-head' },
        h('h2', { id: 'open-title' }, 'Open ', this.count),
        h('button', { type: 'button', class: 'button-quiet button-small', on: { click: () => this.load(false) } }, 'Refresh'),
      ),
      this.errors,
      this.list,
      this.more,
    );
  }
}
