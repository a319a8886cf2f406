// The workspaces column of the workspace choice: the workspaces of one organization, page by page.
import { fill, h, message, time } from './dom.js';
import { PAGE_SIZE, WORKSPACES } from './workspaceQueries.js';

/**
 * Shows the workspaces of `org` in `column` (its heading takes the focus with `focus`). Pages that
 * arrive once `stillWanted()` is false (another organization was chosen meanwhile) are dropped;
 * `onChoose(workspace)` hears the one chosen, `currentId` is marked as the tab's.
 */
export async function showWorkspaces(column, org, { gql, view, focus, currentId, stillWanted, onChoose }) {
  const items = [];
  let page = { hasNextPage: false, endCursor: null };
  const list = h('ul', { class: 'pick-list', 'aria-labelledby': 'ws-title' });
  const more = h('div', { class: 'more' });
  const errors = h('div');
  const title = h('h2', { id: 'ws-title', tabindex: '-1' }, `Workspaces of ${org.name ?? org.id}`);
  fill(column, title, errors, list, more);
  const draw = () => {
    const item = (w) => workspaceItem(w, currentId === w.id, onChoose);
    const none = h(
      'li',
      { class: 'empty' },
      'This organization has no workspaces yet. With the admin token: ',
      h('code', {}, `npm run wks -- workspaces create --org ${org.id} --name Docs`),
    );
    fill(list, items.length ? items.map(item) : none);
    fill(
      more,
      page.hasNextPage ? h('button', { type: 'button', class: 'button-quiet', on: { click: () => load() } }, 'Load more workspaces') : null,
    );
  };
  const load = async () => {
    try {
      const data = await gql(WORKSPACES, { org: org.id, first: PAGE_SIZE, after: page.endCursor });
      if (!view.alive || !stillWanted()) return;
      items.push(...data.workspaces.edges.map((e) => e.node));
      page = data.workspaces.pageInfo;
      // An organization opened by id learns its name from its first workspace.
      if (items[0] && org.name === undefined) org.name = items[0].organization.name;
      title.textContent = `Workspaces of ${org.name ?? org.id}`;
      draw();
    } catch (error) {
      if (view.alive) fill(errors, message('error', error.message));
    }
  };
  await load();
  if (focus && view.alive) title.focus();
}

function workspaceItem(w, current, onChoose) {
  return h(
    'li',
    {},
    h(
      'button',
      { type: 'button', class: 'pick', 'aria-pressed': String(current), on: { click: () => onChoose(w) } },
      h('span', { class: 'pick-name' }, w.name),
      h('span', { class: 'pick-meta' }, 'created ', time(w.createdAt, { dateOnly: true }), ' · ', h('code', {}, w.id)),
    ),
  );
}
