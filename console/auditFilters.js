// The audit trail's filters: actor, action (any may be typed; the service's event types are
// suggested), target type and a time range.
/* global setTimeout */
import { h, isoFromLocal } from './dom.js';
import { EVENT_TYPES, TARGET_TYPES } from './pageNames.js';

/** The filter form; `onApply(filters)` hears them on submit and once the form is cleared. */
export function auditFilters(onApply) {
  const actor = h(
    'select',
    { id: 'audit-actor', name: 'actor' },
    h('option', { value: '' }, 'Anyone'),
    h('option', { value: 'agent' }, 'Agent keys'),
    h('option', { value: 'member' }, 'People'),
    h('option', { value: 'oauth' }, 'Connected apps'),
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
  const labelled = (id, label, control) => h('div', { class: 'field' }, h('label', { for: id }, label), control);
  const form = h(
    'form',
    { class: 'filters', 'aria-label': 'Filter the audit trail' },
    labelled('audit-actor', 'Actor', actor),
    labelled('audit-action', 'Action', action),
    h(
      'datalist',
      { id: 'audit-actions' },
      EVENT_TYPES.map((a) => h('option', { value: a })),
    ),
    labelled('audit-target', 'Target type', targetType),
    labelled('audit-from', 'From', from),
    labelled('audit-to', 'To', to),
    h(
      'div',
      { class: 'filter-actions' },
      h('button', { type: 'submit', class: 'primary' }, 'Apply'),
      h('button', { type: 'reset', class: 'button-quiet' }, 'Clear'),
    ),
  );
  const apply = () =>
    onApply({
      actor: actor.value || null,
      action: action.value.trim() || null,
      targetType: targetType.value || null,
      from: isoFromLocal(from.value),
      to: isoFromLocal(to.value),
    });
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    apply();
  });
  // After the browser has cleared the fields.
  form.addEventListener('reset', () => setTimeout(apply, 0));
  return form;
}

/** Whether an event (e.g. one arriving live) belongs on the list under `filters`. */
export function matchesFilters(filters, e) {
  return (
    (!filters.actor || e.actor === filters.actor) &&
    (!filters.action || e.action === filters.action) &&
    (!filters.targetType || e.targetType === filters.targetType) &&
    (!filters.from || new Date(e.createdAt) >= new Date(filters.from)) &&
    (!filters.to || new Date(e.createdAt) < new Date(filters.to))
  );
}
