import { schemaOf } from '../../src/contract/jsonSchema.js';
import { RULES } from '../../src/contract/rules.js';
import { ArticleDiff } from '../../schema/operations/ArticleDiff.js';
import { ArticleRevision } from '../../schema/operations/ArticleRevision.js';
import { ArticleRevisions } from '../../schema/operations/ArticleRevisions.js';
import { ArticleTree } from '../../schema/operations/ArticleTree.js';
import { CreateArticle } from '../../schema/operations/CreateArticle.js';
import { CreateProposal } from '../../schema/operations/CreateProposal.js';
import { CreateSection } from '../../schema/operations/CreateSection.js';
import { GetArticle } from '../../schema/operations/GetArticle.js';
import { ListMyProposals } from '../../schema/operations/ListMyProposals.js';
import { ListSections } from '../../schema/operations/ListSections.js';
import { PlaceArticle } from '../../schema/operations/PlaceArticle.js';
import { RestoreArticle } from '../../schema/operations/RestoreArticle.js';
import { UpdateArticle } from '../../schema/operations/UpdateArticle.js';
import { UploadImage } from '../../schema/operations/UploadImage.js';
import { STORY } from '../examples.js';
import { defineRoute, headerOf, jsonBody, PAGE_QUERY, paramOf, versionEtagHeader, type Route } from '../routeDefinition.js';

const slugParam = { slug: paramOf(RULES.slug, 'Article slug.') };
/** The `If-Match` header of an article write; `example`: the version the story's article is at then. */
const ifMatchHeader = (example: string) => ({
  'if-match': headerOf(RULES.ifMatch, 'ETag from GET ("v<version>"), or `*`.', 'ifMatch', { example }),
});
const versionParam = paramOf(RULES.version, 'A version of the article (its ETag at that version was "v<version>").');
const visibility = {
  type: 'string',
  enum: ['public', 'restricted'],
  description:
    '`restricted` needs the pro or enterprise plan (403 `plan_required` on free) and hides the content from keys of viewer-role members.',
};
const statusSchema = { type: 'string', enum: ['DRAFT', 'STABLE', 'DEPRECATED', 'ARCHIVED'] };
const etag = versionEtagHeader('Version tag of the article ("v<version>"); send it back in `If-Match` to edit only that version.');
/** A version of the example's article as its history lists it (the size of its Markdown, not the Markdown). */
function revisionExample(v: {
  version: number;
  status: string;
  action: string;
  changed: string[];
  markdown: string;
}): Record<string, unknown> {
  return {
    version: v.version,
    title: 'Getting started',
    status: v.status,
    visibility: 'public',
    section: 'guides',
    position: 0,
    action: v.action,
    changed: v.changed,
    summary: null,
    agentKeyId: '3f1c9a7e-8b2d-4e6f-a1c3-5d7e9f0b2a4c',
    memberId: '5b2e8c4a-1f7d-4a3b-9c6e-0d8f2a4b6c1e',
    proposalId: null,
    restoredFrom: null,
    size: Buffer.byteLength(v.markdown),
    createdAt: '2026-11-23T09:30:00.000Z',
  };
}
const TRANSITIONS_TEXT =
  'Allowed status transitions: DRAFT → STABLE | ARCHIVED; STABLE → DRAFT | DEPRECATED | ARCHIVED; DEPRECATED → STABLE | ARCHIVED; ARCHIVED → DRAFT. ' +
  'Any other change is a 400 naming both states.';

/** Articles, proposals, sections and uploads, endpoints 11–20. */
export const ARTICLE_ROUTES: Route[] = [
  defineRoute({
    name: 'articles_tree',
    method: 'GET',
    path: '/workspaces/{workspace}/articles',
    operation: ArticleTree,
    tag: 'Articles',
    summary: 'The sidebar tree',
    description:
      'Sections in sidebar order, each with its articles in order (restricted ones only for keys allowed to see them). Optionally only articles of one status.',
    query: { status: { schema: statusSchema, description: 'Only articles with this status.' } },
    headers: {
      'if-none-match': headerOf(RULES.ifNoneMatch, 'The ETag of a tree you hold: 304 (no body) while it is still current.', 'ifNoneMatch', {
        // The drafts' tree as it was when the section was new: the article made since changed it.
        example: '"t1.all.draft"',
      }),
    },
    keepAnswers: true,
    responseHeaders: {
      ETag: {
        description:
          'Names the workspace content revision (raised by every change to its sections and articles), what the key may see and the status filter.',
      },
    },
    exampleValues: { status: 'DRAFT', version: 1, publishedAt: null },
    status: 200,
  }),
  defineRoute({
    name: 'articles_create',
    method: 'POST',
    path: '/workspaces/{workspace}/articles',
    operation: CreateArticle,
    tag: 'Articles',
    summary: 'Create a draft article',
    description:
      'Creates a `DRAFT` at the end of the section. The slug is generated from the title (made unique with -2, -3, ' +
      '…) and never changes. An unknown section is a 400.',
    body: jsonBody({
      variable: 'input',
      required: ['title', 'section', 'markdown'],
      properties: {
        title: schemaOf(RULES.title),
        section: schemaOf(RULES.sectionKey, { description: 'Key of an existing section.' }),
        markdown: schemaOf(RULES.markdown),
        visibility: { ...visibility, default: 'public' },
      },
    }),
    responseHeaders: etag,
    exampleValues: { status: 'DRAFT', version: 1, publishedAt: null },
    status: 201,
  }),
  defineRoute({
    name: 'articles_get',
    method: 'GET',
    path: '/workspaces/{workspace}/articles/{slug}',
    operation: GetArticle,
    tag: 'Articles',
    summary: 'Read an article',
    description: 'The article with its Markdown. The `ETag` header names its version.',
    pathParams: slugParam,
    responseHeaders: etag,
    exampleValues: { status: 'DRAFT', version: 1, publishedAt: null },
    status: 200,
  }),
  defineRoute({
    name: 'articles_update',
    method: 'PATCH',
    path: '/workspaces/{workspace}/articles/{slug}',
    operation: UpdateArticle,
    tag: 'Articles',
    summary: 'Edit an article',
    description:
      `Edits title, markdown, visibility and status (send at least one). Changing \`status\` needs \`article.update\` and \`article.publish\`. ` +
      `${TRANSITIONS_TEXT} ` +
      'With `If-Match: "v<version>"` the edit applies only if the article is still at that version (412 `precondition_failed` otherwise). ' +
      'Pages generated from the attached OpenAPI spec are rewritten by sync and answer 409 `conflict` until detached.',
    pathParams: slugParam,
    headers: ifMatchHeader('"v1"'),
    body: jsonBody({
      variable: 'input',
      minProperties: 1,
      example: { markdown: STORY.editedMarkdown, status: 'STABLE' },
      properties: {
        title: schemaOf(RULES.title),
        markdown: schemaOf(RULES.markdown),
        visibility,
        status: { ...statusSchema, description: TRANSITIONS_TEXT },
      },
    }),
    responseHeaders: etag,
    exampleValues: { status: 'STABLE', version: 2, markdown: STORY.editedMarkdown },
    status: 200,
    extraErrors: [409, 412],
  }),
  defineRoute({
    name: 'articles_place',
    method: 'POST',
    path: '/workspaces/{workspace}/articles/{slug}/placement',
    operation: PlaceArticle,
    tag: 'Articles',
    summary: 'Move an article into a section',
    description:
      'Moves the article to a 0-based `position` in `section` (default: last), renumbering the articles of both ' +
      'sections in one transaction. Answers the moved article.',
    pathParams: slugParam,
    body: jsonBody({
      variable: 'input',
      required: ['section'],
      properties: {
        section: schemaOf(RULES.sectionKey, { description: 'Key of the target section (may be the current one).' }),
        position: schemaOf(RULES.position, { description: '0-based position in the target section; at most its article count.' }),
      },
    }),
    responseHeaders: etag,
    // The same place: the move is a version of its own.
    exampleValues: { status: 'STABLE', version: 4 },
    status: 200,
  }),
  defineRoute({
    name: 'articles_revisions',
    method: 'GET',
    path: '/workspaces/{workspace}/articles/{slug}/revisions',
    operation: ArticleRevisions,
    tag: 'Articles',
    summary: "List an article's versions",
    description:
      'Every version of the article, newest first: the state it had (title, status, visibility, section, position; no Markdown, only its `size`), ' +
      'how it came about (`action`, `changed` fields, `summary`), the agent key and member that made it, the approved proposal or restored version. ' +
      'Every edit, move, status change, approved proposal, restore and OpenAPI sync makes a version. A version written while the content was restricted ' +
      'is listed only to keys allowed to see restricted content. Cursor-paginated.',
    pathParams: slugParam,
    // The page after version 3: versions 2 and 1.
    query: PAGE_QUERY(RULES.pageLimit, [3]),
    responseExample: [
      revisionExample({
        version: 2,
        status: 'STABLE',
        action: 'status_changed',
        changed: ['markdown', 'status'],
        markdown: STORY.editedMarkdown,
      }),
      revisionExample({ version: 1, status: 'DRAFT', action: 'created', changed: [], markdown: STORY.articleMarkdown }),
    ],
    status: 200,
    list: true,
  }),
  defineRoute({
    name: 'articles_revision',
    method: 'GET',
    path: '/workspaces/{workspace}/articles/{slug}/revisions/{version}',
    operation: ArticleRevision,
    tag: 'Articles',
    summary: 'Read one version of an article',
    description:
      'The article as it was at `version`, with its Markdown (the current version too). 404 when the article has no such version readable by the key.',
    pathParams: { ...slugParam, version: versionParam },
    responseExample: {
      ...revisionExample({ version: 1, status: 'DRAFT', action: 'created', changed: [], markdown: STORY.articleMarkdown }),
      markdown: STORY.articleMarkdown,
    },
    status: 200,
  }),
  defineRoute({
    name: 'articles_diff',
    method: 'GET',
    path: '/workspaces/{workspace}/articles/{slug}/diff',
    operation: ArticleDiff,
    tag: 'Articles',
    summary: 'Compare two versions of an article',
    description:
      'What changed from version `from` to version `to` (default: the current one): `changes` lists the other fields whose values differ ' +
      '(title, status, visibility, section, position) and `diff` is a unified diff of the Markdown with 3 lines of context. 404 when either version ' +
      'is not readable.',
    pathParams: slugParam,
    query: {
      from: paramOf(RULES.version, 'The older version.', { required: true }),
      to: paramOf(RULES.version, 'The newer version; default: the current one.'),
    },
    exampleValues: { changes: [{ field: 'status', from: 'DRAFT', to: 'STABLE' }], additions: 2, deletions: 1 },
    status: 200,
  }),
  defineRoute({
    name: 'articles_restore',
    method: 'POST',
    path: '/workspaces/{workspace}/articles/{slug}/revisions/{version}/restore',
    operation: RestoreArticle,
    tag: 'Articles',
    summary: 'Restore an earlier version of an article',
    description:
      'Brings back the title and Markdown the article had at `version`, as a new version (status, visibility and placement stay as they are); ' +
      'the new version records the restore. With `If-Match: "v<version>"` it applies only if the article is still at that version (412 otherwise). ' +
      'Pages generated from the attached OpenAPI spec answer 409 `conflict` until detached, as for edits.',
    // Version 1 back, over version 2: the new version is 3.
    pathParams: { ...slugParam, version: { ...versionParam, example: 1 } },
    headers: ifMatchHeader('"v2"'),
    responseHeaders: etag,
    exampleValues: { status: 'STABLE', version: 3 },
    status: 200,
    extraErrors: [409, 412],
  }),
  defineRoute({
    name: 'proposals_list',
    method: 'GET',
    path: '/workspaces/{workspace}/proposals',
    operation: ListMyProposals,
    tag: 'Proposals',
    summary: "List the caller's edit proposals",
    description: 'Only proposals made with the calling key, newest first; cursor-paginated.',
    query: {
      status: {
        schema: { type: 'string', enum: ['open', 'approved', 'rejected', 'returned'] },
        description: 'Only proposals in this state.',
      },
      ...PAGE_QUERY(RULES.pageLimit, [1_000_000]),
    },
    status: 200,
    list: true,
  }),
  defineRoute({
    name: 'proposals_create',
    method: 'POST',
    path: '/workspaces/{workspace}/proposals',
    operation: CreateProposal,
    tag: 'Proposals',
    summary: 'Propose an article edit or a new draft',
    description:
      'An edit names `article` (slug) and sends a new `title` and/or `markdown`; a new draft sends `section`, `title` and `markdown`. Both need a `summary`. ' +
      'The proposal is stored `open`; editors approve or reject it over GraphQL. Approving an edit of an article ' +
      'changed since the proposal was made is refused (409).',
    body: jsonBody({
      variable: 'input',
      required: ['summary'],
      variants: [
        {
          title: 'Edit',
          description: 'Changes an existing article: its slug, a new title and/or markdown, and a summary. No `section`.',
          properties: ['article', 'title', 'markdown', 'summary'],
          required: ['article', 'summary'],
          oneOfRequired: ['title', 'markdown'],
        },
        {
          title: 'New draft',
          description: 'A new article: its section, title, markdown and a summary. No `article`.',
          properties: ['section', 'title', 'markdown', 'summary'],
          required: ['section', 'title', 'markdown', 'summary'],
        },
      ],
      example: { article: 'getting-started', markdown: STORY.proposedMarkdown, summary: 'Point new users at wks init.' },
      properties: {
        article: schemaOf(RULES.articleRef, { description: 'Slug of the article to edit; omit for a new draft.' }),
        section: schemaOf(RULES.sectionKey, { description: 'Section key of a new draft.' }),
        title: schemaOf(RULES.title),
        markdown: schemaOf(RULES.markdown),
        summary: schemaOf(RULES.summary, { description: 'What the change does and why, for the reviewer.' }),
      },
    }),
    status: 201,
  }),
  defineRoute({
    name: 'sections_list',
    method: 'GET',
    path: '/workspaces/{workspace}/sections',
    operation: ListSections,
    tag: 'Sections',
    summary: 'List sections in sidebar order',
    description: 'Every section the key may see, in sidebar order, with the number of articles in it the key may see.',
    status: 200,
  }),
  defineRoute({
    name: 'sections_create',
    method: 'POST',
    path: '/workspaces/{workspace}/sections',
    operation: CreateSection,
    tag: 'Sections',
    summary: 'Create a navigation section',
    description:
      'Adds a section (last, or at `position`, shifting the ones after it). `key` defaults to a slug of the label; an explicit key already in use is a 409.',
    body: jsonBody({
      variable: 'input',
      required: ['label'],
      properties: {
        label: schemaOf(RULES.label),
        key: schemaOf(RULES.newSlug),
        visibility: { ...visibility, default: 'public' },
        position: schemaOf(RULES.position, { description: '0-based sidebar position; at most the number of sections.' }),
      },
    }),
    exampleValues: { articleCount: 0 },
    status: 201,
    extraErrors: [409],
  }),
  defineRoute({
    name: 'uploads_create',
    method: 'POST',
    path: '/workspaces/{workspace}/uploads',
    operation: UploadImage,
    tag: 'Uploads',
    summary: 'Upload an image',
    description:
      'multipart/form-data with one field `file`: a PNG, JPEG, WebP or GIF image, decided by its bytes (not its name or declared type); at most 10 MiB and ' +
      '16,384 px a side / 50 megapixels. `url` is a same-origin path anyone can GET (immutable, unguessable); the ' +
      'same bytes uploaded again return the same URL.',
    upload: { field: 'file', variable: 'file', maxBytes: 10 * 1024 * 1024, description: 'The image in the `file` field.' },
    status: 201,
  }),
];
