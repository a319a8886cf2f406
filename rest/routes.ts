import { ARTICLE_ROUTES } from './routes/articles.js';
import { CHANGELOG_ROUTES } from './routes/changelog.js';
import { MEMORY_ROUTES } from './routes/memory.js';
import { OPENAPI_ROUTES } from './routes/openapi.js';
import { SEARCH_ROUTES } from './routes/search.js';
import type { Route } from './route.js';

/**
 * The REST API: one row per endpoint, in SPEC order. The generic handler, the OpenAPI document
 * and the agent tools read only this table (its rows live in routes/, one file per resource).
 */
export const ROUTES: Route[] = [...CHANGELOG_ROUTES, ...MEMORY_ROUTES, ...SEARCH_ROUTES, ...ARTICLE_ROUTES, ...OPENAPI_ROUTES];
