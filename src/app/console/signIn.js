// The sign-in screen: the admin token, tried with one query before it is kept for the tab.
import { busy, fill, h, message } from './dom.js';

const CHECK = 'query ConsoleSignIn { organizations(first: 1) { totalCount } }';

let notice = null;

/** The sentence the next sign-in screen shows (why the tab was signed out), or null for none. */
export function setSignInNotice(text) {
  notice = text;
}

/** The sign-in screen; `ctx.signedIn(token)` takes over once the service accepted the token. */
export function signInScreen(ctx) {
  const { input, errorBox, form } = tokenForm();
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const token = input.value.trim();
    fill(errorBox);
    if (!token) {
      fill(errorBox, message('error', 'Enter the admin token.'));
      input.focus();
      return;
    }
    await busy(form, async () => {
      try {
        await ctx.gql(CHECK, {}, { token });
      } catch (error) {
        if (!ctx.view.alive) return;
        fill(errorBox, message('error', error.message));
        input.focus();
        input.select();
        return;
      }
      notice = null;
      ctx.signedIn(token);
    });
  });
  fill(
    ctx.main,
    h(
      'section',
      { class: 'signin-wrap', 'aria-labelledby': 'signin-title' },
      h('h1', { id: 'signin-title', tabindex: '-1' }, 'Sign in to the review console'),
      h('p', { class: 'lead' }, 'Review proposals, turn content gaps into drafts, manage agent keys and follow the audit trail.'),
      notice ? message('info', notice) : null,
      form,
    ),
  );
  ctx.view.focusHeading = false;
  input.focus();
}

function tokenForm() {
  const input = h('input', {
    id: 'token',
    name: 'token',
    type: 'password',
    autocomplete: 'off',
    spellcheck: 'false',
    required: true,
    'aria-describedby': 'token-hint',
  });
  const errorBox = h('div', { class: 'form-errors' });
  const form = h(
    'form',
    { class: 'card signin', novalidate: true },
    h('div', { class: 'field' }, h('label', { for: 'token' }, 'Admin token'), input),
    h(
      'p',
      { id: 'token-hint', class: 'hint' },
      'The service’s ADMIN_TOKEN (or the one it printed at its first start). It stays in this tab only and is sent to this service only.',
    ),
    errorBox,
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, 'Sign in')),
  );
  return { input, errorBox, form };
}
