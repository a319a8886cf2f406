import { schemaOf } from '../../src/contract/jsonSchema.js';
import { RULES } from '../../src/contract/rules.js';
import { CreateChangelogEntry } from '../../schema/operations/CreateChangelogEntry.js';
import { DeleteChangelogEntry } from '../../schema/operations/DeleteChangelogEntry.js';
import { ListChangelog } from '../../schema/operations/ListChangelog.js';
import { UpdateChangelogEntry } from '../../schema/operations/UpdateChangelogEntry.js';
import type { JsonSchema } from '../jsonSchema.js';
import { defineRoute, jsonBody, PAGE_QUERY, paramOf, type Route } from '../routeDefinition.js';

const changelogFields = {
  title: schemaOf(RULES.title),
  markdown: schemaOf(RULES.markdown, { description: 'Markdown body.' }),
  status: {
    type: 'string',
    enum: ['draft', 'published'],
    description: 'Setting or changing it needs `changelog.publish` (except creating a draft).',
  },
  tags: schemaOf(RULES.changelogTags),
  published_at: {
    type: ['string', 'null'],
    format: 'date-time',
    description:
      'Publication time (RFC 3339). A published entry sent with null gets the current time; moving an entry to draft clears it unless one is sent.',
  },
} satisfies Record<string, JsonSchema>;
const changelogRename = { published_at: 'publishedAt' };
const entryId = { id: paramOf(RULES.entryId, 'Changelog entry id (the `id` POST /changelog answered).') };
/** The entry of the examples, as drafted and as published. */
const drafted = { status: 'draft', published_at: null, publishedAt: null };
const published = { status: 'published', published_at: '2026-11-23T09:30:00.000Z', publishedAt: '2026-11-23T09:30:00.000Z' };

/** Changelog, endpoints 1–4. */
export const CHANGELOG_ROUTES: Route[] = [
  defineRoute({
    name: 'changelog_list',
    method: 'GET',
    path: '/workspaces/{workspace}/changelog',
    operation: ListChangelog,
    tag: 'Changelog',
    summary: 'List changelog entries',
    description:
      'Published entries, newest `publishedAt` first. Cursor-paginated: the body is the array of the page; the next page is linked in `Link: <…>; rel="next"`.',
    query: {
      drafts: {
        schema: { type: 'boolean', default: false },
        description: 'Include drafts; honoured only when the key has `changelog.update`.',
      },
      // The page after an entry published a week later.
      ...PAGE_QUERY(RULES.pageLimit, ['2026-11-30T09:30:00.000Z', 43]),
    },
    exampleValues: published,
    status: 200,
    list: true,
  }),
  defineRoute({
    name: 'changelog_create',
    method: 'POST',
    path: '/workspaces/{workspace}/changelog',
    operation: CreateChangelogEntry,
    tag: 'Changelog',
    summary: 'Create a changelog entry',
    description:
      "Needs `changelog.update`; creating it with `status: published` also needs `changelog.publish`. The author is the key's name.",
    body: jsonBody({
      variable: 'input',
      properties: changelogFields,
      required: ['title', 'markdown', 'status', 'tags', 'published_at'],
      rename: changelogRename,
    }),
    exampleValues: drafted,
    status: 201,
  }),
  defineRoute({
    name: 'changelog_delete',
    method: 'DELETE',
    path: '/workspaces/{workspace}/changelog/{id}',
    operation: DeleteChangelogEntry,
    tag: 'Changelog',
    summary: 'Delete a changelog entry',
    description: 'Needs `changelog.update`. Answers `{ id, deleted: true }`.',
    pathParams: entryId,
    status: 200,
  }),
  defineRoute({
    name: 'changelog_update',
    method: 'PATCH',
    path: '/workspaces/{workspace}/changelog/{id}',
    operation: UpdateChangelogEntry,
    tag: 'Changelog',
    summary: 'Update a changelog entry',
    description:
      'Needs `changelog.update`; changing `status`, or the publication time of a published entry, also needs `changelog.publish`. Send at least one field.',
    pathParams: entryId,
    body: jsonBody({
      variable: 'input',
      properties: changelogFields,
      minProperties: 1,
      rename: changelogRename,
      example: { status: 'published', published_at: published.published_at },
    }),
    exampleValues: published,
    status: 200,
  }),
];
