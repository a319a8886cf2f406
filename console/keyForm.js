// The agent-keys screen's "Create a key" form: a name, the member the key acts as, its workspace (or
// the whole organization), its permissions and an optional expiry.
import { busy, field, fill, h, isoFromLocal, message, nextId } from './dom.js';
import { CHOICES, CREATE } from './keyQueries.js';
import { PERMISSIONS } from './pageNames.js';

const READ_ONLY = (p) => p.endsWith('.read');

const title = () => h('h2', { id: 'create-title' }, 'Create a key');

/**
 * Draws the form in `pane` once the organization's members and workspaces are read (the chosen
 * `workspace` preselected); `onCreated({ key, agentKey })` hears a key created, its secret with it.
 */
export async function drawKeyForm(pane, { gql, view, org, workspace, onCreated }) {
  let choices;
  try {
    choices = await gql(CHOICES, { org });
  } catch (error) {
    if (view.alive) fill(pane, title(), message('error', error.message));
    return;
  }
  if (!view.alive) return;
  const controls = keyControls(choices, workspace);
  const errors = h('div');
  const form = h(
    'form',
    { class: 'create-form', novalidate: true },
    field('Name', controls.name),
    field('Member', controls.member, 'The key acts as this member: their role caps its permissions.'),
    field('Workspace', controls.bound),
    permissionSet(controls.boxes),
    field('Expires (optional)', controls.expires),
    errors,
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, 'Create key')),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void createKey(form, controls, errors, { gql, view, onCreated });
  });
  fill(pane, title(), form);
}

/** The form's controls: one checkbox per permission the service knows. */
function keyControls(choices, workspace) {
  const members = choices.members.edges.map((e) => e.node);
  const workspaces = choices.workspaces.edges.map((e) => e.node);
  const boxes = PERMISSIONS.map((p) => {
    const box = h('input', { type: 'checkbox', name: 'permissions', value: p, id: nextId('perm') });
    return { p, box, el: h('li', { class: 'check' }, box, h('label', { for: box.id }, p)) };
  });
  return {
    name: h('input', { name: 'name', required: true, maxlength: '200', autocomplete: 'off' }),
    member: h(
      'select',
      { name: 'member', required: true },
      members.length ? null : h('option', { value: '' }, 'No members: create one first'),
      members.map((m) => h('option', { value: m.id }, `${m.email} (${m.role})`)),
    ),
    bound: h(
      'select',
      { name: 'workspace' },
      h('option', { value: '' }, 'Organization-wide (every workspace)'),
      workspaces.map((ws) => h('option', { value: ws.id, selected: ws.id === workspace.id }, ws.name)),
    ),
    expires: h('input', { type: 'datetime-local', name: 'expires' }),
    boxes,
  };
}

/** The permissions' checkboxes, with buttons that tick the read ones, all, or none. */
function permissionSet(boxes) {
  const tick = (label, test) => {
    const click = () => {
      for (const { p, box } of boxes) box.checked = test(p);
    };
    return h('button', { type: 'button', class: 'button-quiet button-small', on: { click } }, label);
  };
  return h(
    'fieldset',
    { class: 'perm-set' },
    h('legend', {}, 'Permissions'),
    h(
      'div',
      { class: 'perm-tools' },
      tick('Read only', READ_ONLY),
      tick('All', () => true),
      tick('None', () => false),
    ),
    h(
      'ul',
      { class: 'perm-grid' },
      boxes.map((b) => b.el),
    ),
  );
}

async function createKey(form, { name, member, bound, expires, boxes }, errors, { gql, view, onCreated }) {
  fill(errors);
  const chosen = boxes.filter((b) => b.box.checked).map((b) => b.p);
  const problems = [];
  if (!name.value.trim()) problems.push('a name');
  if (!member.value) problems.push('a member');
  if (!chosen.length) problems.push('at least one permission');
  if (problems.length) {
    fill(errors, message('error', `Give ${problems.join(', ')}.`));
    (!name.value.trim() ? name : !member.value ? member : boxes[0].box).focus();
    return;
  }
  const input = {
    memberId: member.value,
    name: name.value.trim(),
    permissions: chosen,
    workspaceId: bound.value || null,
    expiresAt: isoFromLocal(expires.value),
  };
  await busy(form, async () => {
    let created;
    try {
      created = (await gql(CREATE, { input })).createAgentKey;
    } catch (error) {
      if (view.alive) fill(errors, message('error', error.message));
      return;
    }
    if (!view.alive) return;
    form.reset();
    onCreated(created);
  });
}
