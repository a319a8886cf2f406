// A row's revoke button and the inline confirmation it opens, for anything the console revokes
// (agent keys, OAuth grants): Revoke → "Revoke <name> now" / Cancel, with what revoking does.
import { busy, fill, h, message } from './dom.js';

/**
 * Draws the revoke control in `cell`: `name` labels it, `consequence` says what revoking does,
 * `send()` revokes and resolves with the revoked item, which `onRevoked(item, cell)` hears.
 */
export function drawRevoke(cell, options) {
  const { name, consequence } = options;
  const start = h(
    'button',
    { type: 'button', class: 'danger button-small', 'aria-label': `Revoke ${name}`, on: { click: () => confirm() } },
    'Revoke',
  );
  fill(cell, start);
  const confirm = () => {
    const errors = h('div');
    const revoke = () => void sendRevoke(cell, errors, options);
    const yes = h('button', { type: 'button', class: 'danger button-small', on: { click: revoke } }, `Revoke ${name} now`);
    const cancel = () => {
      drawRevoke(cell, options);
      cell.querySelector('button')?.focus();
    };
    const no = h('button', { type: 'button', class: 'button-quiet button-small', on: { click: cancel } }, 'Cancel');
    fill(cell, h('p', { class: 'confirm' }, consequence), h('div', { class: 'inline-row' }, yes, no), errors);
    yes.focus();
  };
}

async function sendRevoke(cell, errors, { send, view, onRevoked }) {
  fill(errors);
  await busy(cell, async () => {
    try {
      const revoked = await send();
      if (view.alive) onRevoked(revoked, cell);
    } catch (error) {
      if (view.alive) fill(errors, message('error', error.message));
    }
  });
}
