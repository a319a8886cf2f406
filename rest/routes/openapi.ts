import { schemaOf } from '../../src/contract/jsonSchema.js';
import { BODY_LIMITS, RULES } from '../../src/contract/rules.js';
import { AttachApiSpec } from '../../schema/operations/AttachApiSpec.js';
import { CreateApiSection } from '../../schema/operations/CreateApiSection.js';
import { DetachApiPage } from '../../schema/operations/DetachApiPage.js';
import { DetachApiSpec } from '../../schema/operations/DetachApiSpec.js';
import { GetApiSpec } from '../../schema/operations/GetApiSpec.js';
import { ListApiPages } from '../../schema/operations/ListApiPages.js';
import { PlaceApiPage } from '../../schema/operations/PlaceApiPage.js';
import { SyncApiSpec } from '../../schema/operations/SyncApiSpec.js';
import { STORY } from '../examples.js';
import { defineRoute, jsonBody, paramOf, type Route } from '../routeDefinition.js';

const slugParam = { slug: paramOf(RULES.slug, 'Slug of a generated page.') };

/** The example's spec, attached as an object: one operation, its page added. */
const attached = { title: 'Pets', changed: [], removed: [], drifted: [], warnings: [], unchanged: 0 };

/** Generated API-reference pages, endpoints 22–29. */
export const OPENAPI_ROUTES: Route[] = [
  defineRoute({
    name: 'openapi_status',
    method: 'GET',
    path: '/workspaces/{workspace}/openapi',
    operation: GetApiSpec,
    tag: 'API reference',
    summary: 'Status of the attached spec',
    description:
      'Source (url or raw), spec title and version, OpenAPI version, operation and page counts, last sync time, ' +
      'result and plan, and warnings. 404 when no spec is attached.',
    exampleValues: attached,
    status: 200,
  }),
  defineRoute({
    name: 'openapi_attach',
    method: 'PUT',
    path: '/workspaces/{workspace}/openapi',
    operation: AttachApiSpec,
    tag: 'API reference',
    summary: 'Attach a spec and generate pages',
    description:
      'Send exactly one of `url` (fetched over http(s): public addresses only, checked at connect time and on every redirect; 10 s timeout; at most 5 MiB) ' +
      'or `spec` (JSON or YAML text, or an object). OpenAPI 3.0, 3.1 and Swagger 2.0 are validated with swagger-parser, external `$ref`s are never resolved; ' +
      'an invalid spec is a 400 whose `details` list the findings (`path`, `message`) and changes nothing. One page per operation (keyed by operationId, ' +
      'else "METHOD /path"; titled by summary; grouped by first tag, untagged → "API Reference"; `x-hidden` ' +
      'operations skipped). Attaching again replaces the spec and re-syncs.',
    body: jsonBody({
      variable: 'input',
      example: { spec: STORY.petsSpec },
      properties: {
        url: schemaOf(RULES.url, { description: 'http(s) URL of the spec.' }),
        spec: schemaOf(RULES.spec, { description: 'The spec as JSON or YAML text, or as an object.' }),
      },
      maxBytes: BODY_LIMITS.spec,
    }),
    exampleValues: attached,
    status: 200,
  }),
  defineRoute({
    name: 'openapi_detach',
    method: 'DELETE',
    path: '/workspaces/{workspace}/openapi',
    operation: DetachApiSpec,
    tag: 'API reference',
    summary: 'Detach the spec',
    description:
      'Removes the spec and every still-generated page; detached pages stay as ordinary articles. Answers `{detached: true, removedPages}`.',
    // The example's only page was detached before.
    exampleValues: { removedPages: 0 },
    status: 200,
  }),
  defineRoute({
    name: 'openapi_pages',
    method: 'GET',
    path: '/workspaces/{workspace}/openapi/pages',
    operation: ListApiPages,
    tag: 'API reference',
    summary: 'List generated pages',
    description:
      'Pages generated from the spec (and detached ones) in sidebar order, with section, operation key, method, path and state (`generated` | `detached`).',
    status: 200,
  }),
  defineRoute({
    name: 'openapi_detach_page',
    method: 'DELETE',
    path: '/workspaces/{workspace}/openapi/pages/{slug}',
    operation: DetachApiPage,
    tag: 'API reference',
    summary: 'Detach a generated page',
    description:
      'The page stops being generated and becomes an ordinary, editable article; sync never rewrites it again but ' +
      'reports drift. 409 if it is already detached.',
    pathParams: slugParam,
    // It had been moved into the guides.
    exampleValues: { section: 'guides', position: 1, state: 'detached' },
    status: 200,
    extraErrors: [409],
  }),
  defineRoute({
    name: 'openapi_place_page',
    method: 'POST',
    path: '/workspaces/{workspace}/openapi/pages/{slug}/placement',
    operation: PlaceApiPage,
    tag: 'API reference',
    summary: 'Move a generated page',
    description:
      'Moves a generated page to a 0-based `position` (default: last) in `section` (default: its current section). Placements survive syncs.',
    pathParams: slugParam,
    body: jsonBody({
      variable: 'input',
      properties: {
        section: schemaOf(RULES.sectionKey, { description: 'Target section key; default: the current one.' }),
        position: schemaOf(RULES.position),
      },
    }),
    // Into the guides, after "Getting started".
    exampleValues: { section: 'guides', position: 1 },
    status: 200,
  }),
  defineRoute({
    name: 'openapi_create_section',
    method: 'POST',
    path: '/workspaces/{workspace}/openapi/sections',
    operation: CreateApiSection,
    tag: 'API reference',
    summary: 'Create a section for generated pages',
    description:
      'A section that collects the generated pages of one OpenAPI `tag` (default: the label); sync puts new pages of ' +
      'that tag there. A tag already collected is a 409.',
    body: jsonBody({
      variable: 'input',
      required: ['label'],
      properties: {
        label: schemaOf(RULES.label),
        key: schemaOf(RULES.newSlug),
        tag: schemaOf(RULES.apiTag, { description: 'The OpenAPI tag; default: the label.' }),
        position: schemaOf(RULES.position),
      },
    }),
    // After the guides; created before the spec is attached, it collects the page of GET /pets.
    exampleValues: { position: 1, articleCount: 0 },
    status: 201,
    extraErrors: [409],
  }),
  defineRoute({
    name: 'openapi_sync',
    method: 'POST',
    path: '/workspaces/{workspace}/openapi/sync',
    operation: SyncApiSpec,
    tag: 'API reference',
    summary: 'Regenerate pages from the spec',
    description:
      'Re-reads the attached spec (re-fetching a URL) and applies the difference in one transaction: pages of new ' +
      'operations are added, pages whose operation ' +
      'hash changed are rewritten (keeping their section and position), pages of removed operations are deleted; detached pages are never touched but ' +
      'reported in `drifted`. A sync of an unchanged spec changes nothing. Answers the plan.',
    // The spec has not changed since it was attached.
    responseExample: { added: [], changed: [], removed: [], unchanged: 1, drifted: [] },
    status: 200,
  }),
];
