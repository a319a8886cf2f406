// Content gaps: questions the docs did not answer, grouped by similarity, with a form that drafts a
// new-article proposal from a group. The list follows contentGapChanged.
/* global setTimeout, clearTimeout */
import { announce, badge, busy, field, fill, h, keepFocus, keyedList, message, time } from './dom.js';

const GROUPS = `query ConsoleGapGroups($w: ID!, $resolved: Boolean!) {
  contentGapGroups(workspaceId: $w, includeResolved: $resolved) {
    id label reportCount searchCount firstSeen lastSeen nearestArticleSlug resolvedAt state proposalId
  }
}`;
/** The open groups' sample questions (scrubbed of addresses and secrets), newest first. */
const SAMPLES = `query ConsoleGapSamples($w: String!, $cursor: String) {
  contentGaps(workspace: $w, limit: 100, cursor: $cursor) { items { id questionCount sampleQuestions } nextCursor }
}`;
const SECTIONS = `query ConsoleSections($w: String!) { sections(workspace: $w) { key label } }`;
const PROPOSE = `mutation ConsoleProposeFromGap($w: String!, $group: Int!, $input: GapProposalInput!) {
  proposeFromContentGap(workspace: $w, group: $group, input: $input) { id status kind title section gapGroupId }
}`;
const CHANGED = `subscription ConsoleGapChanged($w: String!) { contentGapChanged(workspace: $w) { action group { id state } } }`;

const SUMMARY_MAX = 500;
const TITLE_MAX = 200;

export async function gapsScreen(ctx) {
  const { view, main, workspace, gql } = ctx;
  let groups = [];
  let samples = new Map();
  let sections = null;
  let sectionsError = null;
  let drafting = null; // the group whose form is on show

  const includeResolved = h('input', { type: 'checkbox', id: 'gaps-resolved' });
  const list = h('ol', { class: 'gap-list' });
  const listErrors = h('div');
  const count = h('span', { class: 'count' });
  const panel = h('section', { class: 'card draft-pane', 'aria-labelledby': 'draft-title' });

  const drawList = () =>
    keepFocus(list, () => {
      fill(count, `${groups.length} group${groups.length === 1 ? '' : 's'}`);
      keyedList(list, groups, {
        key: (g) => g.id,
        signature: (g) => JSON.stringify([g, samples.get(g.id)?.sampleQuestions, drafting?.id === g.id]),
        empty: h('li', { class: 'empty' }, includeResolved.checked ? 'No content gaps recorded.' : 'No open content gaps.'),
        render: (g) => {
          const questions = samples.get(g.id)?.sampleQuestions ?? [];
          return h(
            'li',
            { class: ['card', 'gap', drafting?.id === g.id && 'gap-selected'] },
            h('h3', { class: 'gap-label' }, g.label),
            h(
              'p',
              { class: 'gap-meta' },
              badge(g.state),
              ` ${g.reportCount} report${g.reportCount === 1 ? '' : 's'} · ${g.searchCount} search${g.searchCount === 1 ? '' : 'es'} without results · first `,
              time(g.firstSeen),
              ' · last ',
              time(g.lastSeen),
            ),
            g.nearestArticleSlug ? h('p', { class: 'gap-meta' }, 'Closest article: ', h('code', {}, g.nearestArticleSlug)) : null,
            questions.length
              ? h(
                  'div',
                  { class: 'gap-questions' },
                  h('p', { class: 'gap-questions-title' }, 'Questions asked'),
                  h(
                    'ul',
                    {},
                    questions.map((q) => h('li', {}, q)),
                  ),
                )
              : null,
            h('div', { class: 'gap-actions' }, actionFor(g)),
          );
        },
      });
    });

  const actionFor = (g) => {
    if (g.state === 'proposed' && g.proposalId)
      return h(
        'a',
        { href: `#/proposals/${g.proposalId}`, class: 'button-link', 'data-focus': `gap:${g.id}` },
        `Review proposal #${g.proposalId}`,
      );
    if (g.state === 'resolved') return h('span', { class: 'muted' }, 'Resolved ', time(g.resolvedAt));
    return h(
      'button',
      {
        type: 'button',
        class: drafting?.id === g.id ? 'primary' : null,
        'data-focus': `gap:${g.id}`,
        'aria-controls': 'draft-pane',
        on: { click: () => openDraft(g) },
      },
      'Draft a proposal',
    );
  };

  async function load() {
    try {
      const [data, more] = await Promise.all([
        gql(GROUPS, { w: workspace.id, resolved: includeResolved.checked }),
        loadSamples().catch(() => null), // the groups still show without their questions
      ]);
      if (!view.alive) return;
      groups = data.contentGapGroups;
      if (more) samples = more;
      fill(listErrors);
      drawList();
    } catch (error) {
      if (view.alive) fill(listErrors, message('error', error.message));
    }
  }

  async function loadSamples() {
    const found = new Map();
    let cursor = null;
    for (let page = 0; page < 5; page++) {
      const { contentGaps } = await gql(SAMPLES, { w: workspace.id, cursor });
      for (const gap of contentGaps.items) found.set(gap.id, gap);
      cursor = contentGaps.nextCursor;
      if (!cursor) break;
    }
    return found;
  }

  async function loadSections() {
    if (sections) return;
    try {
      sections = (await gql(SECTIONS, { w: workspace.id })).sections;
      sectionsError = null;
    } catch (error) {
      sectionsError = error.message;
    }
  }

  function closeDraft() {
    const was = drafting;
    drafting = null;
    drawPanelEmpty();
    drawList();
    if (was) list.querySelector(`[data-focus="gap:${was.id}"]`)?.focus();
  }

  function drawPanelEmpty(extra = null) {
    fill(
      panel,
      h('h2', { id: 'draft-title' }, 'Draft a proposal'),
      extra,
      h(
        'p',
        { class: 'muted' },
        'Choose “Draft a proposal” on a group to write the article that answers its questions. It goes to review like any proposal.',
      ),
    );
  }

  async function openDraft(g) {
    drafting = g;
    drawList();
    fill(panel, h('h2', { id: 'draft-title', tabindex: '-1' }, 'Draft a proposal'), h('p', { class: 'muted' }, 'Loading the sections…'));
    await loadSections();
    if (!view.alive || drafting !== g) return;
    const questions = samples.get(g.id)?.sampleQuestions ?? [];
    const title = h('input', {
      name: 'title',
      required: true,
      maxlength: String(TITLE_MAX),
      autocomplete: 'off',
      value: g.label.slice(0, TITLE_MAX),
    });
    const section = h(
      'select',
      { name: 'section', required: true },
      (sections ?? []).map((s) => h('option', { value: s.key }, `${s.label} (${s.key})`)),
    );
    const markdown = h('textarea', { name: 'markdown', rows: '9', spellcheck: 'true' });
    markdown.value = `# ${g.label}\n\n${questions.length ? `Answers: ${questions.slice(0, 3).join(' / ')}\n\n` : ''}`;
    const summary = h('input', {
      name: 'summary',
      required: true,
      maxlength: String(SUMMARY_MAX),
      autocomplete: 'off',
      value: `Answers the content gap: ${g.label}`.slice(0, SUMMARY_MAX),
    });
    const errors = h('div');
    const form = h(
      'form',
      { class: 'draft-form', novalidate: true },
      h('p', { class: 'draft-for' }, 'For the group ', h('q', {}, g.label)),
      sectionsError ? message('error', `The sections could not be read: ${sectionsError}`) : null,
      sections && !sections.length ? message('warning', 'This workspace has no sections yet: a draft needs one.') : null,
      field('Title', title),
      field('Section', section),
      field('Markdown', markdown, 'The article’s text. Enter in the fields below sends the form.'),
      field('Summary for the reviewer', summary),
      errors,
      h(
        'div',
        { class: 'actions' },
        h('button', { type: 'submit', class: 'primary' }, 'Create the proposal'),
        h('button', { type: 'button', class: 'button-quiet', on: { click: closeDraft } }, 'Cancel'),
      ),
    );
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      fill(errors);
      const missing = [
        [title, 'a title'],
        [section, 'a section'],
        [summary, 'a summary'],
      ].filter(([control]) => !control.value.trim());
      if (missing.length) {
        fill(errors, message('error', `Give ${missing.map(([, what]) => what).join(', ')}.`));
        missing[0][0].focus();
        return;
      }
      await busy(form, async () => {
        let proposal;
        try {
          proposal = (
            await gql(PROPOSE, {
              w: workspace.id,
              group: g.id,
              input: { title: title.value.trim(), section: section.value, markdown: markdown.value, summary: summary.value.trim() },
            })
          ).proposeFromContentGap;
        } catch (error) {
          if (view.alive) fill(errors, message('error', error.message));
          return;
        }
        if (!view.alive) return;
        drafting = null;
        announce(`Proposal #${proposal.id} created.`);
        const done = message(
          'success',
          `Proposal #${proposal.id} (“${proposal.title}”) now waits for review. `,
          h('a', { href: `#/proposals/${proposal.id}` }, `Review proposal #${proposal.id}`),
        );
        done.setAttribute('tabindex', '-1');
        drawPanelEmpty(done);
        done.focus();
        await load();
      });
    });
    fill(panel, h('h2', { id: 'draft-title', tabindex: '-1' }, 'Draft a proposal'), form);
    title.focus();
  }

  includeResolved.addEventListener('change', () => void load());

  let refresh = null;
  const refreshSoon = () => {
    clearTimeout(refresh);
    refresh = setTimeout(() => void load(), 250);
  };
  view.subscribe(
    CHANGED,
    { w: workspace.id },
    {
      next: refreshSoon,
      resumed: refreshSoon,
      error: (text) => view.alive && fill(listErrors, message('error', `Live updates of content gaps stopped: ${text}`)),
    },
  );
  view.onClose(() => clearTimeout(refresh));

  panel.id = 'draft-pane';
  fill(
    main,
    h('h1', { tabindex: '-1' }, 'Content gaps'),
    h('p', { class: 'lead' }, 'Questions agents and searches found no answer to, grouped by similarity, most asked first.'),
    h(
      'div',
      { class: 'columns columns-gaps' },
      h(
        'section',
        { 'aria-labelledby': 'groups-title', class: 'gap-column' },
        h(
          'div',
          { class: 'pane-head' },
          h('h2', { id: 'groups-title' }, 'Groups ', count),
          h(
            'div',
            { class: 'pane-tools' },
            h('span', { class: 'check' }, includeResolved, h('label', { for: 'gaps-resolved' }, 'Include resolved')),
            h('button', { type: 'button', class: 'button-quiet button-small', on: { click: () => load() } }, 'Refresh'),
          ),
        ),
        listErrors,
        list,
      ),
      panel,
    ),
  );
  drawPanelEmpty();
  await load();
}
