// The guidance screen: how this workspace's administrators ask agents to use it (Markdown, at most
// 4 KiB), which MCP hands every agent in its instructions. Admins and owners edit it; others read it.
/* global TextEncoder */
import { announce, busy, field, fill, h, message, time } from './dom.js';

const GET = `query ConsoleGuidance($w: String!) { workspaceGuidance(workspace: $w) { markdown updatedAt } }`;
const SET = `mutation ConsoleSetGuidance($w: String!, $markdown: String!) {
  setWorkspaceGuidance(workspace: $w, input: { markdown: $markdown }) { markdown updatedAt }
}`;
/** The service's bound (RULES.guidance): UTF-8 bytes. */
const MAX_BYTES = 4096;

const bytes = (text) => new TextEncoder().encode(text).length;

/** The "Guidance for agents" screen. */
export async function guidanceScreen(ctx) {
  const { view, main, workspace, gql, session } = ctx;
  const editable = session.may('guidance.update');
  const status = h('div');
  const updated = h('p', { class: 'muted' });
  const counter = h('p', { class: 'hint', id: 'guidance-count', 'aria-live': 'polite' });
  const text = h('textarea', {
    name: 'markdown',
    rows: '14',
    spellcheck: 'true',
    readonly: !editable,
    'aria-describedby': 'guidance-count',
  });
  const count = () => {
    const n = bytes(text.value);
    counter.textContent = `${n.toLocaleString()} of ${MAX_BYTES.toLocaleString()} bytes`;
    counter.classList.toggle('over', n > MAX_BYTES);
    return n;
  };
  const show = (g) => {
    text.value = g.markdown;
    const none = editable
      ? 'No guidance yet. Start with a few lines for agents (where runbooks go, how notes are named, what to leave alone), then save.'
      : 'No guidance yet: admins and owners write it.';
    fill(updated, g.updatedAt ? ['Last changed ', time(g.updatedAt)] : none);
    count();
  };
  const form = h(
    'form',
    {
      class: 'card guidance',
      on: {
        submit: (event) => {
          event.preventDefault();
          if (count() > MAX_BYTES) return fill(status, message('error', `The guidance may be at most ${MAX_BYTES} bytes.`));
          void busy(form, async () => {
            try {
              const saved = (await gql(SET, { w: workspace.id, markdown: text.value })).setWorkspaceGuidance;
              if (!view.alive) return;
              show(saved);
              fill(status, message('success', 'Saved. Agents get it in their next MCP session and in /llms.txt.'));
              announce('Guidance saved.');
            } catch (error) {
              if (view.alive) fill(status, message('error', error.message));
            }
          });
        },
      },
    },
    field('Guidance (Markdown)', text),
    counter,
    editable
      ? h('button', { type: 'submit', class: 'primary' }, 'Save guidance')
      : h('p', { class: 'muted' }, 'Admins and owners can edit it.'),
  );
  text.addEventListener('input', count);
  fill(
    main,
    h('h1', { tabindex: '-1' }, 'Guidance for agents'),
    h(
      'p',
      { class: 'lead' },
      "How agents should use this workspace. MCP hands it to every agent after the server's own first paragraph; /llms.txt shows it to a key.",
    ),
    status,
    updated,
    form,
  );
  try {
    show((await gql(GET, { w: workspace.id })).workspaceGuidance);
  } catch (error) {
    if (view.alive) fill(status, message('error', error.message));
  }
}
