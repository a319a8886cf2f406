// The organizations column of the workspace choice: loaded page by page, filtered by name as typed,
// or opened by id.
import { fill, h, message, time } from './dom.js';
import { ORGANIZATIONS, PAGE_SIZE } from './workspaceQueries.js';

/** The organizations to choose from; `onChoose(org)` hears the one chosen (`selected`). */
export class OrganizationList {
  constructor({ gql, view, selected, onChoose }) {
    Object.assign(this, { gql, view, selected, onChoose });
    this.items = [];
    this.page = { hasNextPage: false, endCursor: null };
    this.total = 0;
    this.list = h('ul', { class: 'pick-list', 'aria-labelledby': 'orgs-title' });
    this.more = h('div', { class: 'more' });
    this.count = h('span', { class: 'count' });
    this.errors = h('div');
    this.filter = h('input', { type: 'search', id: 'org-filter', placeholder: 'Name contains…', autocomplete: 'off' });
    this.filter.addEventListener('input', () => this.draw());
  }

  /** Marks `org` chosen and says so. */
  choose(org) {
    this.selected = org;
    this.draw();
    this.onChoose(org);
  }

  /** Reads the next page (the first, at first). */
  async load() {
    try {
      const data = await this.gql(ORGANIZATIONS, { first: PAGE_SIZE, after: this.page.endCursor });
      if (!this.view.alive) return;
      const connection = data.organizations;
      this.items.push(...connection.edges.map((e) => e.node));
      this.page = connection.pageInfo;
      this.total = connection.totalCount;
      fill(this.errors);
      this.draw();
    } catch (error) {
      if (this.view.alive) fill(this.errors, message('error', error.message));
    }
  }

  /** The loaded organizations whose name holds the filter's text. */
  draw() {
    const needle = this.filter.value.trim().toLowerCase();
    const shown = this.items.filter((o) => !needle || o.name.toLowerCase().includes(needle));
    fill(this.count, `${this.items.length} of ${this.total} loaded`);
    fill(
      this.list,
      shown.length
        ? shown.map((o) => this.item(o))
        : h('li', { class: 'empty' }, this.items.length ? 'No loaded organization matches.' : 'No organizations yet.'),
    );
    fill(
      this.more,
      this.page.hasNextPage
        ? h('button', { type: 'button', class: 'button-quiet', on: { click: () => this.load() } }, 'Load more organizations')
        : null,
    );
  }

  item(o) {
    return h(
      'li',
      {},
      h(
        'button',
        {
          type: 'button',
          class: 'pick',
          'aria-pressed': String(this.selected?.id === o.id),
          'data-focus': `org:${o.id}`,
          on: { click: () => this.choose(o) },
        },
        h('span', { class: 'pick-name' }, o.name),
        h('span', { class: 'pick-meta' }, `${o.plan} · created `, time(o.createdAt, { dateOnly: true })),
      ),
    );
  }

  /** The column: heading, filter, list, "load more" and the form that opens an organization by id. */
  element() {
    return h(
      'section',
      { class: 'card column', 'aria-labelledby': 'orgs-title' },
      h('h2', { id: 'orgs-title' }, 'Organizations ', this.count),
      h('div', { class: 'field field-compact' }, h('label', { for: 'org-filter' }, 'Filter the loaded organizations'), this.filter),
      this.errors,
      this.list,
      this.more,
      this.byIdForm(),
    );
  }

  // An organization past the loaded pages (or with a name shared by others) is opened by its id.
  byIdForm() {
    const byId = h('input', { id: 'org-id', name: 'org-id', autocomplete: 'off', spellcheck: 'false', required: true });
    const form = h(
      'form',
      { class: 'inline-form' },
      h('label', { for: 'org-id' }, 'Open an organization by id'),
      h('div', { class: 'inline-row' }, byId, h('button', { type: 'submit' }, 'Open')),
    );
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const id = byId.value.trim();
      if (id) this.choose(this.items.find((o) => o.id === id) ?? { id, name: undefined });
    });
    return form;
  }
}
