import { ARTICLE_ROUTES } from './articles.js';
import { CHANGELOG_ROUTES } from './changelog.js';
import { MEMORY_ROUTES } from './memory.js';
import { OPENAPI_ROUTES } from './openapi.js';
import { SEARCH_ROUTES } from './search.js';
import { WORKSPACE_ROUTES } from './workspace.js';
import type { Route } from '../routeDefinition.js';

/**
 * The REST API: one row per endpoint, in the order of the API reference (changelog, memory,
 * search and content gaps, articles, API reference, the workspace's guidance). The generic handler, the OpenAPI document
 * and the agent tools read only this table (its rows live in routes/, one file per resource).
 */
export const ROUTES: Route[] = [
  ...CHANGELOG_ROUTES,
  ...MEMORY_ROUTES,
  ...SEARCH_ROUTES,
  ...ARTICLE_ROUTES,
  ...OPENAPI_ROUTES,
  ...WORKSPACE_ROUTES,
];
