// Agent keys of the workspace's organization: the list (never a secret), a form that creates a key
// for a member with chosen permissions (the secret shown once), and revocation.
/* global navigator */
import { announce, badge, busy, field, fill, h, isoFromLocal, message, nextId, time } from './dom.js';

const KEY_FIELDS =
  'id name permissions expiresAt revokedAt lastUsedAt createdAt workspaceId member { id email role } workspace { id name }';
const KEYS = `query ConsoleAgentKeys($org: ID!, $first: Int, $after: String, $revoked: Boolean) {
  agentKeys(organizationId: $org, first: $first, after: $after, revoked: $revoked) {
    totalCount pageInfo { hasNextPage endCursor } edges { node { ${KEY_FIELDS} } }
  }
}`;
const CHOICES = `query ConsoleKeyChoices($org: ID!) {
  members(organizationId: $org, first: 100) { totalCount edges { node { id email role } } }
  workspaces(organizationId: $org, first: 100) { edges { node { id name } } }
}`;
const CREATE = `mutation ConsoleCreateKey($input: CreateAgentKeyInput!) { createAgentKey(input: $input) { key agentKey { ${KEY_FIELDS} } } }`;
const REVOKE = `mutation ConsoleRevokeKey($id: ID!) { revokeAgentKey(id: $id) { ${KEY_FIELDS} } }`;

const PAGE_SIZE = 25;
const READ_ONLY = (p) => p.endsWith('.read');

export async function keysScreen(ctx) {
  const { view, main, workspace, gql, permissions } = ctx;
  const org = workspace.organizationId;
  let keys = [];
  let page = { hasNextPage: false, endCursor: null };
  let total = 0;

  const show = h(
    'select',
    { id: 'keys-show' },
    h('option', { value: 'all' }, 'All keys'),
    h('option', { value: 'active' }, 'Unrevoked'),
    h('option', { value: 'revoked' }, 'Revoked'),
  );
  const count = h('span', { class: 'count' });
  const tbody = h('tbody');
  const more = h('div', { class: 'more' });
  const listErrors = h('div');
  const secretBox = h('div', { class: 'secret-slot' });
  const formPane = h('section', { class: 'card create-pane', 'aria-labelledby': 'create-title' });

  const status = (k) => {
    if (k.revokedAt) return [badge('revoked'), ' ', time(k.revokedAt)];
    if (k.expiresAt && new Date(k.expiresAt) <= new Date()) return [badge('expired'), ' ', time(k.expiresAt)];
    return [badge('active'), k.expiresAt ? [' until ', time(k.expiresAt)] : null];
  };

  const row = (k) => {
    const actionCell = h('td', { class: 'cell-action' });
    const tr = h(
      'tr',
      { 'data-key': k.id },
      h('th', { scope: 'row' }, h('span', { class: 'key-name' }, k.name), h('code', { class: 'id', title: k.id }, `${k.id.slice(0, 8)}…`)),
      h('td', {}, h('span', { class: 'nowrap' }, k.member.email), h('span', { class: 'pick-meta' }, k.member.role)),
      h('td', {}, k.workspace ? k.workspace.name : h('span', { class: 'muted' }, 'Organization-wide')),
      h(
        'td',
        { class: 'perms' },
        h(
          'ul',
          { class: 'chips', 'aria-label': `${k.permissions.length} permissions` },
          k.permissions.map((p) => h('li', {}, p)),
        ),
      ),
      h('td', {}, time(k.createdAt, { dateOnly: true })),
      h('td', {}, time(k.lastUsedAt)),
      h('td', { class: 'cell-status' }, status(k)),
      actionCell,
    );
    drawRevoke(k, actionCell);
    return tr;
  };

  function drawRevoke(k, cell) {
    if (k.revokedAt) return fill(cell);
    const start = h(
      'button',
      { type: 'button', class: 'danger button-small', 'aria-label': `Revoke ${k.name}`, on: { click: () => confirm() } },
      'Revoke',
    );
    fill(cell, start);
    const confirm = () => {
      const errors = h('div');
      const yes = h(
        'button',
        { type: 'button', class: 'danger button-small', on: { click: () => void revoke(yes) } },
        `Revoke ${k.name} now`,
      );
      const no = h(
        'button',
        {
          type: 'button',
          class: 'button-quiet button-small',
          on: {
            click: () => {
              drawRevoke(k, cell);
              cell.querySelector('button')?.focus();
            },
          },
        },
        'Cancel',
      );
      fill(cell, h('p', { class: 'confirm' }, 'Agents using it are refused at once.'), h('div', { class: 'inline-row' }, yes, no), errors);
      yes.focus();
      const revoke = async () => {
        fill(errors);
        await busy(cell, async () => {
          try {
            const revoked = (await gql(REVOKE, { id: k.id })).revokeAgentKey;
            if (!view.alive) return;
            keys = keys.map((x) => (x.id === k.id ? revoked : x));
            const tr = row(revoked);
            cell.closest('tr').replaceWith(tr);
            const statusCell = tr.querySelector('.cell-status');
            statusCell.setAttribute('tabindex', '-1');
            statusCell.focus();
            announce(`Key ${k.name} revoked.`);
          } catch (error) {
            if (view.alive) fill(errors, message('error', error.message));
          }
        });
      };
    };
  }

  const drawKeys = () => {
    fill(count, `${keys.length} of ${total}`);
    fill(tbody, keys.length ? keys.map(row) : h('tr', {}, h('td', { colspan: '8', class: 'empty' }, 'No keys.')));
    fill(
      more,
      page.hasNextPage ? h('button', { type: 'button', class: 'button-quiet', on: { click: () => load(true) } }, 'Load more keys') : null,
    );
  };

  async function load(append = false) {
    try {
      const revoked = show.value === 'all' ? null : show.value === 'revoked';
      const data = await gql(KEYS, { org, first: PAGE_SIZE, after: append ? page.endCursor : null, revoked });
      if (!view.alive) return;
      const nodes = data.agentKeys.edges.map((e) => e.node);
      keys = append ? [...keys, ...nodes] : nodes;
      page = data.agentKeys.pageInfo;
      total = data.agentKeys.totalCount;
      fill(listErrors);
      drawKeys();
    } catch (error) {
      if (view.alive) fill(listErrors, message('error', error.message));
    }
  }

  async function drawForm() {
    let choices;
    try {
      choices = await gql(CHOICES, { org });
    } catch (error) {
      if (view.alive) fill(formPane, h('h2', { id: 'create-title' }, 'Create a key'), message('error', error.message));
      return;
    }
    if (!view.alive) return;
    const members = choices.members.edges.map((e) => e.node);
    const workspaces = choices.workspaces.edges.map((e) => e.node);
    const name = h('input', { name: 'name', required: true, maxlength: '200', autocomplete: 'off' });
    const member = h(
      'select',
      { name: 'member', required: true },
      members.length ? null : h('option', { value: '' }, 'No members: create one first'),
      members.map((m) => h('option', { value: m.id }, `${m.email} (${m.role})`)),
    );
    const bound = h(
      'select',
      { name: 'workspace' },
      h('option', { value: '' }, 'Organization-wide (every workspace)'),
      workspaces.map((ws) => h('option', { value: ws.id, selected: ws.id === workspace.id }, ws.name)),
    );
    const expires = h('input', { type: 'datetime-local', name: 'expires' });
    const boxes = permissions.map((p) => {
      const box = h('input', { type: 'checkbox', name: 'permissions', value: p, id: nextId('perm') });
      return { p, box, el: h('li', { class: 'check' }, box, h('label', { for: box.id }, p)) };
    });
    const setBoxes = (test) => {
      for (const { p, box } of boxes) box.checked = test(p);
    };
    const errors = h('div');
    const form = h(
      'form',
      { class: 'create-form', novalidate: true },
      field('Name', name),
      field('Member', member, 'The key acts as this member: their role caps its permissions.'),
      field('Workspace', bound),
      h(
        'fieldset',
        { class: 'perm-set' },
        h('legend', {}, 'Permissions'),
        h(
          'div',
          { class: 'perm-tools' },
          h('button', { type: 'button', class: 'button-quiet button-small', on: { click: () => setBoxes(READ_ONLY) } }, 'Read only'),
          h('button', { type: 'button', class: 'button-quiet button-small', on: { click: () => setBoxes(() => true) } }, 'All'),
          h('button', { type: 'button', class: 'button-quiet button-small', on: { click: () => setBoxes(() => false) } }, 'None'),
        ),
        h(
          'ul',
          { class: 'perm-grid' },
          boxes.map((b) => b.el),
        ),
      ),
      field('Expires (optional)', expires),
      errors,
      h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, 'Create key')),
    );
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
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
      await busy(form, async () => {
        let created;
        try {
          created = (
            await gql(CREATE, {
              input: {
                memberId: member.value,
                name: name.value.trim(),
                permissions: chosen,
                workspaceId: bound.value || null,
                expiresAt: isoFromLocal(expires.value),
              },
            })
          ).createAgentKey;
        } catch (error) {
          if (view.alive) fill(errors, message('error', error.message));
          return;
        }
        if (!view.alive) return;
        form.reset();
        showSecret(created);
        keys = [created.agentKey, ...keys.filter((k) => k.id !== created.agentKey.id)];
        total++;
        drawKeys();
      });
    });
    fill(formPane, h('h2', { id: 'create-title' }, 'Create a key'), form);
  }

  /** The new key's secret, shown this once: the service keeps only its digest. */
  function showSecret(created) {
    const input = h('input', {
      readonly: true,
      id: 'new-secret',
      class: 'secret',
      value: created.key,
      spellcheck: 'false',
      autocomplete: 'off',
    });
    const copied = h('span', { class: 'muted', role: 'status' });
    const box = h(
      'div',
      { class: 'secret-box', role: 'region', 'aria-labelledby': 'secret-title' },
      h('h2', { id: 'secret-title' }, `New key “${created.agentKey.name}”`),
      h('p', {}, h('strong', {}, 'Copy it now: it is shown only this once.'), ' The service stores only a digest of it.'),
      h('label', { for: 'new-secret' }, 'Secret'),
      h(
        'div',
        { class: 'inline-row' },
        input,
        h(
          'button',
          {
            type: 'button',
            on: {
              click: async () => {
                input.select();
                try {
                  await navigator.clipboard.writeText(created.key);
                  copied.textContent = 'Copied.';
                } catch {
                  copied.textContent = 'Selected: copy it with Ctrl+C.';
                }
              },
            },
          },
          'Copy',
        ),
        h(
          'button',
          {
            type: 'button',
            class: 'primary',
            on: {
              click: () => {
                fill(secretBox);
                announce('The secret is no longer shown.');
                formPane.querySelector('input')?.focus();
              },
            },
          },
          'Done, hide it',
        ),
      ),
      copied,
    );
    fill(secretBox, box);
    input.focus();
    announce(`Key ${created.agentKey.name} created. Copy its secret now: it is shown only once.`);
  }

  show.addEventListener('change', () => void load(false));

  fill(
    main,
    h('h1', { tabindex: '-1' }, 'Agent keys'),
    h('p', { class: 'lead' }, `Keys of ${workspace.organizationName}. Secrets are never shown again after creation.`),
    secretBox,
    h(
      'div',
      { class: 'columns columns-keys' },
      h(
        'section',
        { class: 'card', 'aria-labelledby': 'keys-title' },
        h(
          'div',
          { class: 'pane-head' },
          h('h2', { id: 'keys-title' }, 'Keys ', count),
          h('div', { class: 'pane-tools' }, h('label', { for: 'keys-show' }, 'Show'), show),
        ),
        listErrors,
        h(
          'div',
          { class: 'table-wrap' },
          h(
            'table',
            { class: 'data keys' },
            h(
              'thead',
              {},
              h(
                'tr',
                {},
                ['Name', 'Member', 'Workspace', 'Permissions', 'Created', 'Last used', 'Status', ''].map((t) =>
                  h('th', { scope: 'col' }, t || h('span', { class: 'sr-only' }, 'Actions')),
                ),
              ),
            ),
            tbody,
          ),
        ),
        more,
      ),
      formPane,
    ),
  );
  fill(formPane, h('h2', { id: 'create-title' }, 'Create a key'), h('p', { class: 'muted' }, 'Loading members…'));
  await Promise.all([load(false), drawForm()]);
}
