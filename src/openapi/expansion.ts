import { rejectSpec } from './rejection.js';

/**
 * The most nodes a document may expand to once its internal `$ref`s are followed: the whole
 * document plus, per operation, its path item's parameters and the operation object (what
 * dereferencing, validation, hashing and rendering walk). The 2,000-operation spec of the test
 * suite expands to 0.12 M; real specs of up to 4 MB and 1,100 operations to 0.1–10.4 M; hostile
 * ones grow exponentially. At the budget a document takes up to ~10 s of the worker's 20 s.
 */
export const SPEC_EXPANSION_BUDGET = 20_000_000;

/** The deepest nesting (after expansion) accepted: recursive walkers must never hit the stack limit. */
export const SPEC_MAX_DEPTH = 500;

/** A string weighs one node per this many characters, so a huge text copied by many references counts. */
const CHARS_PER_NODE = 64;

/** How many `$ref` hops a pointer may pass through while being resolved. */
const MAX_POINTER_HOPS = 64;

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

type Container = Record<string, unknown> | unknown[];

/** Rejects a document whose expansion exceeds `budget` nodes or `SPEC_MAX_DEPTH` levels; answers its size. */
export function checkExpansion(doc: Record<string, unknown>, budget = SPEC_EXPANSION_BUDGET): number {
  const sizes = new ExpansionSizes(doc, budget);
  let total = sizes.of(doc);
  for (const { item, op } of operationsOf(doc, sizes)) {
    total += sizes.of(op) + (isContainer(item.parameters) ? sizes.of(item.parameters) : 0);
    if (total > budget) throw overBudget(budget);
  }
  return total;
}

/** The operation objects of a document before dereferencing (a path item may itself be a `$ref`). */
function operationsOf(doc: Record<string, unknown>, sizes: ExpansionSizes): { item: Record<string, unknown>; op: Container }[] {
  const found: { item: Record<string, unknown>; op: Container }[] = [];
  const paths = sizes.follow(doc.paths);
  if (!isRecord(paths)) return found;
  for (const raw of Object.values(paths)) {
    const item = sizes.follow(raw);
    if (!isRecord(item)) continue;
    for (const method of METHODS) {
      const op = item[method];
      if (isContainer(op)) found.push({ item, op });
    }
  }
  return found;
}

interface Frame {
  node: Container;
  kids: unknown[];
  next: number;
  total: number;
}

/**
 * Expanded sizes of the nodes of one document, memoised per node (a shared target is walked once).
 * A `$ref` to a node still being walked is a cycle: it counts as a leaf, as the dereferencer leaves
 * such a `$ref` in place. Iterative, so a deeply nested document cannot overflow the stack.
 */
class ExpansionSizes {
  private readonly sizes = new Map<Container, number>();
  private readonly targets = new Map<string, unknown>();
  private resolving = 0;

  constructor(
    private readonly root: Record<string, unknown>,
    private readonly budget: number,
  ) {}

  /** The expanded size of a value. */
  of(start: unknown): number {
    if (!isContainer(start)) return weight(start);
    const known = this.sizes.get(start);
    if (known !== undefined) return known;
    const open = new Set<Container>();
    const stack: Frame[] = [];
    const enter = (node: Container) => {
      if (stack.length >= SPEC_MAX_DEPTH) throw tooDeep();
      open.add(node);
      stack.push({ node, kids: this.children(node), next: 0, total: 1 });
    };
    enter(start);
    for (;;) {
      const top = stack[stack.length - 1];
      if (top.next < top.kids.length) {
        const kid = top.kids[top.next++];
        const size = isContainer(kid) ? (this.sizes.get(kid) ?? (open.has(kid) ? 1 : -1)) : weight(kid);
        if (size < 0) enter(kid as Container);
        else this.add(top, size);
        continue;
      }
      stack.pop();
      open.delete(top.node);
      this.sizes.set(top.node, top.total);
      if (!stack.length) return top.total;
      this.add(stack[stack.length - 1], top.total);
    }
  }

  /** The target of a value when it is an internal `$ref` (followed through chains), else the value. */
  follow(value: unknown): unknown {
    let current = value;
    for (let hops = 0; hops < MAX_POINTER_HOPS && isRef(current); hops++) current = this.resolve(current.$ref);
    return current;
  }

  private add(frame: Frame, size: number): void {
    frame.total += size;
    if (frame.total > this.budget) throw overBudget(this.budget);
  }

  /** What a node expands into: a `$ref`'s target plus its sibling keys, else its own values. */
  private children(node: Container): unknown[] {
    if (Array.isArray(node)) return node;
    if (!isRef(node)) return Object.values(node);
    const kids: unknown[] = [this.resolve(node.$ref)];
    for (const key of Object.keys(node)) if (key !== '$ref') kids.push(node[key]);
    return kids;
  }

  /** The node an internal pointer (`#/a/b`) designates; undefined when it designates nothing. */
  private resolve(ref: string): unknown {
    if (this.targets.has(ref)) return this.targets.get(ref);
    // Pointers through pointers recurse: past a few hops (or in a loop) the pointer designates nothing.
    if (this.resolving >= MAX_POINTER_HOPS) return undefined;
    this.targets.set(ref, undefined);
    this.resolving++;
    try {
      const target = this.walkPointer(ref);
      this.targets.set(ref, target);
      return target;
    } finally {
      this.resolving--;
    }
  }

  private walkPointer(ref: string): unknown {
    let current: unknown = this.root;
    for (const token of pointerTokens(ref)) {
      current = this.follow(current);
      if (!isContainer(current) || !Object.hasOwn(current, token)) return undefined;
      current = (current as Record<string, unknown>)[token];
    }
    return current;
  }
}

/** The decoded tokens of a `#/…` pointer (`~1` is `/`, `~0` is `~`); none for anything else. */
function pointerTokens(ref: string): string[] {
  if (ref === '#' || ref === '#/') return [];
  if (!ref.startsWith('#/')) return [];
  return ref
    .slice(2)
    .split('/')
    .map((token) => {
      let decoded = token;
      try {
        decoded = decodeURIComponent(token);
      } catch {
        // A malformed escape is kept as written; the pointer then simply designates nothing.
      }
      return decoded.replaceAll('~1', '/').replaceAll('~0', '~');
    });
}

function weight(value: unknown): number {
  return typeof value === 'string' ? 1 + Math.floor(value.length / CHARS_PER_NODE) : 1;
}

function isContainer(value: unknown): value is Container {
  return typeof value === 'object' && value !== null;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return isContainer(value) && !Array.isArray(value);
}

/** An internal `$ref` object (external ones are never resolved, so they count as plain objects). */
function isRef(value: unknown): value is Record<string, unknown> & { $ref: string } {
  return isRecord(value) && typeof value.$ref === 'string' && value.$ref.startsWith('#');
}

function overBudget(budget: number) {
  const limit = budget.toLocaleString('en-US');
  return rejectSpec(
    `The spec expands to more than ${limit} nodes once its $refs are followed (the limit is ${limit}).`,
    `expands to more than ${limit} nodes once its $refs are followed (limit ${limit})`,
  );
}

function tooDeep() {
  return rejectSpec(
    `The spec is nested more than ${SPEC_MAX_DEPTH} levels deep once its $refs are followed (the limit is ${SPEC_MAX_DEPTH}).`,
    `is nested more than ${SPEC_MAX_DEPTH} levels deep once its $refs are followed (limit ${SPEC_MAX_DEPTH})`,
  );
}
