// Proposals to review: the workspace's open proposals, each beside the article's current version
// (a side-by-side line diff), approved or rejected with a reason. The list follows proposalChanged.
/* global setTimeout, clearTimeout */
import { announce, badge, busy, fill, h, keepFocus, keyedList, message, time } from './dom.js';
import { diffStats, lineDiff, sideBySide, splitLines } from './diff.js';

const FIELDS = 'id kind status articleSlug baseVersion section title markdown summary createdAt gapGroupId reviewedAt reason';
const OPEN = `query ConsoleOpenProposals($w: String!, $cursor: String) {
  proposals(workspace: $w, status: open, limit: 50, cursor: $cursor) { items { ${FIELDS} } nextCursor }
}`;
const ARTICLE = `query ConsoleArticle($w: String!, $slug: String!) {
  article(workspace: $w, slug: $slug) { slug title markdown version status section updatedAt }
}`;
const APPROVE = `mutation ConsoleApprove($w: String!, $id: Int!) { approveProposal(workspace: $w, id: $id) { ${FIELDS} } }`;
const REJECT = `mutation ConsoleReject($w: String!, $id: Int!, $reason: String!) {
  rejectProposal(workspace: $w, id: $id, reason: $reason) { ${FIELDS} }
}`;
const CHANGED = `subscription ConsoleProposalChanged($w: String!) { proposalChanged(workspace: $w) { action proposal { id status } } }`;

const kindLabel = (p) => (p.kind === 'edit' ? 'Edit' : 'New draft');
const subject = (p) => (p.kind === 'edit' ? p.articleSlug : (p.title ?? 'untitled'));

export async function proposalsScreen(ctx) {
  const { view, main, workspace, gql } = ctx;
  const w = workspace.id;
  let open = [];
  let nextCursor = null;
  let selectedId = ctx.arg && /^\d+$/.test(ctx.arg) ? Number(ctx.arg) : null;
  /** Proposals this tab approved or rejected: their live events are ours, not news. */
  const reviewedHere = new Set();
  /** The detail on show: `{ id, actions, notice }`. */
  let shown = null;

  const count = h('span', { class: 'count' });
  const list = h('ul', { class: 'proposal-list' });
  const more = h('div', { class: 'more' });
  const listErrors = h('div');
  const detail = h('section', { class: 'detail-pane', 'aria-label': 'Selected proposal' });

  const drawList = () =>
    keepFocus(list, () => {
      fill(count, `${open.length}${nextCursor ? '+' : ''} open`);
      keyedList(list, open, {
        key: (p) => p.id,
        signature: (p) => JSON.stringify([p.summary, p.title, p.id === selectedId]),
        empty: h('li', { class: 'empty' }, 'No open proposals. New ones appear here as agents send them.'),
        render: (p) =>
          h(
            'li',
            {},
            h(
              'button',
              {
                type: 'button',
                class: 'proposal-item',
                'aria-current': p.id === selectedId ? 'true' : null,
                'data-focus': `proposal:${p.id}`,
                on: { click: () => select(p.id, true) },
              },
              h(
                'span',
                { class: 'proposal-item-head' },
                h('span', { class: 'proposal-id' }, `#${p.id}`),
                badge(kindLabel(p), p.kind),
                subject(p),
              ),
              h('span', { class: 'proposal-item-summary' }, p.summary),
              h('span', { class: 'pick-meta' }, time(p.createdAt)),
            ),
          ),
      });
      fill(more, nextCursor ? h('button', { type: 'button', class: 'button-quiet', on: { click: () => load(true) } }, 'Load more') : null);
    });

  async function load(append = false) {
    try {
      const data = await gql(OPEN, { w, cursor: append ? nextCursor : null });
      if (!view.alive) return;
      const items = data.proposals.items;
      open = append ? [...open, ...items.filter((p) => !open.some((o) => o.id === p.id))] : items;
      nextCursor = data.proposals.nextCursor;
      fill(listErrors);
      drawList();
    } catch (error) {
      if (view.alive) fill(listErrors, message('error', error.message));
    }
  }

  function select(id, focus) {
    selectedId = id;
    ctx.setRoute(`proposals/${id}`);
    drawList();
    const proposal = open.find((p) => p.id === id);
    if (!proposal) {
      shown = null;
      fill(
        detail,
        h('h2', { tabindex: '-1' }, `Proposal #${id}`),
        message('info', `Proposal #${id} is not open: it may have been reviewed already.`),
      );
      return;
    }
    void showDetail(proposal, focus);
  }

  async function showDetail(p, focus) {
    const heading = h(
      'h2',
      { tabindex: '-1', id: 'proposal-title' },
      `#${p.id} · ${kindLabel(p)}: `,
      h('span', { class: 'subject' }, subject(p)),
    );
    const body = h('div', { class: 'proposal-body' }, h('p', { class: 'muted' }, 'Loading the current version…'));
    const notice = h('div');
    const actions = h('div', { class: 'review-actions' });
    shown = { id: p.id, actions, notice };
    fill(
      detail,
      heading,
      h(
        'dl',
        { class: 'facts' },
        h('dt', {}, 'Summary'),
        h('dd', {}, p.summary),
        h('dt', {}, 'Sent'),
        h('dd', {}, time(p.createdAt)),
        p.kind === 'edit'
          ? [h('dt', {}, 'Based on'), h('dd', {}, `version ${p.baseVersion}`)]
          : [h('dt', {}, 'Section'), h('dd', {}, h('code', {}, p.section))],
        p.gapGroupId ? [h('dt', {}, 'Answers'), h('dd', {}, h('a', { href: '#/gaps' }, `content-gap group ${p.gapGroupId}`))] : null,
      ),
      notice,
      body,
      actions,
    );
    if (focus) heading.focus();
    drawActions(p, actions, notice);

    if (p.kind !== 'edit') {
      fill(
        body,
        h(
          'p',
          { class: 'diff-intro' },
          'A new article: approving it creates a draft titled ',
          h('strong', {}, p.title ?? ''),
          ' in section ',
          h('code', {}, p.section),
          '.',
        ),
        diffView([], splitLines(p.markdown), { left: 'No article yet', right: `Proposed draft: ${p.title ?? ''}` }),
      );
      return;
    }
    let article;
    try {
      article = (await gql(ARTICLE, { w, slug: p.articleSlug })).article;
    } catch (error) {
      if (!view.alive || shown?.id !== p.id) return;
      fill(
        body,
        message('error', `The current version of ${p.articleSlug} could not be read: ${error.message}`),
        p.markdown === null ? null : diffView([], splitLines(p.markdown), { left: 'Current version (unavailable)', right: 'Proposed' }),
      );
      return;
    }
    if (!view.alive || shown?.id !== p.id) return;
    const titleChange =
      p.title !== null && p.title !== article.title
        ? h(
            'p',
            { class: 'title-change' },
            'Title: ',
            h('del', {}, article.title),
            h('span', { 'aria-hidden': 'true' }, ' → '),
            h('span', { class: 'sr-only' }, ' becomes '),
            h('ins', {}, p.title),
          )
        : null;
    fill(
      body,
      article.version !== p.baseVersion
        ? message(
            'warning',
            `The article changed since this proposal was made (based on version ${p.baseVersion}, now version ${article.version}): approving it will be refused.`,
          )
        : null,
      titleChange,
      p.markdown === null
        ? h('p', { class: 'muted' }, 'The Markdown stays as it is: only the title changes.')
        : diffView(splitLines(article.markdown), splitLines(p.markdown), {
            left: `Current: ${article.title} (version ${article.version})`,
            right: `Proposed${p.title !== null && p.title !== article.title ? `: ${p.title}` : ''}`,
          }),
    );
  }

  function drawActions(p, actions, notice) {
    const result = h('div', { class: 'review-result', tabindex: '-1' });
    const approve = h('form', { class: 'approve-form' }, h('button', { type: 'submit', class: 'primary' }, 'Approve'));
    const reason = h('input', { id: `reason-${p.id}`, name: 'reason', required: true, maxlength: '1000', autocomplete: 'off' });
    const reject = h(
      'form',
      { class: 'reject-form', novalidate: true },
      h('label', { for: reason.id }, 'Reason for rejecting'),
      h('div', { class: 'inline-row' }, reason, h('button', { type: 'submit', class: 'danger' }, 'Reject')),
    );
    const errors = h('div');
    fill(actions, h('h3', { class: 'sr-only' }, 'Review'), errors, h('div', { class: 'review-forms' }, approve, reject), result);

    approve.addEventListener('submit', async (event) => {
      event.preventDefault();
      fill(errors);
      await busy(actions, async () => {
        let approved;
        try {
          reviewedHere.add(p.id);
          approved = (await gql(APPROVE, { w, id: p.id })).approveProposal;
        } catch (error) {
          reviewedHere.delete(p.id);
          if (view.alive) fill(errors, message('error', error.message));
          return;
        }
        if (!view.alive) return;
        forget(p.id);
        announce(`Proposal #${p.id} approved.`);
        fill(actions, result);
        fill(result, message('success', `Approved proposal #${p.id}.`), h('p', { class: 'muted' }, 'Reading the article as it is now…'));
        result.focus();
        try {
          const { article } = await gql(ARTICLE, { w, slug: approved.articleSlug });
          if (!view.alive) return;
          fill(
            result,
            message('success', `Approved proposal #${p.id}: `, h('code', {}, article.slug), ` is now at version ${article.version}.`),
            articleNow(article),
          );
        } catch (error) {
          if (view.alive)
            fill(
              result,
              message('success', `Approved proposal #${p.id}.`),
              message('error', `The article could not be read: ${error.message}`),
            );
        }
      });
    });

    reject.addEventListener('submit', async (event) => {
      event.preventDefault();
      fill(errors);
      const text = reason.value.trim();
      if (!text) {
        fill(errors, message('error', 'Give a reason: the proposer sees it.'));
        reason.focus();
        return;
      }
      await busy(actions, async () => {
        let rejected;
        try {
          reviewedHere.add(p.id);
          rejected = (await gql(REJECT, { w, id: p.id, reason: text })).rejectProposal;
        } catch (error) {
          reviewedHere.delete(p.id);
          if (view.alive) fill(errors, message('error', error.message));
          return;
        }
        if (!view.alive) return;
        forget(p.id);
        announce(`Proposal #${p.id} rejected.`);
        fill(actions, result);
        fill(result, message('success', `Rejected proposal #${p.id}. The proposer sees the reason: `, h('q', {}, rejected.reason)));
        result.focus();
      });
    });
    fill(notice);
  }

  /** Drops a reviewed proposal from the open list. */
  function forget(id) {
    open = open.filter((p) => p.id !== id);
    drawList();
  }

  // Live: any change refreshes the list (batched); the proposal on show says when it was reviewed elsewhere.
  let refresh = null;
  const refreshSoon = () => {
    clearTimeout(refresh);
    refresh = setTimeout(() => void load(false), 250);
  };
  view.subscribe(
    CHANGED,
    { w },
    {
      resumed: refreshSoon,
      next: (data) => {
        const change = data?.proposalChanged;
        if (!change || !view.alive) return;
        const { id, status } = change.proposal;
        if (shown?.id === id && status !== 'open' && !reviewedHere.has(id)) {
          fill(shown.notice, message('warning', `Proposal #${id} was ${status} meanwhile (elsewhere).`));
          fill(shown.actions);
        }
        refreshSoon();
      },
      error: (text) => view.alive && fill(listErrors, message('error', `Live updates of proposals stopped: ${text}`)),
    },
  );
  view.onClose(() => clearTimeout(refresh));

  fill(
    main,
    h('h1', { tabindex: '-1' }, 'Proposals to review'),
    h(
      'p',
      { class: 'lead' },
      `Open proposals in ${workspace.name}: compare each with the article’s current version, then approve or reject it.`,
    ),
    h(
      'div',
      { class: 'columns columns-review' },
      h(
        'aside',
        { class: 'card list-pane', 'aria-labelledby': 'open-title' },
        h(
          'div',
          { class: 'pane-head' },
          h('h2', { id: 'open-title' }, 'Open ', count),
          h('button', { type: 'button', class: 'button-quiet button-small', on: { click: () => load(false) } }, 'Refresh'),
        ),
        listErrors,
        list,
        more,
      ),
      detail,
    ),
  );
  fill(detail, h('p', { class: 'muted placeholder' }, 'Choose a proposal to see its changes.'));
  await load(false);
  if (!view.alive) return;
  if (selectedId !== null) select(selectedId, false);
  else if (open.length) select(open[0].id, false);
}

/** The side-by-side diff of two texts' lines, unchanged runs folded. */
export function diffView(before, after, titles) {
  const ops = lineDiff(before, after);
  const { additions, deletions } = diffStats(ops);
  const rows = sideBySide(ops);
  const wrap = h('div', { class: 'diff-wrap', tabindex: '-1' });
  const tbody = h('tbody');
  const line = (side) =>
    side
      ? [
          h('td', { class: 'ln' }, String(side.no)),
          h(
            'td',
            { class: `code code-${side.type}` },
            side.type === 'del'
              ? h('span', { class: 'sr-only' }, 'removed: ')
              : side.type === 'add'
                ? h('span', { class: 'sr-only' }, 'added: ')
                : null,
            side.text,
          ),
        ]
      : [h('td', { class: 'ln' }), h('td', { class: 'code code-empty' })];
  const rowOf = (r) => h('tr', { class: `row-${r.kind}` }, line(r.left), line(r.right));
  for (const r of rows) {
    if (r.kind !== 'fold') {
      tbody.append(rowOf(r));
      continue;
    }
    const tr = h(
      'tr',
      { class: 'row-fold' },
      h(
        'td',
        { colspan: '4' },
        h(
          'button',
          {
            type: 'button',
            class: 'fold',
            on: {
              click: () => {
                tr.replaceWith(...r.rows.map(rowOf));
                wrap.focus();
              },
            },
          },
          `Show ${r.rows.length} unchanged line${r.rows.length === 1 ? '' : 's'}`,
        ),
      ),
    );
    tbody.append(tr);
  }
  fill(
    wrap,
    h(
      'p',
      { class: 'diff-stats' },
      h('span', { class: 'stat-add' }, `+${additions}`),
      ' ',
      h('span', { class: 'stat-del' }, `−${deletions}`),
      ` line${additions + deletions === 1 ? '' : 's'}`,
      additions + deletions === 0 ? ' (the Markdown is unchanged)' : '',
    ),
    h(
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
      h(
        'thead',
        {},
        h('tr', {}, h('th', { colspan: '2', scope: 'colgroup' }, titles.left), h('th', { colspan: '2', scope: 'colgroup' }, titles.right)),
      ),
      tbody,
    ),
  );
  return wrap;
}

/** The article as it reads now (after an approval). */
function articleNow(article) {
  return h(
    'section',
    { class: 'article-now', 'aria-label': 'The article now' },
    h('h3', {}, article.title),
    h(
      'p',
      { class: 'pick-meta' },
      `version ${article.version} · ${article.status} · section `,
      h('code', {}, article.section),
      ' · updated ',
      time(article.updatedAt),
    ),
    h('pre', { class: 'markdown' }, article.markdown),
  );
}
