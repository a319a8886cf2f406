// The workspace choice: organizations (oldest first, page by page), then the workspaces of the one
// chosen; the workspace picked is the tab's until another is (and the person's next start in this
// browser). It leads to the address that was asked for before there was a choice, if any.
import { announce, fill, h, message } from './dom.js';
import { OrganizationList } from './organizationList.js';
import { chosenWorkspace } from './session.js';
import { showWorkspaces } from './workspaceList.js';

/** The "Choose a workspace" screen. */
export async function workspacesScreen(ctx) {
  const { view, main, gql } = ctx;
  const current = chosenWorkspace.get();
  const column = h('section', { class: 'card column', 'aria-labelledby': 'ws-title' });
  const chooseWorkspace = (w) => {
    chosenWorkspace.set({ id: w.id, name: w.name, organizationId: w.organization.id, organizationName: w.organization.name });
    announce(`Workspace ${w.name} chosen.`);
    ctx.go(ctx.takeAfterChoice());
  };
  const workspacesOf = (org, focus) =>
    showWorkspaces(column, org, {
      gql,
      view,
      focus,
      currentId: current?.id,
      stillWanted: () => orgs.selected?.id === org.id,
      onChoose: chooseWorkspace,
    });
  const orgs = new OrganizationList({
    gql,
    view,
    selected: current ? { id: current.organizationId, name: current.organizationName } : null,
    onChoose: (org) => void workspacesOf(org, true),
  });

  fill(
    main,
    h('h1', { tabindex: '-1' }, 'Choose a workspace'),
    h('p', { class: 'lead' }, 'Pick an organization, then the workspace to review.'),
    ctx.afterChoice
      ? message('info', 'The address you opened (', h('code', {}, `#/${ctx.afterChoice}`), ') opens in the workspace you choose.')
      : null,
    h('div', { class: 'columns columns-2' }, orgs.element(), column),
  );
  fill(column, h('h2', { id: 'ws-title' }, 'Workspaces'), h('p', { class: 'muted' }, 'Choose an organization first.'));
  await orgs.load();
  if (orgs.selected && view.alive) await workspacesOf(orgs.selected, false);
}
