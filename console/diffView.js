// The side-by-side view of a line diff (diff.js computes it): a table of both texts, replaced lines
// beside their replacements, unchanged runs folded behind a button.
import { fill, h } from './dom.js';
import { diffStats, lineDiff, sideBySide } from './diff.js';

/** The side-by-side diff of two texts' lines (`before`, `after`) under `titles.left` and `titles.right`. */
export function diffView(before, after, titles) {
  const ops = lineDiff(before, after);
  const wrap = h('div', { class: 'diff-wrap', tabindex: '-1' });
  const tbody = h('tbody');
  for (const r of sideBySide(ops)) tbody.append(r.kind === 'fold' ? foldRow(r, wrap) : row(r));
  fill(wrap, statsLine(diffStats(ops)), table(titles, tbody));
  return wrap;
}

function row(r) {
  return h('tr', { class: `row-${r.kind}` }, cells(r.left), cells(r.right));
}

/** One side of a row: its line number and text (said as removed or added to screen readers), or two empty cells. */
function cells(side) {
  if (!side) return [h('td', { class: 'ln' }), h('td', { class: 'code code-empty' })];
  const said = { del: 'removed: ', add: 'added: ' }[side.type];
  return [
    h('td', { class: 'ln' }, String(side.no)),
    h('td', { class: `code code-${side.type}` }, said ? h('span', { class: 'sr-only' }, said) : null, side.text),
  ];
}

/** A folded run of unchanged lines: a button that puts them back (the focus stays in the diff). */
function foldRow(r, wrap) {
  const unfold = () => {
    tr.replaceWith(...r.rows.map(row));
    wrap.focus();
  };
  const tr = h(
    'tr',
    { class: 'row-fold' },
    h(
      'td',
      { colspan: '4' },
      h(
        'button',
        { type: 'button', class: 'fold', on: { click: unfold } },
        `Show ${r.rows.length} unchanged line${r.rows.length === 1 ? '' : 's'}`,
      ),
    ),
  );
  return tr;
}

function statsLine({ additions, deletions }) {
  return h(
    'p',
    { class: 'diff-stats' },
    h('span', { class: 'stat-add' }, `+${additions}`),
    ' ',
    h('span', { class: 'stat-del' }, `−${deletions}`),
    ` line${additions + deletions === 1 ? '' : 's'}`,
    additions + deletions === 0 ? ' (the Markdown is unchanged)' : '',
  );
}

function table(titles, tbody) {
  const header = (title) => h('th', { colspan: '2', scope: 'colgroup' }, title);
  return h(
    'table',
    { class: 'diff' },
    h('caption', { class: 'sr-only' }, `${titles.left} on the left, ${titles.right} on the right`),
    h(
      'colgroup',
      {},
      h('col', { class: 'col-ln' }),
      h('col', { class: 'col-code' }),
      h('col', { class: 'col-ln' }),
      h('col', { class: 'col-code' }),
    ),
    h('thead', {}, h('tr', {}, header(titles.left), header(titles.right))),
    tbody,
  );
}
