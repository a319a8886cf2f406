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
  }, 300_000); // embeds ~400 passages with the local model
});

/**
 * Twenty handbook chapters that share a long common introduction (as real handbooks do) and
 * differ in one section deep inside; questions that paraphrase those sections with few of their
 * words. Embedded whole, every chapter looked like the introduction and every question fell back
 * (below the similarity floor); embedded as passages, each chapter ranks by its own section.
 */
const INTRO = [
  'Welcome to the operations handbook of the platform team. This handbook is maintained by the whole team and reviewed every quarter.',
  'Every chapter follows the same structure: background, responsibilities, the procedure itself and where to ask for help.',
  'Before you change anything in production, announce it in the team channel, check the on-call calendar and make sure a second person can review your change.',
  'Our services run in three regions; each region has its own deployment pipeline, its own monitoring dashboards and its own incident commander rotation.',
  'Keep records of what you did and why in the change log, so the next person understands the state of the system without asking.',
  'If something in this handbook is wrong or out of date, open a proposal against the chapter and tag the owners listed at the top of the page.',
].join(' ');
const CHAPTERS: [string, string][] = [
  [
    'Payroll',
    'Salaries are paid on the last working day of each month; expense claims submitted before the twentieth are reimbursed with that payment.',
  ],
  [
    'Vacation',
    'Annual leave requests need approval from your manager two weeks in advance; unused days carry over until the end of March.',
  ],
  [
    'Laptops',
    'A broken laptop is replaced by the IT desk within two days; bring it to the desk and they will restore your files from the backup.',
  ],
  [
    'Fire safety',
    'When the alarm sounds, leave the building by the nearest staircase, never the lift, and gather at the assembly point in the car park.',
  ],
  [
    'Parking',
    'Staff cars must display the permit sticker on the windscreen; visitors park in the spaces marked with a blue line near reception.',
  ],
  ['Kitchen', 'Clean your mug and plates yourself; the fridge is emptied every Friday afternoon and anything left inside is thrown away.'],
  [
    'Passwords',
    'Choose a passphrase of at least four random words, never reuse it elsewhere, and store it only in the company password manager.',
  ],
  [
    'Travel',
    'Book trains and flights through the travel portal; economy class is the rule unless the journey takes longer than six hours.',
  ],
  [
    'Hiring',
    'Every candidate meets at least three interviewers, and the panel agrees on a decision within two days of the last interview.',
  ],
  ['Backups', 'Databases are copied every night to another region, and a restore from those copies is rehearsed once a month.'],
  [
    'Onboarding',
    'New colleagues get a buddy for their first month who shows them the codebase, the tools and the people they will work with.',
  ],
  [
    'Security badges',
    'A lost entry badge must be reported to reception at once so it can be blocked; a replacement costs nothing the first time.',
  ],
  ['Printing', 'The printers on each floor release a job only when you tap your badge, so confidential pages never wait on the tray.'],
  ['Meetings', 'Meetings start five minutes past the hour and end five minutes early so people can get to the next one on time.'],
  ['Bicycles', 'Bikes can be locked in the secure shed behind the building; showers and lockers are on the ground floor.'],
  ['Mail', 'Parcels for staff are held at reception for one week; after that they are returned to the sender.'],
  ['Plants', 'The office plants are watered by a contractor on Tuesdays; please do not move them to other floors.'],
  ['Sick leave', 'If you are ill, tell your manager before ten in the morning; from the fourth day a doctor’s note is needed.'],
  ['Training', 'Each person has a yearly budget for courses and conferences, approved by their manager and booked through the portal.'],
  ['Pets', 'Dogs are welcome on the second floor on Fridays if they are calm and house-trained; other animals stay at home.'],
];
const PARAPHRASES: [string, string][] = [
  ['when do we get our monthly wages', 'Payroll'],
  ['how far ahead must I ask for holidays', 'Vacation'],
  ['my notebook computer stopped working', 'Laptops'],
  ['what to do if there is a fire', 'Fire safety'],
  ['where can guests leave their vehicle', 'Parking'],
  ['how long can food stay in the refrigerator', 'Kitchen'],
  ['rules for choosing a secure login secret', 'Passwords'],
  ['can I keep my bike somewhere safe at work', 'Bicycles'],
];

describe('search by meaning over passages: long pages that share an opening', () => {
  it('finds the chapter whose one section deep inside answers a paraphrase; the snippet comes from that passage', async () => {
    const t = await tenant(app);
    const auth = { authorization: `Bearer ${t.key}` };
    const filler = (name: string) =>
      `## Background\n\nThis chapter of the handbook is about ${name.toLowerCase()} and follows its structure.\n\n` +
      `## Responsibilities\n\nThe owners of this chapter keep it current and answer questions about it.\n\n`;
    const slugs = await loadPages(
      app.url,
      auth,
      CHAPTERS.map(([name, section]) => ({
        file: name,
        title: `Handbook: ${name}`,
        section: 'Handbook',
        markdown: `${INTRO}\n\n${INTRO}\n\n${filler(name)}## Procedure\n\n${section}\n\n## Help\n\nAsk in the team channel.`,
      })),
    );
    await app.server.drainEmbeddings(t.workspace.id);
    let first = 0;
    for (const [q, chapter] of PARAPHRASES) {
      const res = await app.api('GET', `/api/v1/workspaces/-/search?q=${encodeURIComponent(q)}&semantic=true&limit=5`, { key: t.key });
      expect(res.status).toBe(200);
      expect(res.headers.get('x-search-fallback')).toBeNull();
      expect(res.headers.get('x-search-ranking')).toBe('semantic');
      const hits = res.body as { slug: string; snippet: string }[];
      const at = hits.findIndex((h) => h.slug === slugs.get(chapter));
      expect(at, `"${q}" should find ${chapter} in its top 5: ${hits.map((h) => h.slug).join(', ')}`).toBeGreaterThanOrEqual(0);
      if (at === 0) first++;
      // The snippet is the passage that matched, never the shared introduction the chapters open with.
      expect(hits[at].snippet).not.toContain('Welcome to the operations handbook');
    }
    expect(first).toBeGreaterThanOrEqual(6);
  }, 300_000);
});
