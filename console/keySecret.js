// The secret of a key just created, shown this once (the service keeps only its digest), with Copy
// and "Done, hide it".
/* global navigator */
import { announce, fill, h } from './dom.js';

/** Shows the secret of `created` (`{ key, agentKey }`) in `slot`; `onHidden()` runs once it is hidden for good. */
export function showSecret(slot, created, onHidden) {
  const input = h('input', {
    readonly: true,
    id: 'new-secret',
    class: 'secret',
    value: created.key,
    spellcheck: 'false',
    autocomplete: 'off',
  });
  const copied = h('span', { class: 'muted', role: 'status' });
  const copy = async () => {
    input.select();
    try {
      await navigator.clipboard.writeText(created.key);
      copied.textContent = 'Copied.';
    } catch {
      copied.textContent = 'Selected: copy it with Ctrl+C.';
    }
  };
  const hide = () => {
    fill(slot);
    announce('The secret is no longer shown.');
    onHidden();
  };
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
      h('button', { type: 'button', on: { click: copy } }, 'Copy'),
      h('button', { type: 'button', class: 'primary', on: { click: hide } }, 'Done, hide it'),
    ),
    copied,
  );
  fill(slot, box);
  input.focus();
  announce(`Key ${created.agentKey.name} created. Copy its secret now: it is shown only once.`);
}
