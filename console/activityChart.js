// A bar chart of a workspace's use per day, agents beside people, drawn as SVG from DOM calls only
// (no markup is parsed), with its figures also in a table for screen readers and copying.
/* global document */
import { h } from './dom.js';

const SVG = 'http://www.w3.org/2000/svg';

/** An SVG element with attributes and children (text children become text nodes). */
function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) el.setAttribute(name, String(value));
  for (const child of children) el.append(typeof child === 'string' ? document.createTextNode(child) : child);
  return el;
}

/** The two series of the chart: which kinds of caller each counts. */
export const SERIES = [
  { key: 'agents', label: 'Agents (keys and connected apps)', callers: ['agent_key', 'oauth_grant'], className: 'bar-agents' },
  { key: 'people', label: 'People (signed-in members)', callers: ['member'], className: 'bar-people' },
];

/** Per day (oldest first, every day of the period, empty ones too): each series' operations (reads + writes). */
export function dailySeries(rows, days, today = new Date()) {
  const dates = Array.from({ length: days }, (_, i) => new Date(today.getTime() - (days - 1 - i) * 86_400_000).toISOString().slice(0, 10));
  return dates.map((day) => {
    const point = { day };
    for (const series of SERIES)
      point[series.key] = rows
        .filter((r) => r.day === day && series.callers.includes(r.caller))
        .reduce((n, r) => n + r.reads + r.writes, 0);
    return point;
  });
}

/** What a bar counts: the chart's unit, on its vertical axis and in its title. */
export const UNIT = 'operations per day';

/** The chart: grouped bars per day on a shared scale, with the unit and labels on its axes, and a legend. */
export function activityChart(points) {
  const width = 1200;
  const height = 220;
  const pad = { left: 64, right: 8, top: 12, bottom: 28 };
  const max = Math.max(1, ...points.flatMap((p) => SERIES.map((series) => p[series.key])));
  const slot = (width - pad.left - pad.right) / points.length;
  const bar = Math.max(2, (slot - 6) / SERIES.length);
  const y = (v) => pad.top + (height - pad.top - pad.bottom) * (1 - v / max);
  const svg = s('svg', { viewBox: `0 0 ${width} ${height}`, class: 'chart', role: 'img', 'aria-labelledby': 'activity-chart-title' });
  svg.append(s('title', { id: 'activity-chart-title' }, 'Operations per day (reads and writes): agents beside people'));
  // The unit, along the vertical axis.
  const middle = pad.top + (height - pad.top - pad.bottom) / 2;
  svg.append(
    s('text', { x: 14, y: middle, transform: `rotate(-90 14 ${middle})`, 'text-anchor': 'middle', class: 'axis axis-unit' }, UNIT),
  );
  for (const tick of [0, Math.round(max / 2), max]) {
    svg.append(s('line', { x1: pad.left, x2: width - pad.right, y1: y(tick), y2: y(tick), class: 'grid' }));
    svg.append(s('text', { x: pad.left - 6, y: y(tick) + 4, 'text-anchor': 'end', class: 'axis' }, tick.toLocaleString()));
  }
  points.forEach((point, i) => {
    const x0 = pad.left + i * slot + 3;
    SERIES.forEach((series, j) => {
      const value = point[series.key];
      const rect = s('rect', { x: x0 + j * bar, y: y(value), width: bar - 1, height: y(0) - y(value), class: series.className });
      rect.append(s('title', {}, `${point.day}: ${value.toLocaleString()} by ${series.key}`));
      svg.append(rect);
    });
    if (points.length <= 14 || i % 2 === 0)
      svg.append(s('text', { x: x0 + slot / 2 - 3, y: height - 10, 'text-anchor': 'middle', class: 'axis' }, point.day.slice(5)));
  });
  const legend = h(
    'ul',
    { class: 'legend' },
    SERIES.map((series) => h('li', {}, h('span', { class: `swatch ${series.className}`, 'aria-hidden': 'true' }), series.label)),
  );
  const caption = h(
    'figcaption',
    {},
    'Each bar counts one UTC day’s operations (reads plus writes) by agents or by people, through REST, MCP, GraphQL and this console.',
  );
  return h('figure', { class: 'chart-figure' }, svg, legend, caption);
}

/** The chart's figures as a table. */
export function activityTable(points) {
  return h(
    'table',
    { class: 'data compact' },
    h('caption', {}, 'Operations per day (reads and writes)'),
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        h('th', { scope: 'col' }, 'Day'),
        SERIES.map((series) => h('th', { scope: 'col' }, series.key === 'agents' ? 'Agents' : 'People')),
      ),
    ),
    h(
      'tbody',
      {},
      points.map((p) =>
        h(
          'tr',
          {},
          h('th', { scope: 'row' }, p.day),
          SERIES.map((series) => h('td', {}, p[series.key].toLocaleString())),
        ),
      ),
    ),
  );
}
