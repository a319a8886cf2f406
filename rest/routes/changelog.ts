import { LIMITS } from '../../src/limits.js';
import type { JsonSchema } from '../jsonSchema.js';
import { PAGE_QUERY, type Route } from '../route.js';

const changelogFields: Record<string, JsonSchema> = {
  title: { type: 'string', minLength: 1, maxLength: LIMITS.titleLength },
  markdown: { type: 'string', maxLength: LIMITS.markdownLength, description: 'Markdown body.' },
  status: { type: 'string', enum: ['draft', 'published'], description: 'Setting or changing it needs `changelog.publish` (except creating a draft).' },
  tags: { type: 'array', maxItems: LIMITS.tagCount, items: { type: 'string', maxLength: LIMITS.tagLength } },
  published_at: {
    type: ['string', 'null'],
    format: 'date-time',
    description: 'Publication time (RFC 3339). A published entry sent with null gets the current time; moving an entry to draft clears it unless one is sent.',
  },
};
const changelogRename = { published_at: 'publishedAt' };
const entryId = { id: { schema: { type: 'integer', minimum: 1, maximum: 2147483647 }, description: 'Changelog entry id.' } };

/** Changelog, endpoints 1–4. */
export const CHANGELOG_ROUTES: Route[] = [
  {
    name: 'changelog_list',
    method: 'GET',
    path: '/workspaces/{workspace}/changelog',
    operation: 'ListChangelog',
    tag: 'Changelog',
    summary: 'List changelog entries',
    description: 'Published entries, newest `publishedAt` first. Cursor-paginated: the body is the array of the page; the next page is linked in `Link: <…>; rel="next"`.',
    permissions: ['changelog.read'],
    query: {
      drafts: { schema: { type: 'boolean', default: false }, description: 'Include drafts; honoured only when the key has `changelog.update`.' },
      ...PAGE_QUERY(LIMITS.pageMax, LIMITS.pageDefault),
    },
    status: 200,
    list: true,
  },
  {
    name: 'changelog_create',
    method: 'POST',
    path: '/workspaces/{workspace}/changelog',
    operation: 'CreateChangelogEntry',
    tag: 'Changelog',
    summary: 'Create a changelog entry',
    description: 'Needs `changelog.update`; creating it with `status: published` also needs `changelog.publish`. The author is the key\'s name.',
    permissions: ['changelog.update'],
    body: {
      schema: { type: 'object', properties: changelogFields, required: Object.keys(changelogFields), additionalProperties: false },
      variable: 'input',
      rename: changelogRename,
    },
    status: 201,
  },
  {
    name: 'changelog_delete',
    method: 'DELETE',
    path: '/workspaces/{workspace}/changelog/{id}',
    operation: 'DeleteChangelogEntry',
    tag: 'Changelog',
    summary: 'Delete a changelog entry',
    description: 'Needs `changelog.update`. Answers `{ id, deleted: true }`.',
    permissions: ['changelog.update'],
    pathParams: entryId,
    status: 200,
  },
  {
    name: 'changelog_update',
    method: 'PATCH',
    path: '/workspaces/{workspace}/changelog/{id}',
    operation: 'UpdateChangelogEntry',
    tag: 'Changelog',
    summary: 'Update a changelog entry',
    description: 'Needs `changelog.update`; changing `status`, or the publication time of a published entry, also needs `changelog.publish`. Send at least one field.',
    permissions: ['changelog.update'],
    pathParams: entryId,
    body: {
      schema: { type: 'object', properties: changelogFields, minProperties: 1, additionalProperties: false },
      variable: 'input',
      rename: changelogRename,
    },
    status: 200,
  },
];
