// The sign-in page's script: a sign-in link carries its token in the fragment (#link=…), which the
// browser never sends to a server, so it reaches no URL of a request and no log line. The token is
// taken out of the address bar at once and posted (JSON, same origin) to redeem it. A link pasted into
// the page's field is redeemed the same way, and this page keeps its way back (return_to). A browser already
// signed in as someone else is asked first (the service answers 409 until the person chooses to switch):
// any page could send a signed-in person to its author's own link.
/* global document, fetch, history, location, window */

const notice = document.getElementById('notice');

function show(text) {
  const box = document.createElement('div');
  box.className = 'message message-error';
  box.textContent = text;
  notice.replaceChildren(box);
}

function button(text, className, onClick) {
  const b = document.createElement('button');
  b.type = 'button';
  b.className = className;
  b.textContent = text;
  b.addEventListener('click', onClick);
  return b;
}

/** Asks a person signed in as `signedInAs` whether to switch to `linkFor`; nothing changes until they choose. */
function askToSwitch(token, returnTo, { signedInAs, linkFor }) {
  const box = document.createElement('div');
  box.className = 'message message-warning';
  box.id = 'switch';
  const question = document.createElement('p');
  question.textContent = `You are signed in as ${signedInAs}. This link signs you in as ${linkFor} instead.`;
  const stay = button(`Stay signed in as ${signedInAs}`, 'button-quiet', () => location.replace(returnTo));
  const change = button(`Sign in as ${linkFor}`, 'button-link', () => void redeem(token, true));
  box.append(question, stay, ' ', change);
  notice.replaceChildren(box);
  stay.focus();
}

async function redeem(token, confirmed = false) {
  const returnTo = document.body.dataset.returnTo || '/console';
  let res;
  try {
    res = await fetch('/console/sign-in/link', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(confirmed ? { token, returnTo, switch: true } : { token, returnTo }),
      credentials: 'same-origin',
      cache: 'no-store',
    });
  } catch {
    show('The service cannot be reached. Check the connection and open the link again.');
    return;
  }
  const body = await res.json().catch(() => null);
  if (res.status === 409 && body?.error?.details?.linkFor) {
    askToSwitch(token, returnTo, body.error.details);
    return;
  }
  if (!res.ok) {
    show(body?.error?.message ?? `The sign-in failed (HTTP ${res.status}).`);
    return;
  }
  location.replace(body.returnTo);
}

/** Redeems the link in the fragment, if there is one (on load, and when a link is opened in this very page). */
function fromFragment() {
  const match = /^#link=([\w-]+)$/.exec(location.hash);
  if (!match) return;
  // Out of the address bar (and the history) before anything else happens.
  history.replaceState(null, '', location.pathname + location.search);
  void redeem(match[1]);
}

/** The token of a pasted sign-in link (the whole link, or its token alone), or null. */
function tokenOfLink(text) {
  const match = /(?:#link=|^)(wks_link_[\w-]+)$/.exec(text.trim());
  return match ? match[1] : null;
}

/** The field where a link is pasted: Enter (or the button) redeems it here, keeping this page's way back. */
function pastedLinks() {
  const form = document.getElementById('link-form');
  const input = document.getElementById('link-input');
  if (!form || !input) return;
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const token = tokenOfLink(input.value);
    if (!token) {
      show('That is not a sign-in link. It looks like …/console/sign-in#link=wks_link_… (from wks members login-link).');
      input.focus();
      return;
    }
    input.value = '';
    void redeem(token);
  });
}

window.addEventListener('hashchange', fromFragment);
pastedLinks();
fromFragment();
