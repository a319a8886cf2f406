// The review console's DOM helpers: elements are built from text nodes only (no HTML is ever parsed), so
// nothing the service returns can become markup.
/* global document, Node, setTimeout */

/**
 * h('button', { class: 'primary', type: 'button', on: { click } }, 'Approve'): an element with
 * attributes (`class`, `text`, `on`, `dataset`, booleans as present/absent, anything else set as is)
 * and children (strings become text; null, undefined and false are skipped; arrays are flattened).
 */
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(props ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name === 'class') el.className = Array.isArray(value) ? value.filter(Boolean).join(' ') : value;
    else if (name === 'text') el.textContent = String(value);
    else if (name === 'on') for (const [event, handler] of Object.entries(value)) el.addEventListener(event, handler);
    else if (name === 'dataset') Object.assign(el.dataset, value);
    else if (name === 'value') el.value = value;
    else if (value === true) el.setAttribute(name, '');
    else el.setAttribute(name, String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replaces the children of `el`. */
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

let uid = 0;
/** A fresh element id (labels, descriptions). */
export const nextId = (prefix) => `${prefix}-${++uid}`;

/** A labelled form control: `<div class="field"><label for>…</label>{control}{hint}</div>`. */
export function field(label, control, hint) {
  if (!control.id) control.id = nextId('f');
  let hintEl = null;
  if (hint) {
    hintEl = h('p', { class: 'hint', id: nextId('hint') }, hint);
    control.setAttribute('aria-describedby', hintEl.id);
  }
  return h('div', { class: 'field' }, h('label', { for: control.id }, label), control, hintEl);
}

const FORMATS = {
  minutes: new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' }),
  seconds: new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' }),
  date: new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' }),
};

/** `<time>` of an ISO timestamp in local time, to the minute (or `seconds`, or the date only); '—' for none. */
export function time(iso, { dateOnly = false, seconds = false } = {}) {
  if (!iso) return h('span', { class: 'muted' }, '—');
  const date = new Date(iso);
  const format = dateOnly ? FORMATS.date : seconds ? FORMATS.seconds : FORMATS.minutes;
  return h('time', { datetime: date.toISOString(), title: date.toISOString() }, format.format(date));
}

/** A small state label. */
export const badge = (text, kind = text) => h('span', { class: `badge badge-${String(kind).replace(/[^\w-]/g, '')}` }, text);

/** A message box: role=alert for errors (read at once), role=status for the rest. */
export function message(kind, ...children) {
  return h('div', { class: `message message-${kind}`, role: kind === 'error' ? 'alert' : 'status' }, ...children);
}

/** Says `text` to screen readers through the page's polite live region. */
export function announce(text) {
  const region = document.getElementById('announcer');
  if (!region) return;
  region.textContent = '';
  // A change a moment later is announced even when the same text is repeated.
  setTimeout(() => (region.textContent = text), 50);
}

/**
 * Runs `render` (which replaces elements inside `container`) and puts the focus back on the element
 * with the same `data-focus` key, so a list refreshed by a live update does not lose the keyboard's place.
 */
export function keepFocus(container, render) {
  const active = document.activeElement;
  const key = active && container.contains(active) ? active.getAttribute('data-focus') : null;
  render();
  if (!key) return;
  const again = [...container.querySelectorAll('[data-focus]')].find((el) => el.getAttribute('data-focus') === key);
  again?.focus();
}

const signatures = new WeakMap();

/**
 * Shows `items` in `list` as the elements `render(item)` makes, keyed by `key(item)`. An element
 * whose `signature(item)` has not changed stays as it is, so a live update redrawing the list does
 * not swallow a click or move the focus; the others are made anew, in the order of `items`.
 * `empty` is shown when there are no items.
 */
export function keyedList(list, items, { key, signature, render, empty }) {
  const kept = new Map();
  for (const el of list.children) if (el.dataset.key) kept.set(el.dataset.key, el);
  const wanted = items.map((item) => {
    const id = String(key(item));
    const sign = signature(item);
    const old = kept.get(id);
    if (old && signatures.get(old) === sign) return old;
    const el = render(item);
    el.dataset.key = id;
    signatures.set(el, sign);
    return el;
  });
  if (!wanted.length) return void fill(list, empty);
  const keep = new Set(wanted);
  for (const el of [...list.children]) if (!keep.has(el)) el.remove();
  wanted.forEach((el, i) => {
    if (list.children[i] !== el) list.insertBefore(el, list.children[i] ?? null);
  });
}

/** Disables a form's controls while `work` runs (a second Enter does not send twice). */
export async function busy(form, work) {
  const controls = [...form.querySelectorAll('button, input, select, textarea')].filter((c) => !c.disabled);
  for (const c of controls) c.disabled = true;
  form.setAttribute('aria-busy', 'true');
  try {
    return await work();
  } finally {
    for (const c of controls) c.disabled = false;
    form.removeAttribute('aria-busy');
  }
}

/** A datetime-local value (local time) as an ISO timestamp, or null when empty. */
export function isoFromLocal(value) {
  if (!value) return null;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}

/** Shortens an id for display (the whole one in the title). */
export const shortId = (id) => (id ? h('code', { title: id, class: 'id' }, id.length > 12 ? `${id.slice(0, 8)}…` : id) : null);
