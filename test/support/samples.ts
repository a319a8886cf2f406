/** A valid request body per route (for isolation and fuzz tests); every route with a body must have one. */
export const SAMPLE_BODIES: Record<string, Record<string, unknown>> = {
  changelog_create: { title: 'T', markdown: 'M', status: 'draft', tags: ['a'], published_at: null },
  changelog_update: { title: 'T2' },
  memory_put_note: { path: 'fuzz/note', body: 'B', kind: 'note', links: [], tags: [] },
  articles_create: { title: 'A', section: 'docs', markdown: 'M' },
  articles_update: { markdown: 'M2' },
  articles_place: { section: 'docs', position: 0 },
  proposals_create: { article: 'shared', markdown: 'M3', summary: 'S' },
  sections_create: { label: 'L' },
  content_gaps_report: { question: 'Q?' },
  content_gaps_propose: { title: 'T', section: 'docs', markdown: 'M', summary: 'S' },
  openapi_attach: { spec: { openapi: '3.0.3', info: { title: 'x', version: '1' }, paths: {} } },
  openapi_place_page: { position: 0 },
  openapi_create_section: { label: 'L', tag: 'fuzz' },
};
