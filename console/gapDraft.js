// The content-gaps screen's draft pane: the form that turns a group into a new-article proposal
// (title, section, Markdown, summary), drafted from the memory notes that answer the group's questions
// (what agents learned becomes documentation), else from the group and its questions.
import { announce, busy, field, fill, h, message } from './dom.js';
import { DRAFT, PROPOSE, SECTIONS } from './gapQueries.js';

const SUMMARY_MAX = 500;
const TITLE_MAX = 200;

/**
 * The draft pane of workspace `w`. `group` is the group being drafted (null for none); `onChange()`
 * hears it change, `onClosed(group)` a draft cancelled, `onCreated()` a proposal made.
 */
export class GapDraft {
  constructor({ gql, view, w, questions, onChange, onClosed, onCreated }) {
    Object.assign(this, { gql, view, w, questions, onChange, onClosed, onCreated });
    this.panel = h('section', { class: 'card draft-pane', 'aria-labelledby': 'draft-title', id: 'draft-pane' });
    this.group = null;
    this.sections = null;
    this.sectionsError = null;
  }

  /** The pane with no draft open: what it is for, after `extra` (e.g. the proposal just made). */
  empty(extra = null) {
    fill(
      this.panel,
      h('h2', { id: 'draft-title' }, 'Draft a proposal'),
      extra,
      h(
        'p',
        { class: 'muted' },
        'Choose “Draft a proposal” on a group to write the article that answers its questions. It goes to review like any proposal.',
      ),
    );
  }

  /** Opens the form for group `g`: the sections (read once) and the group's draft from notes are read first. */
  async open(g) {
    this.group = g;
    this.onChange();
    fill(this.panel, this.heading(), h('p', { class: 'muted' }, 'Reading the sections and the notes that answer these questions…'));
    const [, drafted] = await Promise.all([this.loadSections(), this.loadDraft(g)]);
    if (!this.view.alive || this.group !== g) return;
    const { form, title } = this.form(g, drafted.draft);
    fill(this.panel, this.heading(), notesFound(drafted), form);
    title.focus();
  }

  /** The group's draft from notes: `{ draft }`, or `{ error }` when it could not be read (the form then starts from the questions). */
  async loadDraft(g) {
    try {
      return { draft: (await this.gql(DRAFT, { w: this.w, group: g.id })).contentGapDraft };
    } catch (error) {
      return { draft: null, error: error.message };
    }
  }

  close() {
    const was = this.group;
    this.group = null;
    this.empty();
    this.onChange();
    if (was) this.onClosed(was);
  }

  heading() {
    return h('h2', { id: 'draft-title', tabindex: '-1' }, 'Draft a proposal');
  }

  async loadSections() {
    if (this.sections) return;
    try {
      this.sections = (await this.gql(SECTIONS, { w: this.w })).sections;
      this.sectionsError = null;
    } catch (error) {
      this.sectionsError = error.message;
    }
  }

  form(g, draft) {
    const controls = this.controls(g, draft);
    const { title, section, markdown, summary } = controls;
    const errors = h('div');
    const form = h(
      'form',
      { class: 'draft-form', novalidate: true },
      h('p', { class: 'draft-for' }, 'For the group ', h('q', {}, g.label)),
      this.sectionsError ? message('error', `The sections could not be read: ${this.sectionsError}`) : null,
      this.sections && !this.sections.length ? message('warning', 'This workspace has no sections yet: a draft needs one.') : null,
      field('Title', title),
      field('Section', section),
      field('Markdown', markdown, 'The article’s text. Enter in the fields below sends the form.'),
      field('Summary for the reviewer', summary),
      errors,
      h(
        'div',
        { class: 'actions' },
        h('button', { type: 'submit', class: 'primary' }, 'Create the proposal'),
        h('button', { type: 'button', class: 'button-quiet', on: { click: () => this.close() } }, 'Cancel'),
      ),
    );
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      void this.submit(g, form, controls, errors);
    });
    return { form, title };
  }

  /** The form's fields, prefilled from the draft from notes, else the group's label as title and its first questions in the Markdown. */
  controls(g, draft) {
    const questions = this.questions(g.id);
    const text = (name, max, value) =>
      h('input', { name, required: true, maxlength: String(max), autocomplete: 'off', value: value.slice(0, max) });
    const section = h(
      'select',
      { name: 'section', required: true },
      (this.sections ?? []).map((s) => h('option', { value: s.key }, `${s.label} (${s.key})`)),
    );
    const markdown = h('textarea', { name: 'markdown', rows: '9', spellcheck: 'true' });
    markdown.value = draft?.notes.length
      ? draft.markdown
      : `# ${g.label}\n\n${questions.length ? `Answers: ${questions.slice(0, 3).join(' / ')}\n\n` : ''}`;
    return {
      title: text('title', TITLE_MAX, draft?.title ?? g.label),
      section,
      markdown,
      summary: text('summary', SUMMARY_MAX, draft?.notes.length ? draft.summary : `Answers the content gap: ${g.label}`),
    };
  }

  async submit(g, form, { title, section, markdown, summary }, errors) {
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
        const input = { title: title.value.trim(), section: section.value, markdown: markdown.value, summary: summary.value.trim() };
        proposal = (await this.gql(PROPOSE, { w: this.w, group: g.id, input })).proposeFromContentGap;
      } catch (error) {
        if (this.view.alive) fill(errors, message('error', error.message));
        return;
      }
      if (!this.view.alive) return;
      this.created(proposal);
      await this.onCreated();
    });
  }

  /** The pane says the proposal waits for review, with a link to it, and takes the focus. */
  created(proposal) {
    this.group = null;
    announce(`Proposal #${proposal.id} created.`);
    const done = message(
      'success',
      `Proposal #${proposal.id} (“${proposal.title}”) now waits for review. `,
      h('a', { href: `#/proposals/${proposal.id}` }, `Review proposal #${proposal.id}`),
    );
    done.setAttribute('tabindex', '-1');
    this.empty(done);
    done.focus();
  }
}

/** What the draft was made from: the memory notes that answer the group's questions, or why none. */
function notesFound({ draft, error }) {
  if (error) return message('warning', `The memory notes could not be read (${error}): the draft starts from the questions.`);
  if (!draft.notes.length)
    return h(
      'p',
      { class: 'muted draft-notes-none' },
      'No memory note answers these questions yet: the draft starts from the questions. ' +
        'Notes that agents write to the memory (PUT …/memory/note) and that answer them seed the next draft.',
    );
  return h(
    'section',
    { class: 'draft-notes', 'aria-label': 'Memory notes that answer these questions' },
    h('h3', {}, `Drafted from ${draft.notes.length} memory note${draft.notes.length === 1 ? '' : 's'}`),
    h(
      'ul',
      {},
      draft.notes.map((n) =>
        h(
          'li',
          {},
          h('code', {}, n.path),
          ` · version ${n.version} · answers ${n.answers} question${n.answers === 1 ? '' : 's'}`,
          h('p', { class: 'muted excerpt' }, n.excerpt),
        ),
      ),
    ),
  );
}
