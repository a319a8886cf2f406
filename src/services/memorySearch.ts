/** Memory search (endpoint 9): a workspace's notes ranked by full text, by meaning, or both fused, as workspace search ranks. */
import type { Scope } from '../auth/authorize.js';
import type { RequestContext } from '../context.js';
import { invalidField } from '../errors.js';
import { RULES } from '../contract/rules.js';
import { pageSize } from '../pagination.js';
import type { MemorySearchHit, MemorySearchPage } from '../types/memory.js';
import type { FallbackReason, SearchMode } from '../types/search.js';
import { readSearchCursor, searchCursor } from '../search/cursor.js';
import { fuse, HYBRID_FULL_TEXT_DEPTH, SEMANTIC_DEPTH, type Candidate } from '../search/fusion.js';
import { explainHit } from '../search/explain.js';
import { rankFullText, type FullTextResult } from '../search/fullText.js';
import { signalEmbeddingWork } from '../search/vectors.js';
import { safeSnippet } from '../search/snippets.js';
import { feedbackFrom, semanticNeighbours, type SearchArgs } from './search.js';
import { markNotesEmbedded, queueUnembeddedNotes, readNoteHits, type NoteHitRow } from '../store/noteSearch.js';

/**
 * Searches notes over path, tags and body: full text (BM25F, websearch syntax) by default;
 * `semantic` by embedding similarity, `hybrid` both rankings fused like workspace search. Those two
 * fall back to full text when the embedder is unavailable or notes still wait for embeddings
 * (semantic also when nothing clears the similarity floor), and say so in `fallbackReason`. Each
 * ranking has a fixed depth, so a page is a slice of one ranking. A full-text cursor is
 * `[offset]` (as before there were rankings); the others carry their ranking.
 */
export async function searchNotes(ctx: RequestContext, scope: Scope, args: Omit<SearchArgs, 'semantic'>): Promise<MemorySearchPage> {
  const q = args.q.trim();
  if (!q) throw invalidField('q', 'must not be empty');
  const size = pageSize(args.limit, RULES.searchLimit);
  const { offset, ranking: cursorRanking } = args.cursor ? readSearchCursor(args.cursor) : { offset: 0, ranking: null };
  // A later page keeps the ranking its cursor was made by, whatever `mode` says.
  const mode: SearchMode = cursorRanking ?? args.mode ?? 'fulltext';
  const fullTextOf = (depth: number) =>
    rankFullText(ctx.db, ctx.search.fullText, { workspace: scope.workspaceId, corpus: 'notes', q, seesRestricted: true, depth });
  let fallbackReason: FallbackReason | null = null;
  let ranked: { items: Candidate[]; ranking: SearchMode; fullText: FullTextResult | null } | null = null;
  // Without note embeddings (MEMORY_EMBEDDINGS=off, EMBEDDINGS=off) there is nothing to rank by meaning.
  if (mode !== 'fulltext' && (!ctx.memory.embeddings || ctx.search.embedder.model === 'none')) fallbackReason = 'embedder_unavailable';
  else if (mode !== 'fulltext') {
    await embedNotesOf(ctx, scope.workspaceId);
    const ranking = mode === 'hybrid' ? fullTextOf(HYBRID_FULL_TEXT_DEPTH) : null;
    ranking?.catch(() => undefined);
    const expand = ranking ? feedbackFrom(ctx, scope.workspaceId, ranking) : undefined;
    const [neighbours, fullText] = await Promise.all([
      semanticNeighbours(ctx, scope.workspaceId, q, SEMANTIC_DEPTH, ['note'], expand),
      ranking,
    ]);
    if ('reason' in neighbours) fallbackReason = neighbours.reason;
    else if (mode === 'semantic' && !neighbours.length && !offset) fallbackReason = 'below_similarity_floor';
    else
      ranked = {
        items:
          mode === 'semantic'
            ? neighbours.map((n, i) => ({
                itemType: 'note',
                itemId: n.itemId,
                score: n.score,
                semanticRank: i + 1,
                similarity: n.score,
                passage: n.passage,
              }))
            : fuse(fullText!.ranking.hits, neighbours),
        ranking: mode,
        fullText,
      };
  }
  if (!ranked) {
    const fullText = await fullTextOf(offset + size + 1);
    const items = fullText.ranking.hits.map((h, i): Candidate => ({ itemType: 'note', itemId: h.id, score: h.score, fullTextRank: i + 1 }));
    ranked = { items, ranking: 'fulltext', fullText };
  }
  const page = ranked.items.slice(offset, offset + size);
  return {
    items: await noteHits(ctx, scope, page, ranked.fullText, args.explain === true),
    nextCursor: ranked.items.length > offset + size ? searchCursor(offset + size, ranked.ranking, mode) : null,
    ranking: ranked.ranking,
    fallbackReason,
  };
}

/** A page's notes in ranking order, with snippets (of the passage that matched, or marking the question's words). */
async function noteHits(ctx: RequestContext, scope: Scope, page: Candidate[], fullText: FullTextResult | null, explain: boolean) {
  const rows = await readNoteHits(
    ctx.db,
    scope.workspaceId,
    fullText?.anyLexeme ?? null,
    page.map((c) => c.itemId),
    page.map((c) => c.passage ?? null),
  );
  return rows.map((r) => {
    const candidate = page[Number(r.ord) - 1];
    const hit = noteHit(r, candidate.score);
    if (explain) hit.explain = explainHit(candidate, fullText);
    return hit;
  });
}

/** Workspaces whose notes this process knows to be embedded (the flag never turns off). */
const notesEmbedded = new Set<string>();

/**
 * Note embeddings cost a model inference per changed note, so a workspace gets them at its first
 * semantic or hybrid memory search (that search falls back to full text, `embeddings_pending`).
 * Two statements: the flag is turned on and committed first, so every PUT that starts later
 * queues what it changes (putNote reads the flag in its own statement); then every note still
 * without an embedding or a place in the queue is queued, in a snapshot that sees what PUTs
 * committed meanwhile. A PUT whose statement began before the flag and committed after that
 * snapshot is caught by the same catch-up run once more a few seconds later; a process that
 * finds the flag already on runs the catch-up once too (e.g. after a crash between the two).
 */
async function embedNotesOf(ctx: RequestContext, workspaceId: string): Promise<void> {
  if (notesEmbedded.has(workspaceId)) return;
  const turned = await markNotesEmbedded(ctx.db, workspaceId);
  notesEmbedded.add(workspaceId);
  const catchUp = async () => {
    if (await queueUnembeddedNotes(ctx.db, workspaceId)) signalEmbeddingWork();
  };
  await catchUp();
  if (turned) setTimeout(() => void catchUp().catch(() => undefined), 5_000).unref();
}

function noteHit(r: NoteHitRow, score: number): MemorySearchHit {
  return {
    path: r.path,
    kind: r.kind,
    tags: r.tags,
    updatedAt: new Date(r.updated_at),
    score: Math.round(score * 1e6) / 1e6,
    snippet: safeSnippet(r.snippet),
  };
}
