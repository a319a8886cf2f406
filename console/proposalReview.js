// The review of one proposal: approve it (merged into the article now, or with the reviewer's own text
// where lines were changed two ways), reject it with a reason, or return it to its proposer with a
// comment. Every answer is shown; after an approval, the article as it reads now.
import { announce, busy, field, fill, h, message, time } from './dom.js';
import { APPROVE, ARTICLE, REJECT, RETURN } from './proposalQueries.js';

/** The lines that mark a conflict in the merge preview's text: a resolution keeps none of them. */
const MARKERS = ['<<<<<<< proposal', '=======', '>>>>>>> current'];

/**
 * Draws the review forms of proposal `p` in `actions` (and clears `notice`). `merge` is the edit's merge
 * preview (null for a new draft): with conflicts, approving takes the reviewer's text. `reviewedHere`
 * gets the id while the review is sent (its live event is then ours, not news); `onReviewed(id)` hears
 * a review done; `onConflict(text)` hears an approval refused because the article changed meanwhile.
 */
export function drawReview(p, { actions, notice }, { gql, view, w, reviewedHere, onReviewed, onConflict, merge = null }) {
  const r = { p, actions, gql, view, w, reviewedHere, onReviewed, onConflict };
  r.errors = h('div');
  r.result = h('div', { class: 'review-result', tabindex: '-1' });
  const approve = merge && !merge.clean ? resolveForm(r, merge) : approveForm(r);
  fill(
    actions,
    h('h3', { class: 'sr-only' }, 'Review'),
    r.errors,
    h('div', { class: 'review-forms' }, approve, rejectForm(r), returnForm(r)),
    r.result,
  );
  fill(notice);
}

function approveForm(r) {
  const form = h('form', { class: 'approve-form' }, h('button', { type: 'submit', class: 'primary' }, 'Approve'));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void approveProposal(r, null);
  });
  return form;
}

/** Approving a conflicting edit: the merged title and text, each conflict between its markers, to edit and approve. */
function resolveForm(r, merge) {
  const title = h('input', { id: `resolve-title-${r.p.id}`, name: 'title', required: true, maxlength: '200', value: merge.title });
  const markdown = h('textarea', { id: `resolve-markdown-${r.p.id}`, name: 'markdown', rows: '14', spellcheck: 'true' });
  markdown.value = merge.markdown;
  const form = h(
    'form',
    { class: 'resolve-form', novalidate: true },
    h('h4', {}, 'Resolve and approve'),
    h(
      'p',
      { class: 'muted' },
      'Keep what each conflict should say and delete its marker lines (',
      h('code', {}, MARKERS[0]),
      ', ',
      h('code', {}, MARKERS[1]),
      ', ',
      h('code', {}, MARKERS[2]),
      '). This text replaces the article’s.',
    ),
    field('Title', title),
    field('Merged Markdown', markdown),
    h('button', { type: 'submit', class: 'primary' }, 'Approve with this text'),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const left = markdown.value.split('\n').filter((line) => MARKERS.includes(line)).length;
    if (left) {
      fill(
        r.errors,
        message('error', `The text still holds ${left} conflict marker line${left === 1 ? '' : 's'}: resolve every conflict first.`),
      );
      markdown.focus();
      return;
    }
    if (!title.value.trim()) {
      fill(r.errors, message('error', 'Give a title.'));
      title.focus();
      return;
    }
    void approveProposal(r, { title: title.value.trim(), markdown: markdown.value });
  });
  return form;
}

/** A one-line form: a labelled text the proposer reads, and its button. */
function textForm(r, { name, formClass, label, button, kind, onText }) {
  const input = h('input', { id: `${name}-${r.p.id}`, name, required: true, maxlength: '1000', autocomplete: 'off' });
  const form = h(
    'form',
    { class: formClass, novalidate: true },
    h('label', { for: input.id }, label),
    h('div', { class: 'inline-row' }, input, h('button', { type: 'submit', class: kind }, button)),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    fill(r.errors);
    const text = input.value.trim();
    if (!text) {
      fill(r.errors, message('error', `${label}: the proposer reads it, so it cannot be empty.`));
      input.focus();
      return;
    }
    void onText(text);
  });
  return form;
}

function rejectForm(r) {
  return textForm(r, {
    name: 'reason',
    formClass: 'reject-form',
    label: 'Reason for rejecting',
    button: 'Reject',
    kind: 'danger',
    onText: (text) => review(r, 'reject', text),
  });
}

function returnForm(r) {
  return textForm(r, {
    name: 'comment',
    formClass: 'comment-form',
    label: 'Comment for the proposer (returns it to them to propose again)',
    button: 'Return',
    kind: 'button-quiet',
    onText: (text) => review(r, 'return', text),
  });
}

async function approveProposal(r, resolution) {
  fill(r.errors);
  await busy(r.actions, async () => {
    const data = await send(r, APPROVE, { resolution });
    if (!data || !r.view.alive) return;
    done(r, 'approved');
    fill(r.result, message('success', `Approved proposal #${r.p.id}.`), h('p', { class: 'muted' }, 'Reading the article as it is now…'));
    r.result.focus();
    await showArticleNow(r, data.approveProposal.articleSlug);
  });
}

/** Rejects (`reject`) or returns (`return`) the proposal with `text` for its proposer. */
async function review(r, how, text) {
  await busy(r.actions, async () => {
    const data = how === 'reject' ? await send(r, REJECT, { reason: text }) : await send(r, RETURN, { comment: text });
    if (!data || !r.view.alive) return;
    const said = h('q', {}, (data.rejectProposal ?? data.returnProposal).reason);
    done(r, how === 'reject' ? 'rejected' : 'returned');
    fill(
      r.result,
      how === 'reject'
        ? message('success', `Rejected proposal #${r.p.id}. The proposer sees the reason: `, said)
        : message(
            'success',
            `Returned proposal #${r.p.id} to its proposer with your comment: `,
            said,
            '. They read it with their proposals (status returned) over REST and MCP, and propose again.',
          ),
    );
    r.result.focus();
  });
}

/** Sends a review; null (its error shown) when the service refused it. */
async function send(r, mutation, variables) {
  r.reviewedHere.add(r.p.id);
  try {
    return await r.gql(mutation, { w: r.w, id: r.p.id, ...variables });
  } catch (error) {
    r.reviewedHere.delete(r.p.id);
    if (!r.view.alive) return null;
    // The article changed two ways since the preview was drawn: the pane reads the merge again.
    if (error.code === 'conflict' && r.onConflict) r.onConflict(error.message);
    else fill(r.errors, message('error', error.message));
    return null;
  }
}

/** The review went through: the list drops the proposal, and only the result stays in the pane. */
function done(r, verb) {
  r.onReviewed(r.p.id);
  announce(`Proposal #${r.p.id} ${verb}.`);
  fill(r.actions, r.result);
}

async function showArticleNow(r, slug) {
  try {
    const { article } = await r.gql(ARTICLE, { w: r.w, slug });
    if (!r.view.alive) return;
    fill(
      r.result,
      message('success', `Approved proposal #${r.p.id}: `, h('code', {}, article.slug), ` is now at version ${article.version}.`),
      articleNow(article),
    );
  } catch (error) {
    if (!r.view.alive) return;
    fill(
      r.result,
      message('success', `Approved proposal #${r.p.id}.`),
      message('error', `The article could not be read: ${error.message}`),
    );
  }
}

/** The article as it reads now (after an approval). */
function articleNow(article) {
  return h(
    'section',
    { class: 'article-now', 'aria-label': 'The article now' },
    h('h3', {}, article.title),
    h(
      'p',
      { class: 'pick-meta' },
      `version ${article.version} · ${article.status} · section `,
      h('code', {}, article.section),
      ' · updated ',
      time(article.updatedAt),
    ),
    h('pre', { class: 'markdown' }, article.markdown),
  );
}
