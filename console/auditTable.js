// The audit trail's table: one row per event (time, actor, action, target, key, request), its
// resource before and after on demand; events that arrived live are marked new.
import { badge, fill, h, shortId, time } from './dom.js';

const COLUMNS = ['Time', 'Actor', 'Action', 'Target', 'Key', 'Request', 'Details'];

/** The table of events, newest first. */
export class AuditTable {
  constructor() {
    this.tbody = h('tbody');
  }

  /** Shows `events` instead of the rows on show; those whose id is in `fresh` are marked new. */
  show(events, fresh) {
    fill(this.tbody, events.length ? events.map((e) => row(e, fresh.has(e.id))) : emptyRow());
  }

  /** Adds older events below. */
  append(events) {
    this.tbody.append(...events.map((e) => row(e)));
  }

  /** Puts an event that arrived live on top, marked new. */
  prepend(e) {
    this.tbody.querySelector('.empty-row')?.remove();
    this.tbody.prepend(row(e, true));
  }

  /** The table in its card. */
  element() {
    return h(
      'div',
      { class: 'card table-wrap' },
      h(
        'table',
        { class: 'data audit' },
        h('caption', { class: 'sr-only' }, 'Audit events, newest first'),
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            COLUMNS.map((t) => h('th', { scope: 'col' }, t)),
          ),
        ),
        this.tbody,
      ),
    );
  }
}

function row(e, fresh = false) {
  return h(
    'tr',
    { class: fresh ? 'fresh' : null, 'data-event': e.id },
    h('td', { class: 'nowrap' }, time(e.createdAt, { seconds: true }), fresh ? [' ', badge('new')] : null),
    // A person's actions are recorded under their member.
    h(
      'td',
      {},
      e.actor,
      e.actor === 'member' && e.memberId ? [' ', h('code', { class: 'id', title: e.memberId }, short(e.memberId))] : null,
    ),
    h('td', {}, h('code', { class: 'action' }, e.action)),
    h('td', {}, e.targetType, e.targetId ? [' ', h('code', { class: 'id', title: e.targetId }, short(e.targetId))] : null),
    h('td', {}, shortId(e.agentKeyId) ?? h('span', { class: 'muted' }, '—')),
    h('td', {}, shortId(e.requestId) ?? h('span', { class: 'muted' }, '—')),
    h('td', {}, details(e)),
  );
}

const emptyRow = () => h('tr', { class: 'empty-row' }, h('td', { colspan: String(COLUMNS.length), class: 'empty' }, 'No events match.'));

/** A target id as shown: uuids shortened, slugs and numbers whole up to 28 characters. */
const short = (id) => (/^[0-9a-f]{8}-[0-9a-f-]{27}$/i.test(id) ? `${id.slice(0, 8)}…` : id.length > 28 ? `${id.slice(0, 26)}…` : id);

/** The event's resource and previous values, on demand. */
function details(e) {
  if (!e.object && !e.previous && !e.revision) return h('span', { class: 'muted' }, '—');
  return h(
    'details',
    {},
    h('summary', {}, 'Show', h('span', { class: 'sr-only' }, ` details of ${e.action}`)),
    e.revision ? h('p', {}, `Revision ${e.revision}`) : null,
    e.truncated ? h('p', { class: 'muted' }, 'Long texts were shortened.') : null,
    e.previous ? [h('p', { class: 'details-title' }, 'Before'), h('pre', {}, JSON.stringify(e.previous, null, 2))] : null,
    e.object ? [h('p', { class: 'details-title' }, 'After'), h('pre', {}, JSON.stringify(e.object, null, 2))] : null,
  );
}
