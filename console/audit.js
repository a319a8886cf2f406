// The audit-trail screen: the workspace's events, newest first, under the filters applied; events
// committed while the screen is open arrive over auditEventAdded and are put on top.
import { announce, fill, h, message } from './dom.js';
import { ADDED, TRAIL } from './auditQueries.js';
import { auditFilters, matchesFilters } from './auditFilters.js';
import { AuditTable } from './auditTable.js';

const PAGE_SIZE = 30;

/** The events of one workspace under the filters applied, read page by page and added to live. */
class AuditTrail {
  constructor({ gql, view, w }) {
    Object.assign(this, { gql, view, w });
    this.filters = {};
    this.events = [];
    this.page = { hasNextPage: false, endCursor: null };
    this.total = 0;
    this.arrived = 0;
    /** Events that arrived live: still marked new when the list is read again. */
    this.fresh = new Set();
    /** Counts the reads from the first page: an answer to an older one (other filters) is dropped. */
    this.generation = 0;
    this.table = new AuditTable();
    this.summary = h('p', { class: 'audit-summary', role: 'status' });
    this.errors = h('div');
    this.more = h('div', { class: 'more' });
  }

  /** Reads the trail again under `filters`. */
  apply(filters) {
    this.filters = filters;
    this.arrived = 0;
    this.fresh.clear();
    void this.load(false);
  }

  /** Reads the first page again, or (`append`) the next, older one. */
  async load(append = false) {
    const mine = append ? this.generation : ++this.generation;
    try {
      const after = append ? this.page.endCursor : null;
      const data = await this.gql(TRAIL, { w: this.w, ...this.filters, first: PAGE_SIZE, after });
      if (!this.view.alive || mine !== this.generation) return;
      const nodes = data.auditTrail.edges.map((e) => e.node);
      if (append) {
        const known = new Set(this.events.map((e) => e.id));
        const older = nodes.filter((e) => !known.has(e.id));
        this.events.push(...older);
        this.table.append(older);
      } else {
        this.events = nodes;
        this.table.show(nodes, this.fresh);
      }
      this.page = data.auditTrail.pageInfo;
      this.total = data.auditTrail.totalCount;
      fill(this.errors);
      this.drawSummary();
      const older = h('button', { type: 'button', class: 'button-quiet', on: { click: () => this.load(true) } }, 'Load older events');
      fill(this.more, this.page.hasNextPage ? older : null);
    } catch (error) {
      if (this.view.alive) this.showError(error.message);
    }
  }

  /** An event committed just now: on top, when the filters select it and it is not listed yet. */
  add(e) {
    if (!matchesFilters(this.filters, e) || this.events.some((x) => x.id === e.id)) return;
    this.events.unshift(e);
    this.fresh.add(e.id);
    this.total++;
    this.arrived++;
    this.table.prepend(e);
    this.drawSummary();
    announce(`New audit event: ${e.action}.`);
  }

  /** Shows `text` as an error above the summary. */
  showError(text) {
    fill(this.errors, message('error', text));
  }

  drawSummary() {
    const { total, events, arrived } = this;
    fill(
      this.summary,
      `${total} event${total === 1 ? '' : 's'} match${total === 1 ? 'es' : ''}`,
      events.length < total ? ` (${events.length} shown)` : '',
      arrived ? ` · ${arrived} arrived live` : '',
      '.',
    );
  }
}

/** The "Audit trail" screen. */
export async function auditScreen(ctx) {
  const { view, main, workspace, gql } = ctx;
  const trail = new AuditTrail({ gql, view, w: workspace.id });
  view.subscribe(
    ADDED,
    { w: workspace.id },
    {
      next: (data) => {
        const e = data?.auditEventAdded;
        if (e && view.alive) trail.add(e);
      },
      // Back after the socket dropped: events committed meanwhile come with the list read again.
      resumed: () => void trail.load(false),
      error: (text) => view.alive && trail.showError(`Live audit events stopped: ${text}`),
    },
  );
  fill(
    main,
    h('h1', { tabindex: '-1' }, 'Audit trail'),
    h('p', { class: 'lead' }, `Everything that changed in ${workspace.name}, newest first. New events appear on top as they happen.`),
    auditFilters((filters) => trail.apply(filters)),
    trail.errors,
    trail.summary,
    trail.table.element(),
    trail.more,
  );
  await trail.load(false);
}
