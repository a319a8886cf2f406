// The content-gaps screen: questions the docs did not answer, grouped by similarity, beside the pane
// that drafts a new-article proposal from a group. The list follows contentGapChanged. Its address
// may name a group (#/gaps/<id>: shown and focused) and its draft (#/gaps/<id>/draft: the pane opened).
import { fill, h, message } from './dom.js';
import { GapDraft } from './gapDraft.js';
import { GapList } from './gapList.js';
import { CHANGED } from './gapQueries.js';

/** Shows the group the address names (`id`, or `id/draft` to open its draft); says so when it is not open any more. */
async function showAsked(ctx, { list, draft, notice }) {
  const [id, action] = ctx.arg.split('/');
  const group = list.groups.find((g) => String(g.id) === id);
  if (!group) {
    fill(notice, message('info', `Group ${id} is not among the open groups (it may be resolved: tick “Include resolved”).`));
    return;
  }
  ctx.view.focusHeading = false;
  if (action === 'draft' && group.state === 'open') return draft.open(group);
  list.focusGroup(group.id, true);
}

/** The "Content gaps" screen; `ctx.arg` may name a group (`12`) or its draft (`12/draft`). */
export async function gapsScreen(ctx) {
  const { view, main, workspace, gql } = ctx;
  const w = workspace.id;
  const draft = new GapDraft({
    gql,
    view,
    w,
    questions: (id) => list.questions(id),
    onChange: () => list.draw(),
    onClosed: (g) => {
      ctx.setRoute('gaps');
      list.focusGroup(g.id);
    },
    onCreated: () => {
      ctx.setRoute('gaps');
      return list.load();
    },
  });
  const open = (g) => {
    ctx.setRoute(`gaps/${encodeURIComponent(g.id)}/draft`);
    void draft.open(g);
  };
  const list = new GapList({ gql, view, w, drafting: () => draft.group, onDraft: open });
  const notice = h('div');

  const refreshSoon = view.debounced(() => void list.load(), 250);
  view.subscribe(
    CHANGED,
    { w },
    {
      next: refreshSoon,
      resumed: refreshSoon,
      error: (text) => view.alive && list.showError(`Live updates of content gaps stopped: ${text}`),
    },
  );

  fill(
    main,
    h('h1', { tabindex: '-1' }, 'Content gaps'),
    h('p', { class: 'lead' }, 'Questions agents and searches found no answer to, grouped by similarity, most asked first.'),
    notice,
    h('div', { class: 'columns columns-gaps' }, list.element(), draft.panel),
  );
  draft.empty();
  await list.load();
  if (ctx.arg && view.alive) await showAsked(ctx, { list, draft, notice });
}
