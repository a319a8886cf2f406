// The agent-keys screen's table: the organization's keys (never a secret) with their member,
// workspace, permissions and state, all or only the (un)revoked ones, page by page.
import { announce, badge, fill, h, message, time } from './dom.js';
import { KEYS, REVOKE } from './keyQueries.js';
import { PERMISSIONS } from './pageNames.js';
import { drawRevoke } from './revoke.js';

const PAGE_SIZE = 25;
const COLUMNS = ['Name', 'Member', 'Workspace', 'Permissions', 'Created', 'Last used', 'Status', ''];

/** A key's state: revoked or expired (and when), or active (and until when). */
function keyStatus(k) {
  if (k.revokedAt) return [badge('revoked'), ' ', time(k.revokedAt)];
  if (k.expiresAt && new Date(k.expiresAt) <= new Date()) return [badge('expired'), ' ', time(k.expiresAt)];
  return [badge('active'), k.expiresAt ? [' until ', time(k.expiresAt)] : null];
}

/** An e-mail address that may wrap after its `@` (and nowhere else unless it must). */
function breakableEmail(email) {
  const at = email.lastIndexOf('@');
  return at < 0 ? email : [email.slice(0, at + 1), h('wbr'), email.slice(at + 1)];
}

/** How many permissions a row shows as chips before the rest fold away (a key may hold all of them). */
const CHIPS_SHOWN = 3;

/** A key's permissions: a few chips, the rest behind "and n more", so a key holding every one keeps its row narrow. */
function permissionChips(permissions) {
  const chips = (list, label) =>
    h(
      'ul',
      { class: 'chips', 'aria-label': label },
      list.map((p) => h('li', {}, p)),
    );
  const label = permissions.length === PERMISSIONS.length ? `all ${permissions.length} permissions` : `${permissions.length} permissions`;
  if (permissions.length <= CHIPS_SHOWN + 1) return chips(permissions, label);
  const rest = permissions.slice(CHIPS_SHOWN);
  return [
    chips(permissions.slice(0, CHIPS_SHOWN), label),
    h('details', { class: 'more-chips' }, h('summary', {}, `and ${rest.length} more`), chips(rest, `the other ${rest.length}`)),
  ];
}

/** The keys of organization `org`. */
export class KeyList {
  constructor({ gql, view, org }) {
    Object.assign(this, { gql, view, org });
    this.keys = [];
    this.page = { hasNextPage: false, endCursor: null };
    this.total = 0;
    this.show = h(
      'select',
      { id: 'keys-show' },
      h('option', { value: 'all' }, 'All keys'),
      h('option', { value: 'active' }, 'Unrevoked'),
      h('option', { value: 'revoked' }, 'Revoked'),
    );
    this.show.addEventListener('change', () => void this.load(false));
    this.count = h('span', { class: 'count' });
    this.tbody = h('tbody');
    this.more = h('div', { class: 'more' });
    this.errors = h('div');
  }

  /** Reads the first page again, or (`append`) the next one. */
  async load(append = false) {
    try {
      const revoked = this.show.value === 'all' ? null : this.show.value === 'revoked';
      const after = append ? this.page.endCursor : null;
      const data = await this.gql(KEYS, { org: this.org, first: PAGE_SIZE, after, revoked });
      if (!this.view.alive) return;
      const nodes = data.agentKeys.edges.map((e) => e.node);
      this.keys = append ? [...this.keys, ...nodes] : nodes;
      this.page = data.agentKeys.pageInfo;
      this.total = data.agentKeys.totalCount;
      fill(this.errors);
      this.draw();
    } catch (error) {
      if (this.view.alive) fill(this.errors, message('error', error.message));
    }
  }

  /** Puts a key just created on top. */
  add(key) {
    this.keys = [key, ...this.keys.filter((k) => k.id !== key.id)];
    this.total++;
    this.draw();
  }

  draw() {
    fill(this.count, `${this.keys.length} of ${this.total}`);
    fill(
      this.tbody,
      this.keys.length ? this.keys.map((k) => this.row(k)) : h('tr', {}, h('td', { colspan: '8', class: 'empty' }, this.emptyText())),
    );
    const more = h('button', { type: 'button', class: 'button-quiet', on: { click: () => this.load(true) } }, 'Load more keys');
    fill(this.more, this.page.hasNextPage ? more : null);
  }

  /** What an empty table says: how to start, or that the filter left nothing. */
  emptyText() {
    if (this.show.value === 'revoked') return 'No revoked keys.';
    if (this.show.value === 'active') return 'No unrevoked keys: create one with the form.';
    return 'No keys yet. Create one with the form: an agent sends it as Authorization: Bearer svc_pat_… (REST and MCP).';
  }

  row(k) {
    const actionCell = h('td', { class: 'cell-action' });
    const permissions = permissionChips(k.permissions);
    const tr = h(
      'tr',
      { 'data-key': k.id },
      h('th', { scope: 'row' }, h('span', { class: 'key-name' }, k.name), h('code', { class: 'id', title: k.id }, `${k.id.slice(0, 8)}…`)),
      h('td', {}, h('span', { class: 'email' }, breakableEmail(k.member.email)), h('span', { class: 'pick-meta' }, k.member.role)),
      h('td', {}, k.workspace ? k.workspace.name : h('span', { class: 'muted' }, 'Organization-wide')),
      h('td', { class: 'perms' }, permissions),
      h('td', {}, time(k.createdAt, { dateOnly: true })),
      h('td', {}, time(k.lastUsedAt)),
      h('td', { class: 'cell-status' }, keyStatus(k)),
      actionCell,
    );
    // A revoked key has nothing left to revoke.
    if (!k.revokedAt)
      drawRevoke(actionCell, {
        name: k.name,
        consequence: 'Agents using it are refused at once.',
        send: async () => (await this.gql(REVOKE, { id: k.id })).revokeAgentKey,
        view: this.view,
        onRevoked: (revoked, cell) => this.revoked(revoked, cell),
      });
    return tr;
  }

  /** Redraws a key's row once revoked; its state takes the focus. */
  revoked(key, cell) {
    this.keys = this.keys.map((x) => (x.id === key.id ? key : x));
    const tr = this.row(key);
    cell.closest('tr').replaceWith(tr);
    const statusCell = tr.querySelector('.cell-status');
    statusCell.setAttribute('tabindex', '-1');
    statusCell.focus();
    announce(`Key ${key.name} revoked.`);
  }

  /** The table's card: heading with the count and the "Show" choice, errors, table, "load more". */
  element() {
    const head = h(
      'tr',
      {},
      COLUMNS.map((t) => h('th', { scope: 'col' }, t || h('span', { class: 'sr-only' }, 'Actions'))),
    );
    return h(
      'section',
      { class: 'card', 'aria-labelledby': 'keys-title' },
      h(
        'div',
        { class: 'pane-head' },
        h('h2', { id: 'keys-title' }, 'Keys ', this.count),
        h('div', { class: 'pane-tools' }, h('label', { for: 'keys-show' }, 'Show'), this.show),
      ),
      this.errors,
      h('div', { class: 'table-wrap' }, h('table', { class: 'data keys' }, h('thead', {}, head), this.tbody)),
      this.more,
    );
  }
}
