// The header's "Live" / "Offline" indicator: the state of the subscriptions' socket, as a button that
// reconnects at once.
/* global setInterval, clearInterval */
import { h } from './dom.js';

const TEXT = {
  live: () => 'Live',
  connecting: () => 'Connecting…',
  offline: (seconds) => (seconds === null ? 'Offline' : `Offline · retry in ${seconds} s`),
  refused: () => 'Offline · refused',
};

let button = null;
let countdown = null;

/** The indicator of `live` (a LiveClient, or null when there is none yet): a new one per header drawn. */
export function liveIndicator(live) {
  button = h('button', { type: 'button', id: 'live', class: 'live', on: { click: () => live?.reconnectNow() } });
  showLiveStatus(live?.status ?? { state: 'offline' });
  return h('span', { class: 'live-wrap', role: 'status', 'aria-live': 'polite' }, button);
}

/** Shows a status the LiveClient reported; while offline, counts down to the next attempt. */
export function showLiveStatus(status) {
  clearInterval(countdown);
  if (!button) return;
  const shown = button;
  const draw = () => {
    const seconds = status.retryAt ? Math.max(0, Math.ceil((status.retryAt - Date.now()) / 1000)) : null;
    const text = TEXT[status.state](seconds);
    shown.textContent = text;
    shown.dataset.state = status.state;
    shown.title =
      status.state === 'live'
        ? 'Live updates are on: new events appear as they happen.'
        : `Live updates are off${status.reason ? ` (${status.reason})` : ''}. Press to reconnect now.`;
    shown.setAttribute('aria-label', `Live updates: ${text}${status.state === 'live' ? '' : '. Press to reconnect now'}`);
  };
  draw();
  if (status.state === 'offline' && status.retryAt) countdown = setInterval(draw, 1000);
}
