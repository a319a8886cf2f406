// The agent-keys screen: the keys of the workspace's organization (never a secret) beside the form
// that creates one for a member (its secret shown once); revocation in the table.
import { fill, h } from './dom.js';
import { drawKeyForm } from './keyForm.js';
import { KeyList } from './keyList.js';
import { showSecret } from './keySecret.js';

/** The "Agent keys" screen. */
export async function keysScreen(ctx) {
  const { view, main, workspace, gql } = ctx;
  const org = workspace.organizationId;
  const list = new KeyList({ gql, view, org });
  const secretSlot = h('div', { class: 'secret-slot' });
  const formPane = h('section', { class: 'card create-pane', 'aria-labelledby': 'create-title' });
  const onCreated = (created) => {
    showSecret(secretSlot, created, () => formPane.querySelector('input')?.focus());
    list.add(created.agentKey);
  };

  fill(
    main,
    h('h1', { tabindex: '-1' }, 'Agent keys'),
    h('p', { class: 'lead' }, `Keys of ${workspace.organizationName}. Secrets are never shown again after creation.`),
    secretSlot,
    h('div', { class: 'columns columns-keys' }, list.element(), formPane),
  );
  fill(formPane, h('h2', { id: 'create-title' }, 'Create a key'), h('p', { class: 'muted' }, 'Loading members…'));
  await Promise.all([list.load(false), drawKeyForm(formPane, { gql, view, org, workspace, onCreated })]);
}
