import { schemaOf } from '../../src/contract/jsonSchema.js';
import { RULES } from '../../src/contract/rules.js';
import { FEEDBACK_ITEMS, FEEDBACK_WEIGHT, HYBRID_FULL_TEXT_DEPTH, SEMANTIC_DEPTH, SEMANTIC_SHARE } from '../../src/search/fusion.js';
import { ContentGapDraft } from '../../schema/operations/ContentGapDraft.js';
import { ListContentGaps } from '../../schema/operations/ListContentGaps.js';
import { ProposeFromContentGap } from '../../schema/operations/ProposeFromContentGap.js';
import { ReportContentGap } from '../../schema/operations/ReportContentGap.js';
import { Search } from '../../schema/operations/Search.js';
import { FetchDocument } from '../../schema/operations/FetchDocument.js';
import { STORY } from '../examples.js';
import { defineRoute, jsonBody, PAGE_QUERY, paramOf, type ResponseHeaderDef, type Route } from '../routeDefinition.js';

/** The example's group: the one question it reported, not yet proposed. */
const reportedGroup = {
  label: STORY.question,
  reportCount: 1,
  searchCount: 0,
  state: 'open',
  proposalId: null,
  askedBy: [{ door: 'rest', caller: 'agent_key', questions: 1 }],
};

/** The headers saying which ranking answered a search (workspace and memory search). */
export const RANKING_HEADERS: Record<'X-Search-Ranking' | 'X-Search-Fallback', ResponseHeaderDef> = {
  'X-Search-Ranking': {
    description: '`fulltext`, `semantic` or `hybrid`: the ranking used for this page.',
    value: (data) => String(data.ranking),
  },
  'X-Search-Fallback': {
    description:
      'Present when a semantic or hybrid search fell back to full text: `embedder_unavailable`, `embeddings_pending` or (semantic only) ' +
      '`below_similarity_floor`.',
    value: (data) => (data.fallbackReason as string | null) ?? null,
  },
};

/** How full text ranks, for the descriptions of both searches; `fields` names the first two fields (title and heading, or path and tag). */
export const fullTextRule = (fields: [string, string]) =>
  'Full text (the default) is ranked retrieval for questions in plain words: an item holding any of the words is found, and items are ' +
  `ranked by BM25F (a word's rarity among the items the caller may read, saturating term frequency, length normalisation; the ${fields[0]} ` +
  `weighs twice a body word, a ${fields[1]} one and a half), English stemming, stop words left out, questions up to 2,000 characters (the ` +
  'rarest 64 words rank). ' +
  'Web-search syntax keeps its meaning: a `"quoted phrase"` must appear (one of several joined by `or`), `-word` or `-"phrase"` must not. ';

/** How hybrid ranking scores, for the descriptions of both searches. */
export const HYBRID_RULE =
  `fuses full text's first ${HYBRID_FULL_TEXT_DEPTH} and the embeddings' nearest ${SEMANTIC_DEPTH} (by the question's vector plus ` +
  `${FEEDBACK_WEIGHT} × the mean vector of full text's first ${FEEDBACK_ITEMS} hits): each ranking's scores scaled to 0–1 over its depth, score = ` +
  `${1 - SEMANTIC_SHARE} × full text's + ${SEMANTIC_SHARE} × the embeddings'`;

/** The `explain` query parameter of both searches. */
export const EXPLAIN_PARAM = {
  schema: { type: 'boolean', default: false },
  description:
    'Give each hit an `explain` object: its full-text rank and BM25F score per field (title, headings, body; a note: path, tags, body) and per ' +
    'term (with its idf), its semantic rank and similarity, its fused rank.',
} as const;

/** How pages of every ranking work. */
export const PAGES_RULE =
  'Every ranking has a fixed depth, whatever page is asked: pages are slices of one ranking (no repeats, no skips, the same first hits for any `limit`). ';

/** The new draft the example proposes for the group: the draft, edited. */
const proposedDraft = {
  title: 'Rolling back a deploy',
  section: 'guides',
  markdown: "# Rolling back a deploy\n\nWhen the pipeline's checks fail, run `deploy --previous`.",
  summary: `Answers "${STORY.question}" from the runbooks/deploy note.`,
};

/** Workspace search (10), content-gap reports (21), and content-gap groups turned into proposals. */
export const SEARCH_ROUTES: Route[] = [
  defineRoute({
    name: 'search',
    method: 'GET',
    path: '/workspaces/{workspace}/search',
    operation: Search,
    tag: 'Search',
    summary: 'Search articles and the changelog',
    description:
      'Ranked hits over articles (archived ones are left out; restricted ones only for keys of editor, admin or owner members, whose ' +
      'statistics alone count restricted articles) and published changelog entries. Each hit: `type` (article | changelog), `slug` or `id`, ' +
      "`title`, a `snippet` (the stored text escaped as HTML, with the question's words in `<mark>…</mark>` and no other markup), `score` and a " +
      `same-origin \`url\`. ${fullTextRule(['title', 'heading'])}With \`semantic=true\` (or \`mode=semantic\`) hits are ranked by embedding ` +
      'similarity, falling back to full text when the embedder is unavailable, items still wait for embeddings, or nothing clears the similarity floor. ' +
      `\`mode=hybrid\` ${HYBRID_RULE}, falling back to full text when embeddings cannot be used. ${PAGES_RULE}` +
      '`X-Search-Ranking` says which ranking was used and `X-Search-Fallback` why it fell back. Cursor-paginated.',
    query: {
      q: paramOf(RULES.query, 'The query (must not be blank).', { required: true }),
      semantic: { schema: { type: 'boolean', default: false }, description: 'Rank by embedding similarity (falls back to full text).' },
      mode: {
        schema: { type: 'string', enum: ['fulltext', 'semantic', 'hybrid'] },
        description:
          'fulltext (default), semantic (as semantic=true), or hybrid. With semantic=true, only mode=semantic is allowed (else 400).',
      },
      explain: EXPLAIN_PARAM,
      // The first page (offset 0).
      ...PAGE_QUERY(RULES.searchLimit, [0]),
    },
    responseHeaders: {
      'X-Search-Ranking': RANKING_HEADERS['X-Search-Ranking'],
      'X-Search-Suggestions': {
        description:
          'Present when nothing was found, or a word of the query is in no item the key may read, and the workspace uses close words: up to 3 ' +
          'queries to retry, each percent-encoded, separated by ", " ' +
          '(the query with words no article or entry uses replaced by close words from the titles the key may see; each finds something).',
        value: (data) => {
          const suggestions = data.suggestions as string[] | undefined;
          return suggestions?.length ? suggestions.map(encodeURIComponent).join(', ') : null;
        },
      },
      'X-Search-Fallback': RANKING_HEADERS['X-Search-Fallback'],
    },
    // Not asked for (`explain=false`).
    exampleValues: { explain: undefined },
    status: 200,
    list: true,
    // The name ChatGPT's connectors and deep research call search with; their answer's `results` rides along in the tool's answer.
    toolAliases: { query: 'q' },
  }),
  defineRoute({
    name: 'fetch',
    method: 'GET',
    path: '/workspaces/{workspace}/documents',
    operation: FetchDocument,
    tag: 'Search',
    summary: 'Fetch a document by id',
    description:
      'One article, memory note or published changelog entry by the id search results give it (`article:<slug>`, `note:<path>`, ' +
      '`changelog:<id>`), in the shape connectors read (ChatGPT, deep research): `{ id, title, text, url, metadata }`. `text` is its Markdown; ' +
      "`url` its page in the console (absolute: PUBLIC_URL, else this request's origin). A text longer than the cap (FETCH_MAX_CHARS, " +
      'default 100,000 characters) is cut at a paragraph: `metadata.truncated` is true and `metadata.nextOffset` is the `offset` to fetch ' +
      'to read on (`metadata.readOn` says so in words). Needs what reads the kind: `article.read`, `memory.read` or `changelog.read`. ' +
      '404 for what the key may not read (a restricted article, a draft entry) as for what does not exist.',
    query: {
      id: paramOf(RULES.documentId, 'The document: `article:<slug>`, `note:<path>` or `changelog:<id>`.', { required: true }),
      offset: paramOf(
        RULES.textOffset,
        'Where to start reading, in characters (code points) of the text: `metadata.nextOffset` of the last piece.',
      ),
    },
    // The article search found, whole: version 4, its Markdown as restored.
    exampleValues: {
      id: 'article:getting-started',
      text: STORY.articleMarkdown,
      url: 'https://docs.example.com/console/#/ws/7d0f4a52-3c1e-4b9a-9f3e-2a6c8e1d5b70/articles/getting-started',
      type: 'article',
      key: 'getting-started',
      version: 4,
      status: 'STABLE',
      offset: 0,
      totalChars: [...STORY.articleMarkdown].length,
      nextOffset: null,
      readOn: null,
    },
    status: 200,
  }),
  defineRoute({
    name: 'content_gaps_report',
    method: 'POST',
    path: '/workspaces/{workspace}/content-gaps',
    operation: ReportContentGap,
    tag: 'Content gaps',
    summary: 'Report a question the docs did not answer',
    description:
      'Each call adds one report. Only the first 256 characters of `question` are kept (characters, not bytes). Send the question as asked, without ' +
      'names, e-mail addresses or secrets: e-mail addresses, things that look like secrets and phone numbers are replaced by placeholders before storing, ' +
      'and `message` says so. A `slug` that names no article is kept and flagged, not refused. Answers 202 `{message, reported: true}`.',
    body: jsonBody({
      variable: 'input',
      properties: {
        question: schemaOf(RULES.question, { description: 'The question as asked; the first 256 characters are kept.' }),
        slug: schemaOf(RULES.reportSlug, { description: 'Slug of the article that came closest.' }),
      },
    }),
    status: 202,
  }),
  defineRoute({
    name: 'content_gaps_list',
    method: 'GET',
    path: '/workspaces/{workspace}/content-gaps',
    operation: ListContentGaps,
    tag: 'Content gaps',
    summary: 'List the open content-gap groups',
    description:
      'Unanswered questions (reports and zero-result searches) grouped by similar meaning, most asked first: `label`, counts, first and last seen, ' +
      'up to 3 `sampleQuestions` (newest first; e-mail addresses, secrets and phone numbers replaced), the `nearestArticle` (only one the key may see) and ' +
      '`state`: `open`, or `proposed` while a proposal made from the group (`proposalId`) waits for review. Resolved groups are not listed. Cursor-paginated.',
    // The page after a group asked twice.
    query: PAGE_QUERY(RULES.pageLimit, [2, 41]),
    exampleValues: reportedGroup,
    status: 200,
    list: true,
  }),
  defineRoute({
    name: 'content_gaps_propose',
    method: 'POST',
    path: '/workspaces/{workspace}/content-gaps/{group}/proposal',
    operation: ProposeFromContentGap,
    tag: 'Content gaps',
    summary: 'Propose a new draft that answers a content-gap group',
    description:
      'Stores an `open` new-draft proposal (as POST /proposals does) linked to the group, which becomes `proposed`; approving the proposal creates the ' +
      'draft and resolves the group, rejecting it leaves the group open. Needs `article.create` and `proposal.create`. 409 when the group is resolved or ' +
      'already has a proposal waiting for review; 404 for a group of another workspace.',
    pathParams: { group: paramOf(RULES.entryId, 'Id of an open content-gap group (from GET /content-gaps).') },
    body: jsonBody({
      variable: 'input',
      required: ['title', 'section', 'markdown', 'summary'],
      properties: {
        title: schemaOf(RULES.title),
        section: schemaOf(RULES.sectionKey, { description: 'Key of the section of the new draft.' }),
        markdown: schemaOf(RULES.markdown),
        summary: schemaOf(RULES.summary, { description: 'What the draft answers, for the reviewer.' }),
      },
      example: proposedDraft,
    }),
    exampleValues: { ...proposedDraft, kind: 'new', status: 'open', articleSlug: null, baseVersion: null, reason: null },
    status: 201,
    extraErrors: [409],
  }),
  defineRoute({
    name: 'content_gaps_draft',
    method: 'GET',
    path: '/workspaces/{workspace}/content-gaps/{group}/draft',
    operation: ContentGapDraft,
    tag: 'Content gaps',
    summary: 'Draft an answer to a content-gap group from memory notes',
    description:
      'What agents learned, offered as documentation: the group (as listed), its newest `questions` (up to 10, scrubbed), the memory `notes` that ' +
      "answer them (up to 5; a note answers a question when it holds at least half of the question's weight, each word weighed by its idf among " +
      'the notes, so a note answers a paraphrase another question of the group used; notes answering more questions first) and a draft: `title` ' +
      '(the label), `markdown` (the questions, then each note under a heading with its path and version) and `summary`. Nothing is stored: send ' +
      'the draft, edited or not, to POST /content-gaps/{group}/proposal. Needs `article.create` and `memory.read`. 409 when the group is resolved; ' +
      '404 for a group of another workspace.',
    pathParams: { group: paramOf(RULES.entryId, 'Id of an open content-gap group (from GET /content-gaps).') },
    // The note runbooks/deploy answers the group's question.
    exampleValues: {
      ...reportedGroup,
      coverage: 1,
      excerpt: STORY.noteBody,
      title: STORY.question,
      markdown:
        `Questions this article answers:\n\n- ${STORY.question}\n\n## Deploy\n\n${STORY.noteBody}\n\n` +
        '_From the memory note `runbooks/deploy` (version 1)._\n',
      summary: `Answers the content gap “${STORY.question}” with what agents wrote in runbooks/deploy.`,
    },
    status: 200,
    extraErrors: [409],
  }),
];
