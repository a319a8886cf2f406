import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluate, loadPages, score, type DocPage, type Question } from '../scripts/eval-search.js';
import { startTestApp, type TestApp } from './support/app.js';
import { tenant } from './support/factories.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ embeddingWorker: false });
});
afterAll(async () => app?.close());

const FIXTURES = new URL('./fixtures/pgdocs/', import.meta.url);
const pages = JSON.parse(readFileSync(new URL('pages.json', FIXTURES), 'utf8')) as DocPage[];
const questions = JSON.parse(readFileSync(new URL('questions.json', FIXTURES), 'utf8')) as Question[];

describe('search quality on a labelled subset of the PostgreSQL manual (50 pages, 20 questions)', () => {
  it("hybrid ranking finds at least as many answers in its top 5 as full text (recall@5), and semantic's are real", async () => {
    const t = await tenant(app);
    const auth = { authorization: `Bearer ${t.key}` };
    const slugs = await loadPages(app.url, auth, pages);
    expect(slugs.size).toBe(pages.length);
    await app.server.drainEmbeddings(t.workspace.id);
    const scores: Record<string, ReturnType<typeof score>> = {};
    for (const mode of ['fulltext', 'semantic', 'hybrid']) {
      scores[mode] = score(await evaluate(app.url, auth, questions, slugs, mode), () => true);
    }
    console.log('search quality (20 questions):', JSON.stringify(scores));
    expect(scores.hybrid.ran).toEqual({ hybrid: questions.length });
    expect(scores.fulltext.ran).toEqual({ fulltext: questions.length });
    expect(scores.hybrid.recallAt5).toBeGreaterThanOrEqual(scores.fulltext.recallAt5);
    // Not a ranking that finds nothing: embeddings answer some questions in their top 5.
    expect(scores.semantic.recallAt5).toBeGreaterThan(0.3);
  });
});
