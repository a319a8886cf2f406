// The audit trail of the workspace, newest first, filtered by actor, action, target type and time;
// events committed while the screen is open arrive over auditEventAdded and are put on top.
/* global setTimeout */
import { announce, badge, fill, h, isoFromLocal, message, shortId, time } from './dom.js';

const EVENT_FIELDS = 'id actor action targetType targetId agentKeyId memberId requestId createdAt revision truncated object previous';
const TRAIL = `query ConsoleAuditTrail($w: ID!, $actor: String, $action: String, $targetType: String, $from: DateTime, $to: DateTime, $first: Int, $after: String) {
  auditTrail(workspaceId: $w, actor: $actor, action: $action, targetType: $targetType, from: $from, to: $to, first: $first, after: $after) {
    totalCount pageInfo { hasNextPage endCursor } edges { node { ${EVENT_FIELDS} } }
  }
}`;
const ADDED = `subscription ConsoleAuditEventAdded($w: ID!) { auditEventAdded(workspaceId: $w) { ${EVENT_FIELDS} } }`;

const PAGE_SIZE = 30;
/** Suggestions for the action filter (any action may be typed). */
const ACTIONS = [
  'article.created',
  'article.updated',
  'article.status_changed',
  'article.moved',
  'proposal.created',
  'proposal.approved',
  'proposal.rejected',
  'section.created',
  'content_gap.reported',
  'content_gap.resolved',
  'agent_key.created',
  'agent_key.updated',
  'agent_key.revoked',
  'changelog.created',
  'changelog.updated',
  'changelog.status_changed',
  'changelog.deleted',
  'memory.note.updated',
  'memory.note.deleted',
  'openapi.attached',
  'openapi.synced',
  'openapi.detached',
  'openapi.page_detached',
  'upload.created',
  'webhook.created',
  'webhook.updated',
  'webhook.deleted',
  'webhook.secret_rotated',
  'member.created',
  'member.updated',
  'workspace.created',
  'workspace.exported',
  'workspace.imported',
];
const TARGET_TYPES = [
  'article',
  'proposal',
  'section',
  'content_gap_group',
  'content_gap_report',
  'agent_key',
  'changelog_entry',
  'memory_note',
  'api_spec',
  'upload',
  'webhook',
  'member',
  'workspace',
  'organization',
];

export async function auditScreen(ctx) {
  const { view, main, workspace, gql } = ctx;
  let filters = {};
  let events = [];
  let page = { hasNextPage: false, endCursor: null };
  let total = 0;
  let arrived = 0;
  /** Events that arrived live: still marked new when the list is read again. */
  const fresh = new Set();
  let generation = 0;

  const actor = h(
    'select',
    { id: 'audit-actor', name: 'actor' },
    h('option', { value: '' }, 'Anyone'),
    h('option', { value: 'agent' }, 'Agent keys'),
    h('option', { value: 'admin' }, 'Admin token'),
  );
  const action = h('input', {
    id: 'audit-action',
    name: 'action',
    list: 'audit-actions',
    autocomplete: 'off',
    placeholder: 'any',
    maxlength: '200',
  });
  const targetType = h(
    'select',
    { id: 'audit-target', name: 'targetType' },
    h('option', { value: '' }, 'Any'),
    TARGET_TYPES.map((t) => h('option', { value: t }, t)),
  );
  const from = h('input', { id: 'audit-from', name: 'from', type: 'datetime-local' });
  const to = h('input', { id: 'audit-to', name: 'to', type: 'datetime-local' });
  const form = h(
    'form',
    { class: 'filters', 'aria-label': 'Filter the audit trail' },
    h('div', { class: 'field' }, h('label', { for: 'audit-actor' }, 'Actor'), actor),
    h('div', { class: 'field' }, h('label', { for: 'audit-action' }, 'Action'), action),
    h(
      'datalist',
      { id: 'audit-actions' },
      ACTIONS.map((a) => h('option', { value: a })),
    ),
    h('div', { class: 'field' }, h('label', { for: 'audit-target' }, 'Target type'), targetType),
    h('div', { class: 'field' }, h('label', { for: 'audit-from' }, 'From'), from),
    h('div', { class: 'field' }, h('label', { for: 'audit-to' }, 'To'), to),
    h(
      'div',
      { class: 'filter-actions' },
      h('button', { type: 'submit', class: 'primary' }, 'Apply'),
      h('button', { type: 'reset', class: 'button-quiet' }, 'Clear'),
    ),
  );
  const summary = h('p', { class: 'audit-summary', role: 'status' });
  const errors = h('div');
  const tbody = h('tbody');
  const more = h('div', { class: 'more' });

  const readFilters = () => ({
    actor: actor.value || null,
    action: action.value.trim() || null,
    targetType: targetType.value || null,
    from: isoFromLocal(from.value),
    to: isoFromLocal(to.value),
  });

  /** Whether a live event belongs on the list under the filters applied. */
  const matches = (e) =>
    (!filters.actor || e.actor === filters.actor) &&
    (!filters.action || e.action === filters.action) &&
    (!filters.targetType || e.targetType === filters.targetType) &&
    (!filters.from || new Date(e.createdAt) >= new Date(filters.from)) &&
    (!filters.to || new Date(e.createdAt) < new Date(filters.to));

  const row = (e, fresh = false) =>
    h(
      'tr',
      { class: fresh ? 'fresh' : null, 'data-event': e.id },
      h('td', { class: 'nowrap' }, time(e.createdAt, { seconds: true }), fresh ? [' ', badge('new')] : null),
      h('td', {}, e.actor),
      h('td', {}, h('code', { class: 'action' }, e.action)),
      h('td', {}, e.targetType, e.targetId ? [' ', h('code', { class: 'id', title: e.targetId }, short(e.targetId))] : null),
      h('td', {}, shortId(e.agentKeyId) ?? h('span', { class: 'muted' }, '—')),
      h('td', {}, shortId(e.requestId) ?? h('span', { class: 'muted' }, '—')),
      h('td', {}, details(e)),
    );

  const drawSummary = () =>
    fill(
      summary,
      `${total} event${total === 1 ? '' : 's'} match${total === 1 ? 'es' : ''}`,
      events.length < total ? ` (${events.length} shown)` : '',
      arrived ? ` · ${arrived} arrived live` : '',
      '.',
    );

  async function load(append = false) {
    const mine = append ? generation : ++generation;
    try {
      const data = await gql(TRAIL, { w: workspace.id, ...filters, first: PAGE_SIZE, after: append ? page.endCursor : null });
      if (!view.alive || mine !== generation) return;
      const nodes = data.auditTrail.edges.map((e) => e.node);
      if (append) {
        const known = new Set(events.map((e) => e.id));
        const older = nodes.filter((e) => !known.has(e.id));
        events.push(...older);
        tbody.append(...older.map((e) => row(e)));
      } else {
        events = nodes;
        fill(tbody, nodes.length ? nodes.map((e) => row(e, fresh.has(e.id))) : emptyRow());
      }
      page = data.auditTrail.pageInfo;
      total = data.auditTrail.totalCount;
      fill(errors);
      drawSummary();
      fill(
        more,
        page.hasNextPage
          ? h('button', { type: 'button', class: 'button-quiet', on: { click: () => load(true) } }, 'Load older events')
          : null,
      );
    } catch (error) {
      if (view.alive) fill(errors, message('error', error.message));
    }
  }

  const emptyRow = () => h('tr', { class: 'empty-row' }, h('td', { colspan: '7', class: 'empty' }, 'No events match.'));

  const applyFilters = () => {
    filters = readFilters();
    arrived = 0;
    fresh.clear();
    void load(false);
  };
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    applyFilters();
  });
  // After the browser has cleared the fields.
  form.addEventListener('reset', () => setTimeout(applyFilters, 0));

  view.subscribe(
    ADDED,
    { w: workspace.id },
    {
      next: (data) => {
        const e = data?.auditEventAdded;
        if (!e || !view.alive || !matches(e) || events.some((x) => x.id === e.id)) return;
        events.unshift(e);
        fresh.add(e.id);
        total++;
        arrived++;
        tbody.querySelector('.empty-row')?.remove();
        tbody.prepend(row(e, true));
        drawSummary();
        announce(`New audit event: ${e.action}.`);
      },
      // Back after the socket dropped: events committed meanwhile come with the list read again.
      resumed: () => void load(false),
      error: (text) => view.alive && fill(errors, message('error', `Live audit events stopped: ${text}`)),
    },
  );

  fill(
    main,
    h('h1', { tabindex: '-1' }, 'Audit trail'),
    h('p', { class: 'lead' }, `Everything that changed in ${workspace.name}, newest first. New events appear on top as they happen.`),
    form,
    errors,
    summary,
    h(
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
            ['Time', 'Actor', 'Action', 'Target', 'Key', 'Request', 'Details'].map((t) => h('th', { scope: 'col' }, t)),
          ),
        ),
        tbody,
      ),
    ),
    more,
  );
  await load(false);
}

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
