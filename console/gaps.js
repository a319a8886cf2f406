// The content-gaps screen: questions the docs did not answer, grouped by similarity, beside the pane
// that drafts a new-article proposal from a group. The list follows contentGapChanged.
import { fill, h } from './dom.js';
import { GapDraft } from './gapDraft.js';
import { GapList } from './gapList.js';
import { CHANGED } from './gapQueries.js';

/** The "Content gaps" screen. */
export async function gapsScreen(ctx) {
  const { view, main, workspace, gql } = ctx;
  const w = workspace.id;
  const draft = new GapDraft({
    gql,
    view,
    w,
    questions: (id) => list.questions(id),
    onChange: () => list.draw(),
    onClosed: (g) => list.focusGroup(g.id),
    onCreated: () => list.load(),
  });
  const list = new GapList({ gql, view, w, drafting: () => draft.group, onDraft: (g) => void draft.open(g) });

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
    h('div', { class: 'columns columns-gaps' }, list.element(), draft.panel),
  );
  draft.empty();
  await list.load();
}
