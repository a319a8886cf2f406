// A key row's revoke button, and the inline confirmation it opens (a revoked key is refused at once).
import { busy, fill, h, message } from './dom.js';
import { REVOKE } from './keyQueries.js';

/** Draws the revoke control of key `k` in `cell` (nothing once revoked); `onRevoked(key, cell)` hears it done. */
export function drawRevoke(k, cell, { gql, view, onRevoked }) {
  if (k.revokedAt) return fill(cell);
  const start = h(
    'button',
    { type: 'button', class: 'danger button-small', 'aria-label': `Revoke ${k.name}`, on: { click: () => confirm() } },
    'Revoke',
  );
  fill(cell, start);
  const confirm = () => {
    const errors = h('div');
    const revoke = () => void sendRevoke(k, cell, errors, { gql, view, onRevoked });
    const yes = h('button', { type: 'button', class: 'danger button-small', on: { click: revoke } }, `Revoke ${k.name} now`);
    const cancel = () => {
      drawRevoke(k, cell, { gql, view, onRevoked });
      cell.querySelector('button')?.focus();
    };
    const no = h('button', { type: 'button', class: 'button-quiet button-small', on: { click: cancel } }, 'Cancel');
    fill(cell, h('p', { class: 'confirm' }, 'Agents using it are refused at once.'), h('div', { class: 'inline-row' }, yes, no), errors);
    yes.focus();
  };
}

async function sendRevoke(k, cell, errors, { gql, view, onRevoked }) {
  fill(errors);
  await busy(cell, async () => {
    try {
      const revoked = (await gql(REVOKE, { id: k.id })).revokeAgentKey;
      if (view.alive) onRevoked(revoked, cell);
    } catch (error) {
      if (view.alive) fill(errors, message('error', error.message));
    }
  });
}
