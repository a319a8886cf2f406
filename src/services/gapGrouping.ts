/**
 * Content-gap grouping: unanswered questions (reports, and searches whose first page answered
 * nothing) of a workspace in groups of like questions, compared by meaning and words together
 * (search/questionSimilarity.ts). Groups are re-clustered whenever a question arrives, so where a
 * question ends up does not depend on the order questions came in:
 *
 * - The open groups nobody proposed a draft from are free: their newest RECLUSTER_MAX questions and
 *   the new one are clustered afresh by average linkage (search/averageLink.ts) down to JOIN_LINK.
 *   Each cluster keeps the id of the group most of its questions come from (the older group on a
 *   tie; a group is claimed once), so a group keeps its id, its nearest article and its
 *   dashboards' links while it grows, merges or sheds questions; a cluster no group claims becomes a
 *   new group. Groups left without questions are deleted; counts, first and last seen and the
 *   label (the earliest question) are recounted from the questions.
 * - A group a draft was proposed from keeps its questions (the proposal answers them). A new
 *   question joins it instead when its mean similarity to that group's newest MEMBERS_PER_GROUP
 *   questions is at least JOIN_LINK and higher than to the rest of its own cluster.
 *
 * It runs inside the embedding worker's transaction, the workspace's open groups locked; the words'
 * vectors are made before, outside it (`prepare`), since making them runs the model.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { SqlTarget } from '../db/sql.js';
import { averageLink } from '../search/averageLink.js';
import { fromBytes, type Neighbour } from '../search/vectors.js';
import type { QuestionHandler, QuestionToCluster } from '../search/worker.js';
import { pairSimilarity, type QuestionPoint } from '../search/questionSimilarity.js';
import { QuestionWords } from '../search/questionWords.js';
import { slugById } from '../store/articles.js';
import {
  groupMembers,
  insertGroup,
  lockOpenGroups,
  moveQuestions,
  openGroupIds,
  recentMembers,
  refreshGroups,
  type GroupRow,
  type MemberRow,
  type QuestionMove,
} from '../store/contentGapGroups.js';
import { questionSeenAt, setQuestionGroup } from '../store/contentGapReports.js';
import { QUESTION_KEEP } from './contentGaps.js';

/** Questions (and clusters of them) at least this alike on average are grouped (see questionSimilarity). */
export const JOIN_LINK = 0.3;
/** At most this many of the free groups' newest questions are re-clustered (the older ones stay where they are). */
export const RECLUSTER_MAX = 400;
/** A group with a proposal is compared by its newest questions, at most this many. */
export const MEMBERS_PER_GROUP = 8;
/** Below this similarity, no article is named as a new group's nearest. */
const NEAREST_ARTICLE_FLOOR = 0.3;

/** This process's stems and word vectors. */
const words = new QuestionWords();

/** The content-gap grouping as the embedding worker calls it. */
export const gapGrouping: QuestionHandler = {
  prepare: learnWords,
  handle: clusterQuestion,
};

/**
 * Before the worker's transaction: the vectors of the words of `questions` and of the questions
 * they will be clustered with (read without locks; a question that arrives meanwhile matches by
 * stems only until its words are learned with a later question).
 */
async function learnWords(db: SqlTarget, questions: QuestionToCluster[], embed: (texts: string[]) => Promise<number[][]>): Promise<void> {
  for (const workspaceId of new Set(questions.map((q) => q.workspaceId))) {
    const mine = questions.filter((q) => q.workspaceId === workspaceId);
    const model = mine[0].model;
    const ids = await openGroupIds(db, workspaceId, RECLUSTER_MAX);
    const members = await recentMembers(db, workspaceId, ids, RECLUSTER_MAX, model);
    const texts = [...members.map((m) => m.question), ...mine.map((q) => q.text)];
    await words.learn(await words.wordsOf(db, texts), model, embed);
  }
}

/** Places one embedded question and re-clusters the free groups (see the module's comment), inside the caller's transaction. */
export async function clusterQuestion(
  em: EntityManager,
  question: QuestionToCluster,
  nearestArticle: (vector: number[]) => Promise<Neighbour[]>,
): Promise<void> {
  const { workspaceId, model } = question;
  const open = await lockOpenGroups(em, workspaceId);
  const free = open.filter((g) => !g.proposed);
  const proposed = open.filter((g) => g.proposed);
  const freeMembers = await recentMembers(
    em,
    workspaceId,
    free.map((g) => g.id),
    RECLUSTER_MAX,
    model,
  );
  const proposedMembers = await groupMembers(
    em,
    workspaceId,
    proposed.map((g) => g.id),
    MEMBERS_PER_GROUP,
    model,
  );
  const all = [...freeMembers, ...proposedMembers];
  // Asked again in the same words: it joins the group of its latest earlier asking, nothing is re-clustered.
  const twin = all.filter((m) => sameWords(m.question, question.text)).at(-1);
  if (twin) {
    await setQuestionGroup(em, question.itemType, question.itemId, twin.group_id);
    await refreshGroups(em, workspaceId, [twin.group_id], new Map());
    return;
  }
  const points = words.points(
    [...all.map((m) => fromBytes(m.vec)), question.vector],
    await words.wordsOf(em, [...all.map((m) => m.question), question.text]),
    model,
  );
  const askedAt = points.length - 1;
  const similarity = oncePerText(
    all.map((m) => m.question),
    pairSimilarity(points, (w) => words.vector(w)),
  );
  // The free questions and the new one (point `askedAt`), clustered afresh.
  const at = (c: number) => (c < freeMembers.length ? c : askedAt);
  const clustered = freeMembers.length + 1;
  const matrix = await similarities(clustered, (i, j) => similarity(at(i), at(j)));
  const cluster = averageLink(clustered, (i, j) => matrix[i * clustered + j], JOIN_LINK);
  const mates = freeMembers.map((_, i) => i).filter((i) => cluster[i] === cluster[clustered - 1]);
  const ownLink = mates.length ? mean(mates.map((i) => similarity(askedAt, i))) : -Infinity;
  const proposedLink = bestProposedGroup(proposed, proposedMembers, (i) => similarity(askedAt, freeMembers.length + i));
  const seen = await questionSeenAt(em, question.itemType, question.itemId);
  if (proposedLink && proposedLink.link >= JOIN_LINK && proposedLink.link > ownLink) {
    await setQuestionGroup(em, question.itemType, question.itemId, proposedLink.group.id);
    await refreshGroups(em, workspaceId, [proposedLink.group.id], new Map());
    cluster[clustered - 1] = -1; // not among the free clusters
  }
  const clusteredPoints = Array.from({ length: clustered }, (_, c) => points[at(c)]);
  await applyClusters(em, question, seen, { members: freeMembers, cluster, points: clusteredPoints }, nearestArticle);
}

/** The group with a proposal the question is most like (mean similarity to its newest questions; `toAsked(i)` of its i-th member), if any. */
function bestProposedGroup(groups: GroupRow[], members: MemberRow[], toAsked: (i: number) => number) {
  let best: { group: GroupRow; link: number } | null = null;
  for (const group of groups) {
    const mine = members.map((m, i) => (m.group_id === group.id ? i : -1)).filter((i) => i >= 0);
    if (!mine.length) continue;
    const link = mean(mine.map(toAsked));
    if (!best || link > best.link) best = { group, link };
  }
  return best;
}

/**
 * Writes the free clusters: each takes the id of the group most of its questions come from (the
 * older group on a tie, each group once) or becomes a new group; questions that changed groups move,
 * and every group touched is recounted (deleted when left empty). The new question is the last
 * point; cluster -1 means it went elsewhere.
 */
async function applyClusters(
  em: EntityManager,
  question: QuestionToCluster,
  seen: string,
  state: { members: MemberRow[]; cluster: number[]; points: QuestionPoint[] },
  nearestArticle: (vector: number[]) => Promise<Neighbour[]>,
): Promise<void> {
  const { members, cluster, points } = state;
  const byCluster = new Map<number, number[]>();
  cluster.forEach((c, i) => c >= 0 && byCluster.set(c, [...(byCluster.get(c) ?? []), i]));
  // Largest clusters choose first; a cluster's group is the one holding most of its questions.
  const order = [...byCluster.entries()].sort((a, b) => b[1].length - a[1].length || a[0] - b[0]);
  const claimed = new Set<number>();
  const moves: QuestionMove[] = [];
  const centroids = new Map<number, number[]>();
  const touched = new Set<number>();
  for (const [, indexes] of order) {
    const votes = new Map<number, number>();
    for (const i of indexes) if (i < members.length) votes.set(members[i].group_id, (votes.get(members[i].group_id) ?? 0) + 1);
    const choice = [...votes.entries()].filter(([g]) => !claimed.has(g)).sort((a, b) => b[1] - a[1] || a[0] - b[0])[0];
    const groupId = choice
      ? choice[0]
      : await newGroup(em, question, seen, points[indexes[0]], indexes[0] < members.length ? members[indexes[0]] : null, nearestArticle);
    claimed.add(groupId);
    touched.add(groupId);
    centroids.set(groupId, meanVector(indexes.map((i) => points[i].vector)));
    for (const i of indexes) {
      if (i === members.length) moves.push({ itemType: question.itemType, itemId: question.itemId, groupId });
      else if (members[i].group_id !== groupId) {
        touched.add(members[i].group_id);
        moves.push({ itemType: members[i].item_type, itemId: members[i].item_id, groupId });
      }
    }
  }
  await moveQuestions(em, moves);
  await refreshGroups(em, question.workspaceId, [...touched], centroids);
}

/** A new group for a cluster, named by its first question (the earliest), with the nearest article to it. */
async function newGroup(
  em: EntityManager,
  question: QuestionToCluster,
  seen: string,
  first: QuestionPoint,
  member: MemberRow | null,
  nearestArticle: (vector: number[]) => Promise<Neighbour[]>,
): Promise<number> {
  const [nearest] = await nearestArticle(Array.from(first.vector));
  const slug = nearest && nearest.similarity >= NEAREST_ARTICLE_FLOOR ? await slugById(em, nearest.itemId) : null;
  return insertGroup(em, {
    workspaceId: question.workspaceId,
    label: (member ? member.question : question.text).slice(0, QUESTION_KEEP),
    centroid: Array.from(first.vector),
    isReport: (member ? member.item_type : question.itemType) === 'gap',
    seen,
    nearestArticleSlug: slug,
  });
}

/** The same question in the same words: case and runs of white space aside. */
function sameWords(a: string, b: string): boolean {
  return wording(a) === wording(b);
}

const wording = (text: string) => text.trim().toLowerCase().replace(/\s+/g, ' ');

/**
 * `similarity` computed once per pair of distinct texts (the point after `texts`, the new question,
 * is distinct from all): a question asked many times is many points of one text, and its pairs need
 * no second comparison. The points of one text are identical (one model's vector, the same words).
 */
function oncePerText(texts: string[], similarity: (i: number, j: number) => number): (i: number, j: number) => number {
  const ids = new Map<string, number>();
  const firstOf: number[] = [];
  const idOf = texts.map((text, i) => {
    let id = ids.get(text);
    if (id === undefined) {
      ids.set(text, (id = firstOf.length));
      firstOf.push(i);
    }
    return id;
  });
  idOf.push(firstOf.length);
  firstOf.push(texts.length);
  const n = firstOf.length;
  const known = new Float64Array(n * n).fill(NaN);
  return (i, j) => {
    const [a, b] = [idOf[i], idOf[j]];
    const key = a < b ? a * n + b : b * n + a;
    let s = known[key];
    if (s !== s) known[key] = s = similarity(firstOf[a], firstOf[b]); // NaN: not compared yet
    return s;
  };
}

const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;

function meanVector(vectors: Float32Array[]): number[] {
  const out = new Array<number>(vectors[0].length).fill(0);
  for (const v of vectors) for (let i = 0; i < v.length; i++) out[i] += v[i] / vectors.length;
  return out;
}

/**
 * Time the pairwise similarities run before other work on this thread gets a turn: a request's
 * every step (each database answer) may wait up to that long behind a slice, and a search takes
 * half a dozen steps. 2 ms keeps that wait small; a yield costs microseconds.
 */
const SLICE_MS = 2;

/**
 * The similarities of `n` points (row i, columns above i), computed in slices of about SLICE_MS
 * that let the event loop run between them: at 400 questions of 1,500 distinct words they take
 * ~0.2 s, and this runs on the thread that answers requests at every question that arrives.
 */
async function similarities(n: number, similarity: (i: number, j: number) => number): Promise<Float64Array> {
  const matrix = new Float64Array(n * n);
  let slice = performance.now();
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) matrix[i * n + j] = similarity(i, j);
    if (performance.now() - slice > SLICE_MS) {
      await new Promise((resolve) => setImmediate(resolve));
      slice = performance.now();
    }
  }
  return matrix;
}
