// The proposals screen: the workspace's open proposals beside the selected one's changes, approved or
// rejected or returned there. The list follows proposalChanged.
import { fill, h } from './dom.js';
import { ProposalDetail } from './proposalDetail.js';
import { ProposalList } from './proposalList.js';
import { CHANGED } from './proposalQueries.js';

/** The "Proposals to review" screen; `ctx.arg` may name the proposal to show (#/proposals/12). */
export async function proposalsScreen(ctx) {
  const { view, main, workspace, gql } = ctx;
  const w = workspace.id;
  const asked = ctx.arg && /^\d+$/.test(ctx.arg) ? Number(ctx.arg) : null;
  const list = new ProposalList({ gql, view, w, onSelect: (id) => select(id, true) });
  const detail = new ProposalDetail({ gql, view, w, onReviewed: (id) => list.forget(id) });

  function select(id, focus) {
    list.select(id);
    ctx.setRoute(`proposals/${id}`);
    const proposal = list.find(id);
    if (proposal) void detail.show(proposal, focus);
    else detail.notOpen(id);
  }

  // Live: any change reads the list again (a burst once); the proposal on show says when it was reviewed elsewhere.
  const refreshSoon = view.debounced(() => void list.load(false), 250);
  view.subscribe(
    CHANGED,
    { w },
    {
      resumed: refreshSoon,
      next: (data) => {
        const change = data?.proposalChanged;
        if (!change || !view.alive) return;
        detail.changed(change.proposal.id, change.proposal.status);
        refreshSoon();
      },
      error: (text) => view.alive && list.showError(`Live updates of proposals stopped: ${text}`),
    },
  );

  fill(
    main,
    h('h1', { tabindex: '-1' }, 'Proposals to review'),
    h(
      'p',
      { class: 'lead' },
      `Open proposals in ${workspace.name}: compare each with the article’s current version, then approve, reject or return it to its proposer.`,
    ),
    h('div', { class: 'columns columns-review' }, list.element(), detail.pane),
  );
  detail.placeholder();
  list.selectedId = asked; // marked from the first drawing on
  await list.load(false);
  if (!view.alive) return;
  if (asked !== null) select(asked, false);
  else if (list.open.length) select(list.open[0].id, false);
}
