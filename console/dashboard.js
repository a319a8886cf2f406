// The "Agents and people" screen: who uses the workspace, per day (a chart of agents beside people,
// with its table), by door, and the questions each of them asked that the docs did not answer, each
// a link to its group on the content-gaps screen and to drafting the article that answers it.
import { fill, h, message } from './dom.js';
import { activityChart, activityTable, dailySeries, SERIES } from './activityChart.js';

const DAYS = 14;
const ACTIVITY = `query ConsoleActivity($w: ID!, $days: Int!) {
  workspaceActivity(workspaceId: $w, days: $days) { day door caller reads writes searches contentGaps }
}`;
const TOP_GAPS = `query ConsoleTopGaps($w: ID!, $by: Audience!) {
  contentGapGroups(workspaceId: $w, askedBy: $by) { id label state proposalId askedBy { door caller questions } }
}`;
const DOOR_NAMES = { rest: 'REST', mcp: 'MCP', graphql: 'GraphQL', console: 'Console', unknown: 'Before doors were recorded' };

/** What can be done next with group `g`: review its proposal, or draft one (the content-gaps screen opens its pane). */
function nextStep(g) {
  if (g.state === 'proposed' && g.proposalId)
    return h('a', { href: `#/proposals/${g.proposalId}`, class: 'question-action' }, `Review proposal #${g.proposalId}`);
  return h('a', { href: `#/gaps/${encodeURIComponent(g.id)}/draft`, class: 'question-action' }, 'Draft a proposal');
}

/** What the list says when no question of the series is open: where questions come from. */
const NONE_OPEN = {
  agents:
    'None open. Agents’ questions arrive when they report one the docs did not answer (content_gaps_report over REST or MCP) ' +
    'and when their searches find nothing.',
  people: 'None open. Searches by people that find nothing arrive here.',
};

/** The top `n` groups a series asked, with how many of their questions it asked; each links to its group and its next step. */
function topQuestions(groups, series, n = 5) {
  const asked = (g) => g.askedBy.filter((a) => series.callers.includes(a.caller)).reduce((sum, a) => sum + a.questions, 0);
  const items = groups
    .slice(0, n)
    .map((g) =>
      h(
        'li',
        {},
        h(
          'a',
          { class: 'question', href: `#/gaps/${encodeURIComponent(g.id)}`, title: 'Open the group on the content-gaps screen' },
          g.label,
        ),
        h('span', { class: 'count' }, `× ${asked(g)}`),
        nextStep(g),
      ),
    );
  return h(
    'section',
    { class: 'card column', 'aria-label': `Unanswered questions from ${series.key}` },
    h('h2', {}, series.key === 'agents' ? 'Unanswered, from agents' : 'Unanswered, from people'),
    items.length ? h('ol', { class: 'top-questions' }, items) : h('p', { class: 'muted' }, NONE_OPEN[series.key]),
  );
}

/** Operations per door over the period, agents and people apart. */
function doorTable(rows) {
  const doors = [...new Set(rows.map((r) => r.door))].sort();
  const sum = (door, series) =>
    rows.filter((r) => r.door === door && series.callers.includes(r.caller)).reduce((n, r) => n + r.reads + r.writes, 0);
  return h(
    'table',
    { class: 'data compact' },
    h('caption', {}, `By door, last ${DAYS} days`),
    h(
      'thead',
      {},
      h('tr', {}, h('th', { scope: 'col' }, 'Door'), h('th', { scope: 'col' }, 'Agents'), h('th', { scope: 'col' }, 'People')),
    ),
    h(
      'tbody',
      {},
      doors.map((d) =>
        h(
          'tr',
          {},
          h('th', { scope: 'row' }, DOOR_NAMES[d] ?? d),
          SERIES.map((series) => h('td', {}, sum(d, series).toLocaleString())),
        ),
      ),
    ),
  );
}

/** The "Agents and people" screen. */
export async function dashboardScreen(ctx) {
  const { view, main, workspace, gql } = ctx;
  const body = h('div', { class: 'dashboard' }, h('p', { class: 'muted' }, 'Loading…'));
  fill(
    main,
    h('h1', { tabindex: '-1' }, 'Agents and people'),
    h(
      'p',
      { class: 'lead' },
      `Who used ${workspace.name} over the last ${DAYS} days (UTC), and what they asked that the docs did not answer.`,
    ),
    body,
  );
  try {
    const [activity, agents, people] = await Promise.all([
      gql(ACTIVITY, { w: workspace.id, days: DAYS }),
      gql(TOP_GAPS, { w: workspace.id, by: 'AGENTS' }),
      gql(TOP_GAPS, { w: workspace.id, by: 'PEOPLE' }),
    ]);
    if (!view.alive) return;
    const rows = activity.workspaceActivity;
    const points = dailySeries(rows, DAYS);
    fill(
      body,
      h('section', { class: 'card' }, activityChart(points), h('details', {}, h('summary', {}, 'The figures'), activityTable(points))),
      h(
        'div',
        { class: 'columns columns-3' },
        topQuestions(agents.contentGapGroups, SERIES[0]),
        topQuestions(people.contentGapGroups, SERIES[1]),
        h('section', { class: 'card column' }, doorTable(rows)),
      ),
    );
  } catch (error) {
    if (view.alive) fill(body, message('error', error.message));
  }
}
