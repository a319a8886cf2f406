/**
 * A small program written against the client generated from the served OpenAPI document
 * (openapi-typescript + openapi-fetch): `npm run contract:check` regenerates the types and
 * type-checks this file, so a change to the document that would break a typed client fails CI.
 * It uses three endpoints the way an agent does: write a note, search, read an article.
 */
import createClient from 'openapi-fetch';
import type { components, paths } from './generated/api.js';

type Note = paths['/workspaces/{workspace}/memory/note']['put']['responses']['200']['content']['application/json'];
type Hit = paths['/workspaces/{workspace}/search']['get']['responses']['200']['content']['application/json'][number];
type ApiError = components['schemas']['Error'];

export async function remember(baseUrl: string, key: string): Promise<string[]> {
  const api = createClient<paths>({ baseUrl: `${baseUrl}/api/v1`, headers: { authorization: `Bearer ${key}` } });

  const put = await api.PUT('/workspaces/{workspace}/memory/note', {
    params: { path: { workspace: '-' }, header: { 'if-none-match': '*' } },
    body: { path: 'runbooks/deploy', body: '# Deploy\n\nMerge, then watch the pipeline.', kind: 'runbook', links: [], tags: ['ops'] },
  });
  if (put.error) throw new Error(describe(put.error));
  const note: Note = put.data;
  const version: number = note.version;

  const found = await api.GET('/workspaces/{workspace}/search', {
    params: { path: { workspace: '-' }, query: { q: 'deploy pipeline', mode: 'hybrid', limit: 5 } },
  });
  if (found.error) throw new Error(describe(found.error));
  const hits: Hit[] = found.data;
  const slugs = hits.filter((h) => h.type === 'article').map((h) => h.slug ?? '');

  const lines = [`note ${note.path} at version ${version}`];
  for (const slug of slugs) {
    const article = await api.GET('/workspaces/{workspace}/articles/{slug}', { params: { path: { workspace: '-', slug } } });
    if (article.error) throw new Error(describe(article.error));
    lines.push(`${article.data.title} (${article.data.status}, v${article.data.version})`);
  }
  return lines;
}

function describe(error: ApiError): string {
  return `${error.error.status} ${error.error.code}: ${error.error.message}`;
}
