// The review of one proposal: approve it (then the article as it reads now), or reject it with a
// reason the proposer sees.
import { announce, busy, fill, h, message, time } from './dom.js';
import { APPROVE, ARTICLE, REJECT } from './proposalQueries.js';

/**
 * Draws the approve and reject forms of proposal `p` in `actions` (and clears `notice`). `reviewedHere`
 * gets the id while the review is sent (its live event is then ours, not news); `onReviewed(id)` hears a
 * review done.
 */
export function drawReview(p, { actions, notice }, { gql, view, w, reviewedHere, onReviewed }) {
  const r = { p, actions, gql, view, w, reviewedHere, onReviewed };
  r.errors = h('div');
  r.result = h('div', { class: 'review-result', tabindex: '-1' });
  const approve = h('form', { class: 'approve-form' }, h('button', { type: 'submit', class: 'primary' }, 'Approve'));
  const reason = h('input', { id: `reason-${p.id}`, name: 'reason', required: true, maxlength: '1000', autocomplete: 'off' });
  const reject = h(
    'form',
    { class: 'reject-form', novalidate: true },
    h('label', { for: reason.id }, 'Reason for rejecting'),
    h('div', { class: 'inline-row' }, reason, h('button', { type: 'submit', class: 'danger' }, 'Reject')),
  );
  fill(actions, h('h3', { class: 'sr-only' }, 'Review'), r.errors, h('div', { class: 'review-forms' }, approve, reject), r.result);
  approve.addEventListener('submit', (event) => {
    event.preventDefault();
    void approveProposal(r);
  });
  reject.addEventListener('submit', (event) => {
    event.preventDefault();
    void rejectProposal(r, reason);
  });
  fill(notice);
}

async function approveProposal(r) {
  fill(r.errors);
  await busy(r.actions, async () => {
    const data = await send(r, APPROVE, {});
    if (!data || !r.view.alive) return;
    done(r, 'approved');
    fill(r.result, message('success', `Approved proposal #${r.p.id}.`), h('p', { class: 'muted' }, 'Reading the article as it is now…'));
    r.result.focus();
    await showArticleNow(r, data.approveProposal.articleSlug);
  });
}

async function rejectProposal(r, reason) {
  fill(r.errors);
  const text = reason.value.trim();
  if (!text) {
    fill(r.errors, message('error', 'Give a reason: the proposer sees it.'));
    reason.focus();
    return;
  }
  await busy(r.actions, async () => {
    const data = await send(r, REJECT, { reason: text });
    if (!data || !r.view.alive) return;
    done(r, 'rejected');
    const said = h('q', {}, data.rejectProposal.reason);
    fill(r.result, message('success', `Rejected proposal #${r.p.id}. The proposer sees the reason: `, said));
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
    if (r.view.alive) fill(r.errors, message('error', error.message));
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
